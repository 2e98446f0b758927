package io.verbus.tuning;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * Builds fake /sys and /proc trees under a temporary directory, the way the kernel lays them out, and the three
 * hosts the report tests use: a well-tuned host, a badly tuned one, and one without RDMA (like a CI VM).
 */
final class FakeHost
{
    private final Path root;

    FakeHost(final Path root)
    {
        this.root = root;
    }

    Path root()
    {
        return root;
    }

    HostFs fs()
    {
        return new HostFs(root);
    }

    FakeHost file(final String absolutePath, final String content)
    {
        final Path path = root.resolve(absolutePath.substring(1));
        try
        {
            Files.createDirectories(path.getParent());
            Files.writeString(path, content + "\n", StandardCharsets.UTF_8);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    FakeHost dir(final String absolutePath)
    {
        try
        {
            Files.createDirectories(root.resolve(absolutePath.substring(1)));
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    /**
     * A symbolic link inside the tree, as sysfs's device and driver links are; both paths are host paths.
     */
    FakeHost link(final String absolutePath, final String absoluteTarget)
    {
        final Path link = root.resolve(absolutePath.substring(1));
        final Path target = root.resolve(absoluteTarget.substring(1));
        try
        {
            Files.createDirectories(link.getParent());
            Files.createDirectories(target);
            if (!Files.exists(link, java.nio.file.LinkOption.NOFOLLOW_LINKS))
            {
                Files.createSymbolicLink(link, link.getParent().relativize(target));
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return this;
    }

    FakeHost cpus(final int count, final String governorOrNull)
    {
        file("/sys/devices/system/cpu/online", "0-" + (count - 1));
        for (int cpu = 0; cpu < count; cpu++)
        {
            dir("/sys/devices/system/cpu/cpu" + cpu + "/topology");
            if (null != governorOrNull)
            {
                file("/sys/devices/system/cpu/cpu" + cpu + "/cpufreq/scaling_governor", governorOrNull);
            }
        }
        return this;
    }

    FakeHost idleState(final int cpus, final int index, final String name, final int latencyUs, final boolean disabled)
    {
        for (int cpu = 0; cpu < cpus; cpu++)
        {
            final String dir = "/sys/devices/system/cpu/cpu" + cpu + "/cpuidle/state" + index;
            file(dir + "/name", name);
            file(dir + "/latency", Integer.toString(latencyUs));
            file(dir + "/disable", disabled ? "1" : "0");
        }
        return this;
    }

    FakeHost hugePages(final String sizeDir, final int total, final int free)
    {
        final String dir = "/sys/kernel/mm/hugepages/" + sizeDir;
        file(dir + "/nr_hugepages", Integer.toString(total));
        file(dir + "/free_hugepages", Integer.toString(free));
        file(dir + "/resv_hugepages", "0");
        return this;
    }

    FakeHost memlock(final String soft)
    {
        return file("/proc/self/limits", String.join("\n",
            "Limit                     Soft Limit           Hard Limit           Units     ",
            "Max cpu time              unlimited            unlimited            seconds   ",
            "Max locked memory         " + soft + "              " + soft + "              bytes     ",
            "Max address space         unlimited            unlimited            bytes     "));
    }

    /**
     * A hardware RDMA NIC: PCI function, driver link, NUMA node, local CPUs, and (optionally) its MSI-X IRQs.
     */
    FakeHost rdmaNic(final String name, final String pci, final int node, final String localCpus, final int... irqs)
    {
        final String pciDir = "/sys/devices/pci0000:00/" + pci;
        link("/sys/class/infiniband/" + name + "/device", pciDir);
        link(pciDir + "/driver", "/sys/bus/pci/drivers/mlx5_core");
        file(pciDir + "/numa_node", Integer.toString(node));
        file(pciDir + "/local_cpulist", localCpus);
        for (final int irq : irqs)
        {
            file(pciDir + "/msi_irqs/" + irq, "msix");
        }
        return this;
    }

    FakeHost port(final String device, final int port, final String state, final String physState,
        final String linkLayer, final String rate)
    {
        final String dir = "/sys/class/infiniband/" + device + "/ports/" + port;
        file(dir + "/state", state);
        file(dir + "/phys_state", physState);
        file(dir + "/link_layer", linkLayer);
        file(dir + "/rate", rate);
        return this;
    }

    FakeHost gid(final String device, final int port, final int index, final String type, final String netdev)
    {
        final String dir = "/sys/class/infiniband/" + device + "/ports/" + port + "/gid_attrs";
        file(dir + "/types/" + index, type);
        file(dir + "/ndevs/" + index, netdev);
        return this;
    }

    FakeHost netdev(final String name, final String pciOrNull, final String driver, final int mtu, final int type)
    {
        final String dir = "/sys/class/net/" + name;
        file(dir + "/mtu", Integer.toString(mtu));
        file(dir + "/type", Integer.toString(type));
        if (null != pciOrNull)
        {
            final String deviceDir = "/sys/devices/pci0000:00/" + pciOrNull;
            link(dir + "/device", deviceDir);
            link(deviceDir + "/driver", "/sys/bus/pci/drivers/" + driver);
            link(deviceDir + "/net/" + name, dir);
        }
        return this;
    }

    FakeHost irq(final int irq, final String affinity)
    {
        return file("/proc/irq/" + irq + "/smp_affinity_list", affinity);
    }

    /**
     * Every regular file's content and every link's target, to prove a dry run changed nothing.
     */
    Map<String, String> snapshot()
    {
        final Map<String, String> snapshot = new TreeMap<>();
        try (Stream<Path> paths = Files.walk(root))
        {
            for (final Path path : paths.toList())
            {
                final String key = root.relativize(path).toString();
                if (Files.isSymbolicLink(path))
                {
                    snapshot.put(key, "-> " + Files.readSymbolicLink(path));
                }
                else if (Files.isRegularFile(path))
                {
                    snapshot.put(key, Files.readString(path) + " @" + Files.getLastModifiedTime(path).toMillis());
                }
                else
                {
                    snapshot.put(key, "dir");
                }
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        return snapshot;
    }

    // ---------------------------------------------------------------------------------------------------------
    // The three hosts

    /**
     * Two nodes of 4 CPUs; CPUs 2-3 isolated, tickless, callback-free; only C1 usable; 512 x 2 MiB hugepages
     * mounted; memlock unlimited; mlx5_0 InfiniBand EDR on node 0 with its IRQs on CPUs 0-1; mlx5_1 RoCE v2 on
     * ens1f1 with jumbo MTU, ECN and PFC on priority 3, EEE off.
     */
    static FakeHost goodHost(final Path root)
    {
        final FakeHost host = new FakeHost(root)
            .cpus(8, "performance")
            .file("/sys/devices/system/cpu/isolated", "2-3")
            .file("/sys/devices/system/cpu/nohz_full", "2-3")
            .file("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 isolcpus=managed_irq,domain,2-3 " +
                "nohz_full=2-3 rcu_nocbs=2-3 intel_idle.max_cstate=1")
            .idleState(8, 0, "POLL", 0, false)
            .idleState(8, 1, "C1", 2, false)
            .idleState(8, 2, "C6", 133, true)
            .file("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
            .file("/sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never")
            .file("/sys/kernel/mm/damon/admin/kdamonds/0/state", "off")
            .hugePages("hugepages-2048kB", 512, 512)
            .hugePages("hugepages-1048576kB", 0, 0)
            .file("/proc/mounts",
                "sysfs /sys sysfs rw 0 0\nhugetlbfs /dev/hugepages hugetlbfs rw,relatime,pagesize=2M 0 0")
            .memlock("unlimited")
            .file("/sys/devices/system/node/node0/cpulist", "0-3")
            .file("/sys/devices/system/node/node1/cpulist", "4-7")
            .rdmaNic("mlx5_0", "0000:3b:00.0", 0, "0-3", 120, 121, 122)
            .port("mlx5_0", 1, "4: ACTIVE", "5: LinkUp", "InfiniBand", "100 Gb/sec (4X EDR)")
            .netdev("ib0", "0000:3b:00.0", "mlx5_core", 4092, 32)
            .irq(120, "0-1").irq(121, "0").irq(122, "1")
            .rdmaNic("mlx5_1", "0000:3b:00.1", 0, "0-3")
            .port("mlx5_1", 1, "4: ACTIVE", "5: LinkUp", "Ethernet", "100 Gb/sec (4X EDR)")
            .gid("mlx5_1", 1, 0, "IB/RoCE v1", "ens1f1")
            .gid("mlx5_1", 1, 1, "RoCE v2", "ens1f1")
            .netdev("ens1f1", "0000:3b:00.1", "mlx5_core", 9000, 1)
            .file("/proc/interrupts", String.join("\n",
                "            CPU0       CPU1       CPU2       CPU3",
                " 130:          5          0          0          0  IR-PCI-MSIX-0000:3b:00.1    0-edge      " +
                    "mlx5_async0@pci:0000:3b:00.1",
                " 131:          5          0          0          0  IR-PCI-MSIX-0000:3b:00.1    1-edge      " +
                    "mlx5_comp0@pci:0000:3b:00.1",
                " 140:          1          0          0          0  IR-PCI-MSIX-0000:00:1f.6    0-edge      eno1",
                "LOC:      21077      22268      100      100   Local timer interrupts"))
            .irq(130, "0").irq(131, "1").irq(140, "2");
        for (int prio = 0; prio < 8; prio++)
        {
            host.file("/sys/class/net/ens1f1/ecn/roce_np/enable/" + prio, prio == 3 ? "1" : "0");
            host.file("/sys/class/net/ens1f1/ecn/roce_rp/enable/" + prio, prio == 3 ? "1" : "0");
        }
        return host;
    }

    /**
     * Canned tool output for the good host: ibv_devinfo shows MTU 4096, dcb shows PFC on 3, ethtool EEE off.
     */
    static HostTools goodHostTools()
    {
        return (command) -> switch (String.join(" ", command))
        {
            case "ibv_devinfo -d mlx5_0 -i 1" -> Optional.of(
                "hca_id:\tmlx5_0\n\tport:\t1\n\t\tstate:\t\t\tPORT_ACTIVE (4)\n\t\tmax_mtu:\t\t4096 (5)\n" +
                "\t\tactive_mtu:\t\t4096 (5)\n\t\tlink_layer:\t\tInfiniBand\n");
            case "dcb pfc show dev ens1f1" -> Optional.of(
                "pfc-cap 8 macsec-bypass off delay 4096\nprio-pfc 0:off 1:off 2:off 3:on 4:off 5:off 6:off 7:off\n");
            case "ethtool --show-eee ens1f1" -> Optional.of(
                "EEE settings for ens1f1:\n\tEEE status: disabled\n\tTx LPI: disabled\n");
            default -> Optional.empty();
        };
    }

    static JvmFlags goodJvmFlags()
    {
        return new JvmFlags(List.of("-Xms4g", "-Xmx4g", "-XX:+AlwaysPreTouch", "-XX:+UseLargePages",
            "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED"), "--jvm-flags");
    }

    /**
     * One node of 4 CPUs, nothing tuned: mixed governors, deep C-states, THP always, no hugepages or hugetlbfs,
     * 64 KiB memlock, irqbalance running; mlx5_0 RoCE port down with MTU 1500, no ECN, IRQs on every CPU;
     * mlx5_1 InfiniBand port stuck in INIT (no subnet manager); EEE on.
     */
    static FakeHost badHost(final Path root)
    {
        return new FakeHost(root)
            .cpus(4, "performance")
            .file("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor", "powersave")
            .file("/sys/devices/system/cpu/cpu1/cpufreq/scaling_governor", "powersave")
            .file("/sys/devices/system/cpu/isolated", "")
            .file("/proc/cmdline", "BOOT_IMAGE=/vmlinuz root=/dev/sda1 quiet")
            .idleState(4, 0, "POLL", 0, false)
            .idleState(4, 1, "C1", 2, false)
            .idleState(4, 2, "C1E", 10, false)
            .idleState(4, 3, "C6", 133, false)
            .file("/sys/kernel/mm/transparent_hugepage/enabled", "[always] madvise never")
            .file("/sys/kernel/mm/transparent_hugepage/defrag", "[always] defer defer+madvise madvise never")
            .file("/sys/kernel/mm/damon/admin/kdamonds/0/state", "on")
            .file("/sys/kernel/mm/damon/admin/kdamonds/1/state", "off")
            .file("/sys/module/damon_reclaim/parameters/enabled", "Y")
            .hugePages("hugepages-2048kB", 0, 0)
            .file("/proc/mounts", "sysfs /sys sysfs rw 0 0\ntmpfs /dev/shm tmpfs rw 0 0")
            .memlock("65536")
            .file("/sys/devices/system/node/node0/cpulist", "0-3")
            .rdmaNic("mlx5_0", "0000:3b:00.0", 0, "0-3", 120, 121)
            .port("mlx5_0", 1, "1: DOWN", "3: Disabled", "Ethernet", "10 Gb/sec (1X QDR)")
            .gid("mlx5_0", 1, 0, "IB/RoCE v1", "ens1f0")
            .gid("mlx5_0", 1, 1, "RoCE v2", "ens1f0")
            .netdev("ens1f0", "0000:3b:00.0", "mlx5_core", 1500, 1)
            .irq(120, "0-3").irq(121, "0-3")
            .rdmaNic("mlx5_1", "0000:5e:00.0", 0, "0-3", 150)
            .port("mlx5_1", 1, "2: INIT", "5: LinkUp", "InfiniBand", "56 Gb/sec (4X FDR)")
            .irq(150, "0")
            .file("/proc/4242/comm", "irqbalance")
            .file("/proc/1/comm", "systemd");
    }

    static HostTools badHostTools()
    {
        return (command) -> switch (String.join(" ", command))
        {
            case "ethtool --show-eee ens1f0" -> Optional.of(
                "EEE settings for ens1f0:\n\tEEE status: enabled - active\n\tTx LPI: 17 (us)\n");
            default -> Optional.empty();
        };
    }

    /**
     * A 2-CPU VM like the CI machine: no cpufreq, no cpuidle driver, no RDMA, a virtio NIC, 8 MiB memlock.
     */
    static FakeHost noRdmaHost(final Path root)
    {
        return new FakeHost(root)
            .cpus(2, null)
            .file("/sys/devices/system/cpu/isolated", "")
            .file("/sys/devices/system/cpu/cpuidle/current_driver", "none")
            .file("/proc/cmdline", "console=ttyS0 quiet -- --init-flag")
            .file("/sys/kernel/mm/transparent_hugepage/enabled", "always [madvise] never")
            .file("/sys/kernel/mm/transparent_hugepage/defrag", "always defer defer+madvise [madvise] never")
            .hugePages("hugepages-2048kB", 0, 0)
            .hugePages("hugepages-1048576kB", 0, 0)
            .file("/proc/mounts", "proc /proc proc rw 0 0")
            .memlock("8388608")
            .file("/sys/devices/system/node/node0/cpulist", "0-1")
            .link("/sys/class/net/eth0/device", "/sys/devices/virtio2")
            .link("/sys/devices/virtio2/driver", "/sys/bus/virtio/drivers/virtio_net")
            .file("/sys/class/net/eth0/mtu", "1400")
            .file("/sys/class/net/lo/mtu", "65536");
    }
}
