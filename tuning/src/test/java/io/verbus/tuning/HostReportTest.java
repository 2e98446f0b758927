package io.verbus.tuning;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The report against the three fake hosts, line by line: each item's status, what it found and its fix.
 */
class HostReportTest
{
    @TempDir
    Path root;

    private static HostReport report(final FakeHost host, final HostTools tools, final CpuSet cpus, final JvmFlags jvm)
    {
        return HostReport.run(new CheckContext(host.fs(), tools, RingSizing.defaults(), cpus, jvm));
    }

    private static void assertLine(
        final CheckResult line, final Status status, final String item, final String detailPart, final String fixPart)
    {
        final String text = line.toLine();
        assertEquals(item, line.item(), text);
        assertEquals(status, line.status(), text);
        assertTrue(line.detail().contains(detailPart), () -> "detail lacks '" + detailPart + "': " + text);
        assertTrue(line.fix().contains(fixPart), () -> "fix lacks '" + fixPart + "': " + text);
        assertTrue(text.startsWith(status.label()), text);
        assertTrue(text.contains(" -> fix: "), text);
    }

    @Test
    void shouldReportEveryItemOkOnWellTunedHost()
    {
        final HostReport report = report(
            FakeHost.goodHost(root), FakeHost.goodHostTools(), CpuSet.parse("2-3"), FakeHost.goodJvmFlags());
        final List<CheckResult> lines = report.results();

        int i = 0;
        assertLine(lines.get(i++), Status.OK, "cpu.governor", "performance on CPUs 0-7", "none");
        assertLine(lines.get(i++), Status.OK, "cpu.isolcpus", "CPUs 2-3 isolated, covering pinned CPUs 2-3", "none");
        assertLine(lines.get(i++), Status.OK, "cpu.nohz_full", "tickless on CPUs 2-3", "none");
        assertLine(lines.get(i++), Status.OK, "cpu.rcu_nocbs", "no RCU callbacks on CPUs 2-3", "none");
        assertLine(lines.get(i++), Status.OK, "cpu.cstates",
            "deepest enabled idle state C1 exits in 2 us (limit 2 us)", "none");
        assertLine(lines.get(i++), Status.OK, "mem.thp", "enabled=madvise, defrag=madvise", "none");
        assertLine(lines.get(i++), Status.OK, "mem.damon", "no DAMON worker running", "none");
        assertLine(lines.get(i++), Status.OK, "mem.hugepages-2M",
            "512 reserved, 512 free (1 GiB) covers the rings' 48 MiB (assumed term-length 16m x 3 partitions x 1 " +
            "subscriber)", "none");
        assertLine(lines.get(i++), Status.OK, "mem.hugepages-1G", "not needed, 2 MiB pages cover the rings", "none");
        assertLine(lines.get(i++), Status.OK, "mem.hugetlbfs", "/dev/hugepages (pagesize=2M)", "none");
        assertLine(lines.get(i++), Status.OK, "mem.memlock", "unlimited, rings need 48 MiB", "none");
        assertLine(lines.get(i++), Status.OK, "numa.nodes", "2 nodes: node0 CPUs 0-3, node1 CPUs 4-7", "none");
        assertLine(lines.get(i++), Status.OK, "numa.mlx5_0", "mlx5_0 on node 0 (CPUs 0-3), pinned CPUs 2-3 are local",
            "none");
        assertLine(lines.get(i++), Status.OK, "numa.mlx5_1", "mlx5_1 on node 0", "none");
        assertLine(lines.get(i++), Status.OK, "irq.mlx5_0", "3 IRQs on CPUs 0-1, none on latency CPUs 2-3", "none");
        assertLine(lines.get(i++), Status.OK, "irq.mlx5_1", "2 IRQs on CPUs 0-1, none on latency CPUs 2-3", "none");
        assertLine(lines.get(i++), Status.OK, "rdma.mlx5_0/1", "ACTIVE (LinkUp), InfiniBand, 100 Gb/sec (4X EDR)",
            "none");
        assertLine(lines.get(i++), Status.OK, "mtu.mlx5_0/1", "active MTU 4096 (ibv_devinfo)", "none");
        assertLine(lines.get(i++), Status.OK, "rdma.mlx5_1/1", "ACTIVE (LinkUp), Ethernet, 100 Gb/sec (4X EDR), " +
            "RoCE v2 GIDs [1]", "none");
        assertLine(lines.get(i++), Status.OK, "mtu.mlx5_1/1", "ens1f1 MTU 9000 -> RoCE active MTU 4096", "none");
        assertLine(lines.get(i++), Status.OK, "roce.mlx5_1/1", "ECN (DCQCN) on priorities [3]; PFC on priorities [3]",
            "none");
        assertLine(lines.get(i++), Status.OK, "rdma.preferred", "verbs would use mlx5_0/1 (InfiniBand", "none");
        assertLine(lines.get(i++), Status.ABSENT, "nic.eee.ib0", "ib0 is IPoIB", "none");
        assertLine(lines.get(i++), Status.OK, "nic.eee.ens1f1", "EEE disabled on ens1f1 (ethtool)", "none");
        assertLine(lines.get(i++), Status.OK, "jvm.flags",
            "--jvm-flags: -Xms4g -Xmx4g -XX:+AlwaysPreTouch -XX:+UseLargePages (+1 module/access flags)", "none");
        assertEquals(i, lines.size(), () -> String.join("\n", report.lines()));

        assertEquals(HostReport.EXIT_OK, report.exitCode());
        assertTrue(lines.stream().allMatch((line) -> line.commands().isEmpty()));
    }

