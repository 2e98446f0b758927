package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.TreeSet;

/**
 * The RDMA lines: per port {@code rdma.<dev>/<n>} (state, link layer, rate), {@code mtu.<dev>/<n>} (active MTU) and,
 * on Ethernet, {@code roce.<dev>/<n>} (PFC and ECN); then {@code rdma.preferred}, the port Verbus's verbs provider
 * picks: InfiniBand first, then RoCE v2, then software devices.
 */
public final class RdmaPortCheck implements HostCheck
{
    static final String DEVICES = "rdma.devices";
    static final String PREFERRED = "rdma.preferred";

    /** Largest RDMA MTU; both InfiniBand and RoCE top out here. */
    static final int BEST_MTU = 4096;

    /**
     * RoCE v2 headers the kernel subtracts from the netdev MTU to get the RDMA MTU: GRH, UDP, BTH, extensions, ICRC.
     */
    static final int ROCE_HEADER_BYTES = 96;

    static final int JUMBO_MTU = 9000;

    /** The switch's lossless traffic class: priority 3 is the common RoCE convention. */
    static final int ROCE_PRIORITY = 3;

    public List<CheckResult> check(final CheckContext context)
    {
        final RdmaInventory rdma = context.rdma();
        if (rdma.isEmpty())
        {
            final String netdev = physicalNetdevs(context.fs()).stream().findFirst().orElse("eth0");
            return List.of(CheckResult.absent(DEVICES,
                "no RDMA device in /sys/class/infiniband: rdma channels need provider=tcp (across hosts) or shm " +
                "(one host), or provider=auto which falls back to them",
                "with a ConnectX: apt-get install rdma-core ibverbs-providers && modprobe mlx5_ib; " +
                "to try RDMA without one: modprobe rdma_rxe && rdma link add rxe0 type rxe netdev " + netdev));
        }

        final List<CheckResult> results = new ArrayList<>();
        for (final RdmaDevice device : rdma.devices())
        {
            if (device.ports().isEmpty())
            {
                results.add(CheckResult.manual(Status.WARN, "rdma." + device.name(),
                    device.name() + " shows no ports in sysfs", "ibv_devinfo -d " + device.name()));
            }
            for (final RdmaPort port : device.ports())
            {
                results.add(port(device, port));
                results.add(mtu(context, device, port));
                if (port.isEthernet())
                {
                    results.add(roce(context, device, port));
                }
            }
        }
        results.add(preferred(rdma));
        return results;
    }

    private static CheckResult port(final RdmaDevice device, final RdmaPort port)
    {
        final String item = "rdma." + port.name();
        final String found = port.state() + " (" + port.physicalState() + "), " + port.linkLayer() + ", " +
            port.rate() + (port.isEthernet() ? ", RoCE v2 GIDs " + (port.roceV2GidIndexes().isEmpty() ?
            "none" : port.roceV2GidIndexes().toString()) : "");
        if (!port.isActive())
        {
            if (port.isInfiniBand() && "INIT".equals(port.state()))
            {
                return CheckResult.manual(Status.WARN, item,
                    found + ": link is up but no subnet manager has configured the port",
                    "systemctl start opensm (or enable the subnet manager on the switch)");
            }
            if (port.isEthernet() && port.netdev().isPresent() && !device.soft())
            {
                return CheckResult.runnable(Status.WARN, item, found + ": port is not usable",
                    List.of("ip link set dev " + port.netdev().get() + " up"));
            }
            return CheckResult.manual(Status.WARN, item, found + ": port is not usable",
                "check the cable and switch port: ibstat " + port.device() + " " + port.number());
        }
        if (device.soft())
        {
            return CheckResult.manual(Status.WARN, item,
                found + ": software RDMA (" + device.name() + ") is correct but runs in the kernel network stack",
                "for latency use a hardware RDMA NIC; keep " + device.name() + " for functional tests");
        }
        if (port.isEthernet() && port.roceV2GidIndexes().isEmpty())
        {
            return CheckResult.manual(Status.WARN, item,
                found + ": no RoCE v2 GID, the netdev has no IP address for RoCE v2 to use",
                "ip addr add <address>/<prefix> dev " + port.netdev().orElse("<netdev>") +
                " (RoCE v2 GIDs follow the netdev's IP addresses)");
        }
        return CheckResult.ok(item, found);
    }

