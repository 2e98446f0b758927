package io.verbus.fabric;

/**
 * Access rights of a {@link MemoryRegion}, a bit set with the values of {@code enum ibv_access_flags}
 * so that the verbs provider passes them through unchanged.
 * <p>
 * Register with the fewest rights the use needs: a source of WRITEs needs none (0), a sink of READs,
 * RECVs and atomic results needs {@link #LOCAL_WRITE}, a ring that peers WRITE into needs
 * {@link #LOCAL_WRITE} | {@link #REMOTE_WRITE}. As in verbs, any REMOTE_WRITE or REMOTE_ATOMIC right
 * requires LOCAL_WRITE.
 */
public final class AccessFlags
{
    /** The local side may write the region (READ results, RECV data, atomic results land here). */
    public static final int LOCAL_WRITE = 1;
    /** Peers may RDMA WRITE into the region. */
    public static final int REMOTE_WRITE = 1 << 1;
    /** Peers may RDMA READ from the region. */
    public static final int REMOTE_READ = 1 << 2;
    /** Peers may run 8-byte atomics (fetch-add, compare-swap) on the region. */
    public static final int REMOTE_ATOMIC = 1 << 3;

    /** Every flag this SPI knows. */
    public static final int ALL = LOCAL_WRITE | REMOTE_WRITE | REMOTE_READ | REMOTE_ATOMIC;

    private AccessFlags()
    {
    }

    /**
     * Check a flag set for registration.
     *
     * @param flags the access flags.
     * @throws IllegalArgumentException if unknown bits are set or a remote write/atomic right lacks LOCAL_WRITE.
     */
    public static void validate(final int flags)
    {
        if ((flags & ~ALL) != 0)
        {
            throw new IllegalArgumentException("unknown access flag bits 0x" + Integer.toHexString(flags & ~ALL));
        }
        if ((flags & (REMOTE_WRITE | REMOTE_ATOMIC)) != 0 && (flags & LOCAL_WRITE) == 0)
        {
            throw new IllegalArgumentException(
                "REMOTE_WRITE and REMOTE_ATOMIC require LOCAL_WRITE, as in verbs: " + toString(flags));
        }
    }

    /**
     * @param flags the access flags.
     * @return true if every bit of {@code required} is set in {@code flags}.
     */
    public static boolean allows(final int flags, final int required)
    {
        return (flags & required) == required;
    }

    /**
     * @param flags access flags.
     * @return a readable form such as {@code LOCAL_WRITE|REMOTE_WRITE}.
     */
    public static String toString(final int flags)
    {
        if (flags == 0)
        {
            return "NONE";
        }
        final StringBuilder sb = new StringBuilder();
        append(sb, flags, LOCAL_WRITE, "LOCAL_WRITE");
        append(sb, flags, REMOTE_WRITE, "REMOTE_WRITE");
        append(sb, flags, REMOTE_READ, "REMOTE_READ");
        append(sb, flags, REMOTE_ATOMIC, "REMOTE_ATOMIC");
        if ((flags & ~ALL) != 0)
        {
            append(sb, flags, flags & ~ALL, "0x" + Integer.toHexString(flags & ~ALL));
        }
        return sb.toString();
    }

    private static void append(final StringBuilder sb, final int flags, final int flag, final String name)
    {
        if ((flags & flag) != 0)
        {
            if (!sb.isEmpty())
            {
                sb.append('|');
            }
            sb.append(name);
        }
    }
}