    @Test
    void shouldWarnAndFailWithConcreteFixesOnBadHost()
    {
        final HostReport report = report(
            FakeHost.badHost(root), FakeHost.badHostTools(), CpuSet.parse("2-3"), JvmFlags.of("-Xmx4g"));
        final List<CheckResult> lines = report.results();

        int i = 0;
        assertLine(lines.get(i++), Status.WARN, "cpu.governor", "performance on CPUs 2-3, powersave on CPUs 0-1",
            "echo performance > \"$g\"");
        assertEquals(List.of(CpuGovernorCheck.FIX_COMMAND), lines.get(i - 1).commands());
        assertLine(lines.get(i++), Status.WARN, "cpu.isolcpus", "no isolated CPUs",
            "sed -i 's/^GRUB_CMDLINE_LINUX=\"/&isolcpus=2-3 /' /etc/default/grub && update-grub && reboot");
        assertLine(lines.get(i++), Status.WARN, "cpu.nohz_full", "not set (no /sys/devices/system/cpu/nohz_full",
            "&nohz_full=2-3 /");
        assertLine(lines.get(i++), Status.WARN, "cpu.rcu_nocbs", "not set", "&rcu_nocbs=2-3 /");
        assertLine(lines.get(i++), Status.WARN, "cpu.cstates",
            "C1E (10 us exit) on CPUs 0-3, C6 (133 us exit) on CPUs 0-3", "cpuidle/state2/disable");
        assertEquals(List.of(
            "for d in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state2/disable; do echo 1 > \"$d\"; done",
            "for d in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state3/disable; do echo 1 > \"$d\"; done"),
            lines.get(i - 1).commands());
        assertLine(lines.get(i++), Status.WARN, "mem.thp", "enabled=always, defrag=always",
            "echo madvise > /sys/kernel/mm/transparent_hugepage/enabled; " +
            "echo madvise > /sys/kernel/mm/transparent_hugepage/defrag");
        assertLine(lines.get(i++), Status.WARN, "mem.damon", "kdamond 0, damon_reclaim running",
            "if nothing on this host needs it: echo off > /sys/kernel/mm/damon/admin/kdamonds/0/state; " +
            "echo N > /sys/module/damon_reclaim/parameters/enabled; else keep the spinning threads on isolated cores");
        assertTrue(lines.get(i - 1).commands().isEmpty(), "whoever started DAMON may need it: manual");
        assertLine(lines.get(i++), Status.WARN, "mem.hugepages-2M",
            "0 reserved, 0 free (0 B) short of the rings' 48 MiB (assumed term-length 16m x 3 partitions",
            "echo 24 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages");
        assertLine(lines.get(i++), Status.ABSENT, "mem.hugepages-1G", "no 1 GiB pages", "2 MiB pages serve");
        assertLine(lines.get(i++), Status.WARN, "mem.hugetlbfs", "no hugetlbfs mount",
            "mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages");
        assertLine(lines.get(i++), Status.FAIL, "mem.memlock", "64 KiB vs rings' 48 MiB (assumed term-length 16m",
            "memlock unlimited");
        assertTrue(lines.get(i - 1).commands().isEmpty(), "a limits.d change needs a re-login: manual");
        assertLine(lines.get(i++), Status.OK, "numa.nodes", "1 node: node0 CPUs 0-3", "none");
        assertLine(lines.get(i++), Status.OK, "numa.mlx5_0", "mlx5_0 on node 0 (CPUs 0-3), pinned CPUs 2-3 are local",
            "none");
        assertLine(lines.get(i++), Status.OK, "numa.mlx5_1", "mlx5_1 on node 0", "none");
        assertLine(lines.get(i++), Status.WARN, "irq.mlx5_0", "2 of 2 IRQs of mlx5_0 land on latency CPUs 2-3",
            "systemctl stop irqbalance; for i in 120 121; do echo 0-1 > /proc/irq/$i/smp_affinity_list; done");
        assertLine(lines.get(i++), Status.OK, "irq.mlx5_1", "1 IRQs on CPUs 0, none on latency CPUs 2-3", "none");
        assertLine(lines.get(i++), Status.WARN, "rdma.mlx5_0/1", "DOWN (Disabled), Ethernet, 10 Gb/sec",
            "ip link set dev ens1f0 up");
        assertLine(lines.get(i++), Status.WARN, "mtu.mlx5_0/1", "ens1f0 MTU 1500 -> RoCE active MTU 1024",
            "ip link set dev ens1f0 mtu 9000");
        assertLine(lines.get(i++), Status.WARN, "roce.mlx5_0/1",
            "ECN not exposed in sysfs by this driver (mlx5_core); PFC not in sysfs and 'dcb pfc show dev ens1f0' " +
            "unavailable: not verified", "dcb pfc set dev ens1f0 prio-pfc 3:on");
        assertTrue(lines.get(i - 1).commands().isEmpty(), "PFC/ECN must match the switch: manual");
        assertLine(lines.get(i++), Status.WARN, "rdma.mlx5_1/1", "INIT (LinkUp), InfiniBand, 56 Gb/sec (4X FDR): " +
            "link is up but no subnet manager", "systemctl start opensm");
        assertLine(lines.get(i++), Status.WARN, "mtu.mlx5_1/1", "active MTU not verified",
            "read it: ibv_devinfo -d mlx5_1 -i 1 | grep active_mtu");
        assertLine(lines.get(i++), Status.FAIL, "rdma.preferred", "RDMA devices [mlx5_0, mlx5_1] but no ACTIVE port",
            "ibv_devinfo");
        assertLine(lines.get(i++), Status.WARN, "nic.eee.ens1f0", "EEE enabled on ens1f0 (ethtool)",
            "ethtool --set-eee ens1f0 eee off");
        assertLine(lines.get(i++), Status.WARN, "jvm.flags", "--jvm-flags: -Xmx4g; missing -XX:+AlwaysPreTouch -Xms4g",
            "VERBUS_JAVA_OPTS=\"-XX:+AlwaysPreTouch -Xms4g\" ./verbus <command>");
        assertEquals(i, lines.size(), () -> String.join("\n", report.lines()));

        assertEquals(2, report.count(Status.FAIL));
        assertEquals(HostReport.EXIT_FAIL, report.exitCode());
    }