    private static CheckResult mtu(final CheckContext context, final RdmaDevice device, final RdmaPort port)
    {
        final String item = "mtu." + port.name();
        if (port.isInfiniBand())
        {
            final Optional<Integer> active = port.activeMtu().or(() -> ibvDevinfoActiveMtu(context, port));
            final String readCommand =
                "ibv_devinfo -d " + port.device() + " -i " + port.number() + " | grep active_mtu";
            if (active.isEmpty())
            {
                return CheckResult.manual(Status.WARN, item,
                    "active MTU not verified: this kernel's sysfs has no active_mtu and ibv_devinfo is not available",
                    "read it: " + readCommand + " (want " + BEST_MTU + ")");
            }
            final String source = port.activeMtu().isPresent() ? "sysfs" : "ibv_devinfo";
            if (active.get() >= BEST_MTU)
            {
                return CheckResult.ok(item, "active MTU " + active.get() + " (" + source + ")");
            }
            return CheckResult.manual(Status.WARN, item,
                "active MTU " + active.get() + " (" + source + "): the subnet manager's partition allows more",
                "set mtu=5 (4096) on the partition in /etc/opensm/partitions.conf " +
                "(Default=0x7fff, ipoib, mtu=5 : ALL=full;) and systemctl restart opensm");
        }

        if (port.netdev().isEmpty())
        {
            return CheckResult.manual(Status.WARN, item, "no netdev found for this " + port.linkLayer() + " port",
                "rdma link show " + port.device() + "/" + port.number());
        }
        final String netdev = port.netdev().get();
        final int netdevMtu = RdmaInventory.parseIntOrMinusOne(
            context.fs().read("/sys/class/net/" + netdev + "/mtu").orElse("-1"));
        if (netdevMtu < 0)
        {
            return CheckResult.manual(Status.WARN, item, "MTU of " + netdev + " unreadable", "ip link show " + netdev);
        }
        final int active = port.activeMtu().orElse(roceMtu(netdevMtu));
        final String found = netdev + " MTU " + netdevMtu + " -> RoCE active MTU " + active;
        if (active >= BEST_MTU)
        {
            return CheckResult.ok(item, found);
        }
        final String why = found + ": messages over " + active + " B split into more packets";
        final String command = "ip link set dev " + netdev + " mtu " + JUMBO_MTU;
        if (device.soft())
        {
            return CheckResult.manual(Status.WARN, item, why, command + " (only if every hop carries jumbo frames)");
        }
        return CheckResult.runnable(Status.WARN, item, why + " (the switch ports must carry jumbo frames too)",
            List.of(command));
    }

    private static CheckResult roce(final CheckContext context, final RdmaDevice device, final RdmaPort port)
    {
        final String item = "roce." + port.name();
        if (device.soft())
        {
            return CheckResult.absent(item, "software RoCE: PFC and ECN are settings of a hardware NIC and its switch",
                CheckResult.NO_FIX);
        }
        if (port.netdev().isEmpty())
        {
            return CheckResult.manual(Status.WARN, item, "no netdev found, PFC/ECN cannot be read",
                "rdma link show " + port.device() + "/" + port.number());
        }

        final String netdev = port.netdev().get();
        final String ecnDir = "/sys/class/net/" + netdev + "/ecn";
        final List<String> parts = new ArrayList<>();
        boolean ecnOn = false;
        if (context.fs().isDirectory(ecnDir))
        {
            final TreeSet<Integer> prios = new TreeSet<>();
            for (int prio = 0; prio < 8; prio++)
            {
                final boolean notification = "1".equals(
                    context.fs().read(ecnDir + "/roce_np/enable/" + prio).orElse("0"));
                final boolean reaction = "1".equals(context.fs().read(ecnDir + "/roce_rp/enable/" + prio).orElse("0"));
                if (notification && reaction)
                {
                    prios.add(prio);
                }
            }
            ecnOn = !prios.isEmpty();
            parts.add(ecnOn ? "ECN (DCQCN) on priorities " + prios : "ECN (DCQCN) off on every priority");
        }
        else
        {
            parts.add("ECN not exposed in sysfs by this driver (" + device.driver().orElse("unknown") + ")");
        }

        boolean pfcOn = false;
        final Optional<String> pfc = context.tools().run(List.of("dcb", "pfc", "show", "dev", netdev));
        if (pfc.isPresent())
        {
            final List<Integer> prios = pfcPriorities(pfc.get());
            pfcOn = !prios.isEmpty();
            parts.add(pfcOn ? "PFC on priorities " + prios : "PFC off on every priority");
        }
        else
        {
            parts.add("PFC not in sysfs and 'dcb pfc show dev " + netdev + "' unavailable: not verified");
        }

        final String found = String.join("; ", parts);
        if (ecnOn && pfcOn)
        {
            return CheckResult.ok(item, found);
        }
        return CheckResult.manual(Status.WARN, item,
            found + ": RoCE needs a lossless class (PFC) or ECN congestion control, or drops cost retransmit timeouts",
            "dcb pfc set dev " + netdev + " prio-pfc " + ROCE_PRIORITY + ":on; for f in roce_np roce_rp; do echo 1 > " +
            ecnDir + "/$f/enable/" + ROCE_PRIORITY + "; done (priority " + ROCE_PRIORITY +
            " must match the switch's lossless class)");
    }

