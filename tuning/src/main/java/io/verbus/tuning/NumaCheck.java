package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * {@code numa.nodes} and {@code numa.<dev>}: the NUMA layout, which node each RDMA NIC sits on, and whether the
 * pinned CPUs are local to it. A thread polling a NIC on the far node pays the interconnect on every completion.
 */
public final class NumaCheck implements HostCheck
{
    static final String NODES = "numa.nodes";
    static final String NIC_PREFIX = "numa.";

    public List<CheckResult> check(final CheckContext context)
    {
        final List<CheckResult> results = new ArrayList<>();
        results.add(nodes(context));
        if (context.rdma().isEmpty())
        {
            results.add(CheckResult.absent(NIC_PREFIX + "nic", "no RDMA NIC, so no NIC node to be local to",
                CheckResult.NO_FIX));
            return results;
        }
        for (final RdmaDevice device : context.rdma().devices())
        {
            results.add(nic(context, device));
        }
        return results;
    }

    private static CheckResult nodes(final CheckContext context)
    {
        final Map<Integer, CpuSet> nodes = context.numaNodes();
        if (nodes.isEmpty())
        {
            return CheckResult.absent(NODES,
                "no " + CheckContext.NODE_DIR + ": a kernel without NUMA, one memory domain", CheckResult.NO_FIX);
        }

        final List<String> parts = new ArrayList<>();
        nodes.forEach((node, cpus) -> parts.add("node" + node + " CPUs " + cpus));
        final String found = nodes.size() + (nodes.size() == 1 ? " node: " : " nodes: ") + String.join(", ", parts);
        final List<Integer> pinnedNodes = nodesOf(nodes, context.pinnedCpus());
        if (pinnedNodes.size() > 1)
        {
            final Map.Entry<Integer, CpuSet> first = nodes.entrySet().iterator().next();
            return CheckResult.manual(Status.WARN, NODES,
                found + "; pinned CPUs " + context.pinnedCpus() + " span nodes " + pinnedNodes +
                ": threads and their memory cross the interconnect",
                "pin to one node: --cpus " + first.getValue() + " and run under numactl --cpunodebind=" +
                first.getKey() + " --membind=" + first.getKey());
        }
        return CheckResult.ok(NODES, found);
    }

    private static CheckResult nic(final CheckContext context, final RdmaDevice device)
    {
        final String item = NIC_PREFIX + device.name();
        final HostFs fs = context.fs();
        final Map<Integer, CpuSet> nodes = context.numaNodes();
        final CpuSet pinned = context.pinnedCpus();
        if (device.soft())
        {
            return CheckResult.absent(item, device.name() + " is a software device: it runs wherever the kernel does",
                CheckResult.NO_FIX);
        }

        final CpuSet localCpus = localCpus(context, device);
        if (device.numaNode() < 0)
        {
            final String found = device.name() + " reports no NUMA node (-1)";
            if (nodes.size() > 1)
            {
                return CheckResult.manual(Status.WARN, item,
                    found + " on a " + nodes.size() + "-node host: the pinned CPUs may be remote",
                    "find the NIC's CPUs: cat /sys/class/infiniband/" + device.name() +
                    "/device/local_cpulist, then pass them as --cpus");
            }
            return CheckResult.ok(item, found + ", single-node host: every CPU is local");
        }

        final String found = device.name() + " on node " + device.numaNode() +
            (localCpus.isEmpty() ? "" : " (CPUs " + localCpus + ")");
        if (!pinned.isEmpty() && !localCpus.isEmpty() && !localCpus.containsAll(pinned))
        {
            final CpuSet suggestion = localCpus.minus(CpuSet.of(localCpus.first()));
            return CheckResult.manual(Status.WARN, item,
                found + " but pinned CPUs " + pinned.minus(localCpus) + " are on another node",
                "pin to the NIC's node: --cpus " + (suggestion.isEmpty() ? localCpus : suggestion) +
                " and run under numactl --cpunodebind=" + device.numaNode() + " --membind=" + device.numaNode());
        }
        return CheckResult.ok(item, found + (pinned.isEmpty() ? "" : ", pinned CPUs " + pinned + " are local"));
    }

    /**
     * @return the CPUs local to the NIC: its PCI device's local_cpulist, else its node's CPUs; empty if unknown.
     */
    static CpuSet localCpus(final CheckContext context, final RdmaDevice device)
    {
        final String path = RdmaInventory.CLASS_DIR + "/" + device.name() + "/device/local_cpulist";
        try
        {
            final CpuSet local = CpuSet.parse(context.fs().read(path).orElse(""));
            if (!local.isEmpty())
            {
                return local;
            }
        }
        catch (final IllegalArgumentException ignore)
        {
            // fall through to the node's CPUs
        }
        return context.numaNodes().getOrDefault(device.numaNode(), CpuSet.EMPTY);
    }

    private static List<Integer> nodesOf(final Map<Integer, CpuSet> nodes, final CpuSet cpus)
    {
        final List<Integer> result = new ArrayList<>();
        nodes.forEach((node, nodeCpus) ->
        {
            if (nodeCpus.intersects(cpus))
            {
                result.add(node);
            }
        });
        return result;
    }
}