    @Test
    void shouldReportAbsentItemsAsSuchOnHostWithoutRdma()
    {
        final HostReport report = report(
            FakeHost.noRdmaHost(root), HostTools.NONE, CpuSet.EMPTY, JvmFlags.of("-XX:+AlwaysPreTouch"));
        final List<CheckResult> lines = report.results();

        int i = 0;
        assertLine(lines.get(i++), Status.ABSENT, "cpu.governor", "no cpufreq", "BIOS power profile");
        assertLine(lines.get(i++), Status.WARN, "cpu.isolcpus", "no isolated CPUs", "&isolcpus=1 /");
        assertLine(lines.get(i++), Status.WARN, "cpu.nohz_full", "not set", "&nohz_full=1 /");
        assertLine(lines.get(i++), Status.WARN, "cpu.rcu_nocbs", "not set", "&rcu_nocbs=1 /");
        assertLine(lines.get(i++), Status.ABSENT, "cpu.cstates", "no cpuidle states (driver: none)",
            "intel_idle.max_cstate=1");
        assertLine(lines.get(i++), Status.OK, "mem.thp", "enabled=madvise", "none");
        assertLine(lines.get(i++), Status.ABSENT, "mem.damon", "no DAMON in this kernel", "none");
        assertLine(lines.get(i++), Status.WARN, "mem.hugepages-2M", "0 reserved, 0 free", "echo 24 >");
        assertLine(lines.get(i++), Status.OK, "mem.hugepages-1G", "not needed for rings under 1 GiB", "none");
        assertLine(lines.get(i++), Status.WARN, "mem.hugetlbfs", "no hugetlbfs mount", "mount -t hugetlbfs");
        assertLine(lines.get(i++), Status.WARN, "mem.memlock",
            "8 MiB vs rings' 48 MiB (assumed term-length 16m x 3 partitions x 1 subscriber): too small to register " +
            "the rings once an RDMA NIC is used", "LimitMEMLOCK=infinity");
        assertLine(lines.get(i++), Status.OK, "numa.nodes", "1 node: node0 CPUs 0-1", "none");
        assertLine(lines.get(i++), Status.ABSENT, "numa.nic", "no RDMA NIC", "none");
        assertLine(lines.get(i++), Status.ABSENT, "irq.nic", "no RDMA NIC", "none");
        assertLine(lines.get(i++), Status.ABSENT, "rdma.devices", "no RDMA device in /sys/class/infiniband",
            "rdma link add rxe0 type rxe netdev eth0");
        assertLine(lines.get(i++), Status.ABSENT, "nic.eee.eth0", "virtual NIC (virtio_net)", "none");
        assertLine(lines.get(i++), Status.OK, "jvm.flags", "-XX:+AlwaysPreTouch", "none");
        assertEquals(i, lines.size(), () -> String.join("\n", report.lines()));

        assertFalse(report.hasFailures(), "absent things are never errors");
        assertEquals(HostReport.EXIT_OK, report.exitCode());
    }

