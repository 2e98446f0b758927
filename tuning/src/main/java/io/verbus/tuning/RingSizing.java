package io.verbus.tuning;

import org.agrona.SystemUtil;

/**
 * How much memory the configured rings need pinned and backed by hugepages, and how that figure was arrived at,
 * so that every line that uses it can say what was assumed.
 *
 * @param bytes      total bytes of the rings on this host.
 * @param assumption how {@code bytes} was obtained, printed in the memlock and hugepage lines.
 */
public record RingSizing(long bytes, String assumption)
{
    /** A log is three term partitions, as in Aeron. */
    public static final int PARTITION_COUNT = 3;

    /** Aeron's default term length for network publications; Verbus's rdma media uses the same default. */
    public static final long DEFAULT_TERM_LENGTH = 16L * 1024 * 1024;

    public static final int DEFAULT_SUBSCRIBERS = 1;

    public RingSizing
    {
        if (bytes <= 0)
        {
            throw new IllegalArgumentException("ring bytes must be positive: " + bytes);
        }
    }

    /**
     * @param ringBytes the figure the user gave with {@code --ring-bytes}.
     */
    public static RingSizing given(final long ringBytes)
    {
        return new RingSizing(ringBytes, "--ring-bytes " + SystemUtil.formatSize(ringBytes));
    }

    /**
     * @param termLength  term length of each log (power of two).
     * @param subscribers rings expected on this host (one per subscriber connection).
     */
    public static RingSizing fromTerms(final long termLength, final int subscribers)
    {
        if (termLength <= 0 || Long.bitCount(termLength) != 1)
        {
            throw new IllegalArgumentException("--term-length must be a power of two: " + termLength);
        }
        if (subscribers <= 0)
        {
            throw new IllegalArgumentException("--subscribers must be positive: " + subscribers);
        }
        final long bytes = Math.multiplyExact(Math.multiplyExact(termLength, PARTITION_COUNT), subscribers);
        return new RingSizing(bytes, "term-length " + SystemUtil.formatSize(termLength) + " x " + PARTITION_COUNT +
            " partitions x " + subscribers + " subscriber" + (subscribers == 1 ? "" : "s"));
    }

    public static RingSizing defaults()
    {
        return fromTerms(DEFAULT_TERM_LENGTH, DEFAULT_SUBSCRIBERS);
    }

    /**
     * @return e.g. {@code 48 MiB (assumed term-length 16m x 3 partitions x 1 subscriber)}.
     */
    public String describe()
    {
        return Bytes.format(bytes) + " (assumed " + assumption + ")";
    }
}
