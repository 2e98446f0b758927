package io.verbus.archive;

import java.util.concurrent.TimeUnit;

/** Bytes per second over whole one-second windows, from a monotonically growing byte position. */
final class RateMeter
{
    static final long WINDOW_NS = TimeUnit.SECONDS.toNanos(1);

    private long windowStartNs;
    private long windowStartPosition = -1;
    private long bytesPerSecond;

    /**
     * @param position a growing byte count (a stream position).
     * @param nowNs    now.
     * @return the rate of the last completed window in bytes per second.
     */
    long update(final long position, final long nowNs)
    {
        if (windowStartPosition < 0)
        {
            windowStartPosition = position;
            windowStartNs = nowNs;
        }
        final long elapsedNs = nowNs - windowStartNs;
        if (elapsedNs >= WINDOW_NS)
        {
            bytesPerSecond = (long)((position - windowStartPosition) * (1e9 / elapsedNs));
            windowStartPosition = position;
            windowStartNs = nowNs;
        }
        return bytesPerSecond;
    }

    void reset()
    {
        windowStartPosition = -1;
        bytesPerSecond = 0;
    }
}