    @Test
    void shouldSayEeeIsUnverifiedWhenEthtoolCannotRun()
    {
        final HostReport report = report(FakeHost.badHost(root), HostTools.NONE, CpuSet.EMPTY, JvmFlags.of(""));
        final CheckResult eee = find(report, "nic.eee.ens1f0");

        assertEquals(Status.WARN, eee.status());
        assertTrue(eee.detail().startsWith("not verified"), eee.toLine());
        assertEquals("read: ethtool --show-eee ens1f0; if enabled: ethtool --set-eee ens1f0 eee off", eee.fix());
        assertTrue(eee.commands().isEmpty(), "an unverified EEE is not switched off blindly");
    }

    @Test
    void shouldWarnWhenPinnedCpusAreOffTheNicsNodeAndMoveIrqsToItsHousekeepingCpus()
    {
        final FakeHost host = FakeHost.goodHost(root).irq(121, "2");
        final HostReport report = report(host, FakeHost.goodHostTools(), CpuSet.parse("5-6"), FakeHost.goodJvmFlags());

        final CheckResult numa = find(report, "numa.mlx5_0");
        assertEquals(Status.WARN, numa.status(), numa.toLine());
        assertTrue(numa.detail().contains("pinned CPUs 5-6 are on another node"), numa.toLine());
        assertTrue(numa.fix().contains("--cpus 1-3") && numa.fix().contains("numactl --cpunodebind=0 --membind=0"),
            numa.toLine());

        final CheckResult irq = find(report, "irq.mlx5_0");
        assertEquals(Status.WARN, irq.status(), irq.toLine());
        assertEquals(List.of("for i in 121; do echo 0-1 > /proc/irq/$i/smp_affinity_list; done"), irq.commands());

        final CheckResult isolcpus = find(report, "cpu.isolcpus");
        assertEquals(Status.WARN, isolcpus.status(), isolcpus.toLine());
        assertTrue(isolcpus.detail().contains("pinned CPUs 5-6 are not"), isolcpus.toLine());
    }