    private static CheckResult preferred(final RdmaInventory rdma)
    {
        final Optional<RdmaPort> preferred = rdma.preferredPort();
        final List<String> names = new ArrayList<>();
        rdma.devices().forEach((device) -> names.add(device.name()));
        if (preferred.isEmpty())
        {
            return CheckResult.manual(Status.FAIL, PREFERRED,
                "RDMA devices " + names + " but no ACTIVE port: rdma channels with provider=verbs cannot connect",
                "bring a port up (see the rdma.* lines), then check: ibv_devinfo");
        }

        final RdmaPort port = preferred.get();
        final RdmaDevice device = rdma.deviceOf(port);
        final String found = "verbs would use " + port.name() + " (" + (device.soft() ? "software " : "") +
            (port.isInfiniBand() ? "InfiniBand" : "RoCE v2 GID " + port.roceV2GidIndexes().getFirst()) +
            ", " + port.rate() + ")";
        if (device.soft())
        {
            return CheckResult.manual(Status.WARN, PREFERRED,
                found + ": only software RDMA is up, latency figures will be the kernel's, not a NIC's",
                "install a hardware RDMA NIC (InfiniBand preferred, RoCE v2 next)");
        }
        return CheckResult.ok(PREFERRED, found + (port.isInfiniBand() ? "" :
            "; no active InfiniBand port, RoCE v2 is second choice"));
    }

    /**
     * The RDMA MTU of a RoCE port: the largest IB MTU that fits the netdev MTU less the RoCE headers.
     */
    static int roceMtu(final int netdevMtu)
    {
        final int payload = netdevMtu - ROCE_HEADER_BYTES;
        for (int mtu = BEST_MTU; mtu >= 256; mtu /= 2)
        {
            if (payload >= mtu)
            {
                return mtu;
            }
        }
        return 0;
    }

    private static Optional<Integer> ibvDevinfoActiveMtu(final CheckContext context, final RdmaPort port)
    {
        return context.tools()
            .run(List.of("ibv_devinfo", "-d", port.device(), "-i", Integer.toString(port.number())))
            .flatMap((output) ->
            {
                for (final String line : output.split("\n"))
                {
                    final String trimmed = line.strip();
                    if (trimmed.startsWith("active_mtu:"))
                    {
                        return RdmaInventory.parseMtu(trimmed.substring("active_mtu:".length()));
                    }
                }
                return Optional.empty();
            });
    }

    /**
     * Parses {@code dcb pfc show} output such as {@code pfc-cap 8 macsec-bypass off delay 0\nprio-pfc 0:off 3:on}.
     */
    static List<Integer> pfcPriorities(final String output)
    {
        final List<Integer> prios = new ArrayList<>();
        for (final String token : output.split("\\s+"))
        {
            if (token.endsWith(":on"))
            {
                final int prio = RdmaInventory.parseIntOrMinusOne(token.substring(0, token.length() - 3));
                if (prio >= 0)
                {
                    prios.add(prio);
                }
            }
        }
        return prios;
    }

    /**
     * @return network interfaces backed by a device (not lo, bridges, veths), in name order.
     */
    static List<String> physicalNetdevs(final HostFs fs)
    {
        final List<String> netdevs = new ArrayList<>();
        for (final String name : fs.list("/sys/class/net"))
        {
            if (fs.exists("/sys/class/net/" + name + "/device"))
            {
                netdevs.add(name);
            }
        }
        return netdevs;
    }
}
