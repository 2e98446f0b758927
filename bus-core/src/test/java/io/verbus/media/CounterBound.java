package io.verbus.media;

import org.agrona.concurrent.AtomicBuffer;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * A test {@link ImageBound} over a plain counter: the value a (test) sender stored with release semantics, trusted
 * as it is except for a value below the last one, which it rejects as a real media would.
 */
public final class CounterBound implements ImageBound
{
    private final AtomicBuffer buffer;
    private final int offset;
    private final AtomicInteger corruptions = new AtomicInteger();
    private long lastBound;
    private String invalidReason;
    private volatile String corruptReason;

    public CounterBound(final AtomicBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
    }

    public long acquire(final long consumerPosition)
    {
        final long value = buffer.getLongAcquire(offset);
        if (value < lastBound)
        {
            invalidReason = "position " + value + " below " + lastBound;
            return INVALID;
        }
        lastBound = value;
        return value;
    }

    public String invalidReason()
    {
        return invalidReason;
    }

    public void onImageCorrupt(final String reason)
    {
        corruptReason = reason;
        corruptions.incrementAndGet();
    }

    /** @return how often the image reported corruption. */
    public int corruptions()
    {
        return corruptions.get();
    }

    /** @return the last reason the image gave, or null. */
    public String corruptReason()
    {
        return corruptReason;
    }
}