    @Test
    void shouldPreferInfiniBandThenRoceThenSoftwareDevices()
    {
        final FakeHost host = new FakeHost(root)
            .file("/sys/class/infiniband/rxe0/parent", "eth0")
            .port("rxe0", 1, "4: ACTIVE", "5: LinkUp", "Ethernet", "10 Gb/sec (1X QDR)")
            .gid("rxe0", 1, 1, "RoCE v2", "eth0")
            .rdmaNic("mlx5_1", "0000:3b:00.1", 0, "0-3")
            .port("mlx5_1", 1, "4: ACTIVE", "5: LinkUp", "Ethernet", "100 Gb/sec (4X EDR)")
            .gid("mlx5_1", 1, 3, "RoCE v2", "ens1f1")
            .rdmaNic("mlx5_2", "0000:5e:00.0", 0, "0-3")
            .port("mlx5_2", 1, "4: ACTIVE", "5: LinkUp", "InfiniBand", "200 Gb/sec (4X HDR)");
        assertEquals("mlx5_2/1", RdmaInventory.scan(host.fs()).preferredPort().orElseThrow().name());

        host.file("/sys/class/infiniband/mlx5_2/ports/1/state", "1: DOWN");
        assertEquals("mlx5_1/1", RdmaInventory.scan(host.fs()).preferredPort().orElseThrow().name());

        host.file("/sys/class/infiniband/mlx5_1/ports/1/state", "1: DOWN");
        final RdmaInventory softOnly = RdmaInventory.scan(host.fs());
        assertEquals("rxe0/1", softOnly.preferredPort().orElseThrow().name());
        assertTrue(softOnly.devices().getFirst().soft() || softOnly.devices().getLast().soft());
    }

    @Test
    void shouldWarnThatSoftRoceIsNotALatencyDevice()
    {
        final FakeHost host = FakeHost.noRdmaHost(root)
            .file("/sys/class/infiniband/rxe0/parent", "eth0")
            .port("rxe0", 1, "4: ACTIVE", "5: LinkUp", "Ethernet", "10 Gb/sec (1X QDR)")
            .gid("rxe0", 1, 1, "RoCE v2", "eth0");
        final HostReport report = report(host, HostTools.NONE, CpuSet.EMPTY, JvmFlags.of(""));

        assertEquals(Status.WARN, find(report, "rdma.rxe0/1").status());
        assertEquals(Status.ABSENT, find(report, "roce.rxe0/1").status());
        assertEquals(Status.ABSENT, find(report, "irq.rxe0").status());
        final CheckResult mtu = find(report, "mtu.rxe0/1");
        assertEquals(Status.WARN, mtu.status());
        assertTrue(mtu.detail().contains("eth0 MTU 1400 -> RoCE active MTU 1024"), mtu.toLine());
        assertTrue(mtu.commands().isEmpty(), "never raise a VM NIC's MTU behind the user's back");
        final CheckResult preferred = find(report, "rdma.preferred");
        assertEquals(Status.WARN, preferred.status());
        assertTrue(preferred.detail().contains("verbs would use rxe0/1 (software RoCE v2 GID 1"), preferred.toLine());
        assertEquals(Status.FAIL, find(report, "mem.memlock").status(), "rxe pins registered memory like a NIC");
    }

    private static CheckResult find(final HostReport report, final String item)
    {
        return report.results().stream().filter((line) -> line.item().equals(item)).findFirst()
            .orElseThrow(() -> new AssertionError("no line " + item + " in\n" + String.join("\n", report.lines())));
    }
}
