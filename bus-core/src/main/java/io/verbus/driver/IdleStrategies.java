package io.verbus.driver;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Idle strategies chosen by name, so that configuration files and channel-free settings can name them.
 * Each call returns a new instance: an idle strategy holds per-thread state and must not be shared.
 */
public final class IdleStrategies
{
    /** Spins with a CPU pause hint: lowest latency, burns a core. */
    public static final String BUSY_SPIN = "busy-spin";

    /** Spins without even a pause hint. */
    public static final String NOOP = "noop";

    /** Yields the thread when idle. */
    public static final String YIELDING = "yielding";

    /** Spins, then yields, then parks for up to 1 ms: a good default. */
    public static final String BACKOFF = "backoff";

    /** Sleeps 1 ms when idle: for tests and quiet machines. */
    public static final String SLEEPING = "sleeping";

    /** Every accepted name. */
    public static final List<String> NAMES = List.of(BUSY_SPIN, NOOP, YIELDING, BACKOFF, SLEEPING);

    /** Longest park of the backoff strategy. */
    public static final long BACKOFF_MAX_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);

    /** Sleep of the sleeping strategy. */
    public static final long SLEEP_MS = 1;

    private IdleStrategies()
    {
    }

    /**
     * @param name one of {@link #NAMES}.
     * @return a new idle strategy of that kind.
     * @throws IllegalArgumentException naming the name and the known ones.
     */
    public static IdleStrategy newIdleStrategy(final String name)
    {
        checkName(name);
        return switch (name)
        {
            case BUSY_SPIN -> new BusySpinIdleStrategy();
            case NOOP -> new NoOpIdleStrategy();
            case YIELDING -> new YieldingIdleStrategy();
            case BACKOFF -> new BackoffIdleStrategy(10, 20, 1000, BACKOFF_MAX_PARK_NS);
            case SLEEPING -> new SleepingMillisIdleStrategy(SLEEP_MS);
            default -> throw new IllegalStateException("unreachable: " + name);
        };
    }

    /**
     * @param name to check.
     * @throws IllegalArgumentException when it is not one of {@link #NAMES}.
     */
    public static void checkName(final String name)
    {
        if ("event".equals(name))
        {
            // The name a user of rdma:...|idle=event may try here: it waits on one subscription, not for an agent.
            throw new IllegalArgumentException("idle strategy 'event' is not an agent idle strategy: it blocks the " +
                "thread that polls one subscription until its publisher's next commit; use new " +
                "io.verbus.EventIdleStrategy(subscription) in that loop (rdma:...|idle=event); agents take one of " +
                NAMES);
        }
        if (null == name || !NAMES.contains(name))
        {
            throw new IllegalArgumentException("unknown idle strategy '" + name + "': known ones are " + NAMES);
        }
    }
}
