package io.verbus.driver;

import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.UnsafeBufferPosition;

/**
 * An image's subscriber position that outlives its counter safely. While the image is live it is the counter.
 * Once the image is removed ({@link #close()}) it keeps the last value, so {@code Image.position()} still answers
 * (Aeron returns the final position too) and a poll that was in flight cannot write into a counter that may already
 * belong to someone else. Once the Verbus is closed ({@link #onDriverClosed()}) reading it throws
 * {@link IllegalStateException}: the counters file is gone.
 * <p>
 * The checks are one volatile read of a field of this object per call: {@code poll} reads and writes its position
 * once per call, not per fragment.
 */
public final class ImagePosition extends UnsafeBufferPosition
{
    private static final int OPEN = 0;
    private static final int RELEASED = 1;
    private static final int DRIVER_CLOSED = 2;

    private volatile int state = OPEN;
    private long finalValue;

    /**
     * @param buffer          the counters values buffer.
     * @param counterId       of the position counter.
     * @param countersManager that frees the counter on {@link #close()}.
     */
    public ImagePosition(final UnsafeBuffer buffer, final int counterId, final CountersManager countersManager)
    {
        super(buffer, counterId, countersManager);
    }

    public long get()
    {
        final int state = this.state;
        return OPEN == state ? super.get() : valueAfterClose(state);
    }

    public long getVolatile()
    {
        final int state = this.state;
        return OPEN == state ? super.getVolatile() : valueAfterClose(state);
    }

    public long getAcquire()
    {
        final int state = this.state;
        return OPEN == state ? super.getAcquire() : valueAfterClose(state);
    }

    public long getOpaque()
    {
        final int state = this.state;
        return OPEN == state ? super.getOpaque() : valueAfterClose(state);
    }

    public void set(final long value)
    {
        if (OPEN == state)
        {
            super.set(value);
        }
    }

    public void setOrdered(final long value)
    {
        setRelease(value);
    }

    public void setRelease(final long value)
    {
        if (OPEN == state)
        {
            super.setRelease(value);
        }
    }

    public void setOpaque(final long value)
    {
        if (OPEN == state)
        {
            super.setOpaque(value);
        }
    }

    public void setVolatile(final long value)
    {
        if (OPEN == state)
        {
            super.setVolatile(value);
        }
    }

    public boolean proposeMax(final long proposedValue)
    {
        return OPEN == state && super.proposeMax(proposedValue);
    }

    public boolean proposeMaxOrdered(final long proposedValue)
    {
        return proposeMaxRelease(proposedValue);
    }

    public boolean proposeMaxRelease(final long proposedValue)
    {
        return OPEN == state && super.proposeMaxRelease(proposedValue);
    }

    public boolean proposeMaxOpaque(final long proposedValue)
    {
        return OPEN == state && super.proposeMaxOpaque(proposedValue);
    }

    public boolean isClosed()
    {
        return OPEN != state;
    }

    /** Frees the counter, keeping its last value for readers. Idempotent. */
    public synchronized void close()
    {
        if (OPEN == state)
        {
            finalValue = super.getVolatile();
            state = RELEASED;
            super.close();
        }
    }

    /** The Verbus closed: from now on reading throws. Call after every agent has stopped. */
    public synchronized void onDriverClosed()
    {
        if (OPEN == state)
        {
            finalValue = super.getVolatile();
        }
        state = DRIVER_CLOSED;
    }

    private long valueAfterClose(final int state)
    {
        if (DRIVER_CLOSED == state)
        {
            throw new IllegalStateException("Verbus is closed: image positions are gone with its counters");
        }
        return finalValue;
    }
}
