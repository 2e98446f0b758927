package io.verbus.media.rdma;

import io.verbus.common.SystemProperties;

/**
 * What a subscription lets an authenticated publisher make it allocate. The publisher announces the term length in
 * its CHALLENGE and the subscriber allocates, registers and pre-touches a ring of three terms for it: without a cap,
 * a publisher announcing 1 GiB terms makes every subscriber commit 3 GiB of pinned memory. Read from system
 * properties when a subscription starts.
 */
final class SubscriberLimits
{
    /** Largest term length a subscription accepts from a publisher (k/m/g suffixes); default 64m. */
    static final String MAX_TERM_LENGTH_PROP_NAME = "verbus.rdma.subscriber.max.term.length";
    static final long MAX_TERM_LENGTH_DEFAULT = 64L * 1024 * 1024;

    /**
     * Most ring memory one subscription holds from its device at once, in use, lingering after a disconnect and
     * pooled for reuse (k/m/g suffixes); default 512m, at least three times the term length cap.
     */
    static final String MAX_RING_MEMORY_PROP_NAME = "verbus.rdma.subscriber.max.ring.memory";
    static final long MAX_RING_MEMORY_DEFAULT = 512L * 1024 * 1024;

    /** Bounds of either property: Aeron's smallest term, and a terabyte (beyond it a typo, not a plan). */
    private static final long MIN_LIMIT = 64 * 1024;
    private static final long MAX_LIMIT = 1L << 40;

    private final long maxTermLength;
    private final long maxRingMemory;

    SubscriberLimits(final long maxTermLength, final long maxRingMemory)
    {
        if (maxRingMemory < 3 * maxTermLength)
        {
            throw new IllegalArgumentException(MAX_RING_MEMORY_PROP_NAME + "=" + maxRingMemory + " must be at least " +
                "three times " + MAX_TERM_LENGTH_PROP_NAME + "=" + maxTermLength + " (one ring of three terms)");
        }
        this.maxTermLength = maxTermLength;
        this.maxRingMemory = maxRingMemory;
    }

    /** @return the limits the system properties set, or the defaults. */
    static SubscriberLimits fromSystemProperties()
    {
        return new SubscriberLimits(
            property(MAX_TERM_LENGTH_PROP_NAME, MAX_TERM_LENGTH_DEFAULT),
            property(MAX_RING_MEMORY_PROP_NAME, MAX_RING_MEMORY_DEFAULT));
    }

    private static long property(final String name, final long defaultValue)
    {
        final long size = SystemProperties.sizeAsLong(name, defaultValue);
        if (size < MIN_LIMIT || size > MAX_LIMIT)
        {
            throw new IllegalArgumentException("-D" + name + " must be within [64k, 1024g], got " +
                System.getProperty(name) + " (" + size + " bytes)");
        }
        return size;
    }

    long maxTermLength()
    {
        return maxTermLength;
    }

    long maxRingMemory()
    {
        return maxRingMemory;
    }
}
