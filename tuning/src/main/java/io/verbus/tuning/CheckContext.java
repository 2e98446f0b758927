package io.verbus.tuning;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * What every check reads: the host view, the tools, the user's assumptions, and facts several checks share
 * (online CPUs, isolated CPUs, NUMA nodes, RDMA inventory), each read once.
 */
public final class CheckContext
{
    static final String CPU_DIR = "/sys/devices/system/cpu";
    static final String NODE_DIR = "/sys/devices/system/node";

    private final HostFs fs;
    private final HostTools tools;
    private final RingSizing rings;
    private final CpuSet pinnedCpus;
    private final JvmFlags jvmFlags;
    private final KernelCommandLine cmdline;
    private final CpuSet onlineCpus;
    private final CpuSet isolatedCpus;
    private final Map<Integer, CpuSet> numaNodes;
    private final RdmaInventory rdma;

    /**
     * @param fs           the host.
     * @param tools        read-only host tools; {@link HostTools#NONE} for a fake tree.
     * @param rings        what the rings need, for memlock and hugepages.
     * @param pinnedCpus   the CPUs the latency threads will be pinned to ({@code --cpus}); may be empty.
     * @param jvmFlags     the JVM flags to judge: this JVM's, or a target's given on the command line.
     */
    public CheckContext(
        final HostFs fs,
        final HostTools tools,
        final RingSizing rings,
        final CpuSet pinnedCpus,
        final JvmFlags jvmFlags)
    {
        this.fs = Objects.requireNonNull(fs, "fs");
        this.tools = Objects.requireNonNull(tools, "tools");
        this.rings = Objects.requireNonNull(rings, "rings");
        this.pinnedCpus = Objects.requireNonNull(pinnedCpus, "pinnedCpus");
        this.jvmFlags = Objects.requireNonNull(jvmFlags, "jvmFlags");
        this.cmdline = KernelCommandLine.read(fs);
        this.onlineCpus = readCpuList(fs, CPU_DIR + "/online");
        this.isolatedCpus = readCpuList(fs, CPU_DIR + "/isolated").union(cmdline.cpuList("isolcpus"));
        this.numaNodes = readNumaNodes(fs);
        this.rdma = RdmaInventory.scan(fs);
    }

    public HostFs fs()
    {
        return fs;
    }

    public HostTools tools()
    {
        return tools;
    }

    public RingSizing rings()
    {
        return rings;
    }

    public CpuSet pinnedCpus()
    {
        return pinnedCpus;
    }

    public JvmFlags jvmFlags()
    {
        return jvmFlags;
    }

    public KernelCommandLine cmdline()
    {
        return cmdline;
    }

    public CpuSet onlineCpus()
    {
        return onlineCpus;
    }

    public CpuSet isolatedCpus()
    {
        return isolatedCpus;
    }

    /**
     * @return CPUs that must stay free of interrupts and housekeeping: the isolated ones and the pinned ones.
     */
    public CpuSet latencyCpus()
    {
        return isolatedCpus.union(pinnedCpus);
    }

    /**
     * @return node number to its CPUs, in node order; empty when the kernel shows no NUMA topology.
     */
    public Map<Integer, CpuSet> numaNodes()
    {
        return numaNodes;
    }

    public RdmaInventory rdma()
    {
        return rdma;
    }

    /**
     * @return the CPUs to suggest isolating when none are: the pinned ones, else all online CPUs but the first.
     */
    public CpuSet suggestedIsolatedCpus()
    {
        if (!pinnedCpus.isEmpty())
        {
            return pinnedCpus;
        }
        final int first = onlineCpus.first();
        return first < 0 ? CpuSet.EMPTY : onlineCpus.minus(CpuSet.of(first));
    }

    private static CpuSet readCpuList(final HostFs fs, final String path)
    {
        try
        {
            return CpuSet.parse(fs.read(path).orElse(""));
        }
        catch (final IllegalArgumentException ex)
        {
            return CpuSet.EMPTY;
        }
    }

    private static Map<Integer, CpuSet> readNumaNodes(final HostFs fs)
    {
        final Map<Integer, CpuSet> nodes = new LinkedHashMap<>();
        final List<String> names = new ArrayList<>(fs.list(NODE_DIR));
        for (final String name : names)
        {
            if (name.matches("node[0-9]+"))
            {
                nodes.put(Integer.parseInt(name.substring(4)), readCpuList(fs, NODE_DIR + "/" + name + "/cpulist"));
            }
        }
        return nodes;
    }
}
