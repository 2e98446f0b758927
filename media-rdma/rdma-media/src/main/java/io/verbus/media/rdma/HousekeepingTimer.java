package io.verbus.media.rdma;

import java.util.concurrent.TimeUnit;

/**
 * The slower cadence of an rdma agent's duty cycle: liveness, QP state, counters and retiring dropped connections are
 * checked once per {@link #INTERVAL_NS}, not on every cycle. Owner thread only; allocates nothing.
 */
final class HousekeepingTimer
{
    static final long INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private long lastDueNs;

    /** @param nowNs the owner's clock at start: the first housekeeping is due one interval later. */
    HousekeepingTimer(final long nowNs)
    {
        lastDueNs = nowNs;
    }

    /** @return true, and the next interval starts at {@code nowNs}, when an interval has passed since the last one. */
    boolean isDue(final long nowNs)
    {
        if (nowNs - lastDueNs >= INTERVAL_NS)
        {
            lastDueNs = nowNs;
            return true;
        }
        return false;
    }
}
