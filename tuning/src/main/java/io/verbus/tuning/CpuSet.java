package io.verbus.tuning;

import java.util.BitSet;

/**
 * An immutable set of CPU numbers in the kernel's list format ({@code 0-3,8,10-11}), as found in
 * {@code /sys/devices/system/cpu/isolated}, {@code nodeN/cpulist}, {@code /proc/irq/N/smp_affinity_list} and
 * on the kernel command line.
 */
public final class CpuSet
{
    /** Highest CPU number accepted: far above any real machine, low enough to reject typos such as 1000000. */
    public static final int MAX_CPU = 8191;

    public static final CpuSet EMPTY = new CpuSet(new BitSet());

    private final BitSet cpus;

    private CpuSet(final BitSet cpus)
    {
        this.cpus = cpus;
    }

    /**
     * @param list kernel CPU list such as {@code 0-3,8}; blank and {@code (null)} (what sysfs prints for an unset
     *             nohz_full) give the empty set.
     * @return the parsed set.
     * @throws IllegalArgumentException naming the list and the bad part when it is not a CPU list.
     */
    public static CpuSet parse(final String list)
    {
        final String trimmed = list.strip();
        final BitSet cpus = new BitSet();
        if (trimmed.isEmpty() || "(null)".equals(trimmed))
        {
            return EMPTY;
        }

        for (final String part : trimmed.split(","))
        {
            final String range = part.strip();
            final int dash = range.indexOf('-');
            if (dash < 0)
            {
                cpus.set(cpuNumber(range, list));
            }
            else
            {
                // The kernel also accepts a stride such as 0-7:2; keep it simple and honest: reject it by name.
                final int first = cpuNumber(range.substring(0, dash), list);
                final int last = cpuNumber(range.substring(dash + 1), list);
                if (last < first)
                {
                    throw new IllegalArgumentException("CPU range '" + range + "' runs backwards in '" + list + "'");
                }
                cpus.set(first, last + 1);
            }
        }
        return new CpuSet(cpus);
    }

    public static CpuSet of(final int... cpuNumbers)
    {
        final BitSet cpus = new BitSet();
        for (final int cpu : cpuNumbers)
        {
            if (cpu < 0 || cpu > MAX_CPU)
            {
                throw new IllegalArgumentException("CPU number out of range 0.." + MAX_CPU + ": " + cpu);
            }
            cpus.set(cpu);
        }
        return new CpuSet(cpus);
    }

    private static int cpuNumber(final String text, final String list)
    {
        try
        {
            final int cpu = Integer.parseInt(text.strip());
            if (cpu < 0 || cpu > MAX_CPU)
            {
                throw new IllegalArgumentException(
                    "CPU number '" + text + "' out of range 0.." + MAX_CPU + " in '" + list + "'");
            }
            return cpu;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("not a CPU number: '" + text + "' in CPU list '" + list + "'", ex);
        }
    }

    public boolean isEmpty()
    {
        return cpus.isEmpty();
    }

    public int size()
    {
        return cpus.cardinality();
    }

    public boolean contains(final int cpu)
    {
        return cpu >= 0 && cpus.get(cpu);
    }

    public boolean containsAll(final CpuSet other)
    {
        return other.minus(this).isEmpty();
    }

    public boolean intersects(final CpuSet other)
    {
        return cpus.intersects(other.cpus);
    }

    public CpuSet union(final CpuSet other)
    {
        final BitSet result = (BitSet)cpus.clone();
        result.or(other.cpus);
        return new CpuSet(result);
    }

    public CpuSet intersection(final CpuSet other)
    {
        final BitSet result = (BitSet)cpus.clone();
        result.and(other.cpus);
        return new CpuSet(result);
    }

    public CpuSet minus(final CpuSet other)
    {
        final BitSet result = (BitSet)cpus.clone();
        result.andNot(other.cpus);
        return new CpuSet(result);
    }

    /**
     * @return the CPU numbers in ascending order.
     */
    public int[] toArray()
    {
        return cpus.stream().toArray();
    }

    /**
     * @return the lowest CPU, or -1 when empty.
     */
    public int first()
    {
        return cpus.nextSetBit(0);
    }

    /**
     * @return the kernel list format with ranges collapsed: {@code 0-3,8}; empty string for the empty set.
     */
    public String toString()
    {
        final StringBuilder builder = new StringBuilder();
        int start = cpus.nextSetBit(0);
        while (start >= 0)
        {
            final int end = cpus.nextClearBit(start) - 1;
            if (!builder.isEmpty())
            {
                builder.append(',');
            }
            builder.append(start);
            if (end > start)
            {
                builder.append('-').append(end);
            }
            start = cpus.nextSetBit(end + 1);
        }
        return builder.toString();
    }

    public boolean equals(final Object other)
    {
        return other instanceof CpuSet that && cpus.equals(that.cpus);
    }

    public int hashCode()
    {
        return cpus.hashCode();
    }
}
