package io.verbus;

import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * An idle strategy for the thread that polls one subscription, which busy-polls while data flows and blocks while
 * it does not, woken by the publisher's next commit: {@code while (running) idle.idle(sub.poll(handler, 10));}.
 * <p>
 * After a poll that delivered something it returns at once. After {@code spinPolls} empty polls in a row (spinning
 * with a pause hint meanwhile) it calls {@link Subscription#awaitData}, which arms the image's completion channel,
 * looks once more (no lost wake-up) and blocks until the next commit or {@code maxWaitNs}. The subscription must be
 * able to wait ({@link Subscription#canAwaitData()}: an {@code rdma:...|idle=event} subscription with its image);
 * while it cannot (no image yet, a reconnect, another kind of channel) this parks {@link #FALLBACK_PARK_NS} instead,
 * like the backoff strategy's longest park.
 * <p>
 * The poll never blocks, as in Aeron; only this strategy does, between polls, on the polling thread. It is bound to
 * one subscription and, like every idle strategy, holds per-thread state: one instance per polling thread.
 */
public final class EventIdleStrategy implements IdleStrategy
{
    /** Name, as Agrona's strategies name themselves. */
    public static final String ALIAS = "event";

    /** Empty polls spun before arming: covers the gaps inside a burst without a wait. */
    public static final int DEFAULT_SPIN_POLLS = 100;

    /** Longest single wait; a wait that times out just polls again (and notices new or gone images). */
    public static final long DEFAULT_MAX_WAIT_NS = TimeUnit.MILLISECONDS.toNanos(100);

    /** Park while the subscription cannot wait. */
    public static final long FALLBACK_PARK_NS = TimeUnit.MILLISECONDS.toNanos(1);

    private final Subscription subscription;
    private final int spinPolls;
    private final long maxWaitNs;
    private int emptyPolls;

    /**
     * With {@link #DEFAULT_SPIN_POLLS} and {@link #DEFAULT_MAX_WAIT_NS}.
     *
     * @param subscription the subscription the calling thread polls.
     */
    public EventIdleStrategy(final Subscription subscription)
    {
        this(subscription, DEFAULT_SPIN_POLLS, DEFAULT_MAX_WAIT_NS);
    }

    /**
     * @param subscription the subscription the calling thread polls.
     * @param spinPolls    empty polls spun before blocking (0: block after the first empty poll).
     * @param maxWaitNs    longest single wait, > 0.
     */
    public EventIdleStrategy(final Subscription subscription, final int spinPolls, final long maxWaitNs)
    {
        if (null == subscription)
        {
            throw new NullPointerException("subscription");
        }
        if (spinPolls < 0 || maxWaitNs <= 0)
        {
            throw new IllegalArgumentException("spinPolls must be >= 0 and maxWaitNs > 0, got " + spinPolls +
                " and " + maxWaitNs);
        }
        this.subscription = subscription;
        this.spinPolls = spinPolls;
        this.maxWaitNs = maxWaitNs;
    }

    public void idle(final int workCount)
    {
        if (workCount > 0)
        {
            emptyPolls = 0;
            return;
        }
        idle();
    }

    public void idle()
    {
        if (emptyPolls < spinPolls)
        {
            emptyPolls++;
            Thread.onSpinWait();
            return;
        }
        if (subscription.canAwaitData())
        {
            subscription.awaitData(maxWaitNs);
        }
        else
        {
            LockSupport.parkNanos(FALLBACK_PARK_NS);
        }
    }

    public void reset()
    {
        emptyPolls = 0;
    }

    public String alias()
    {
        return ALIAS;
    }

    public String toString()
    {
        return "EventIdleStrategy{spinPolls=" + spinPolls + ", maxWaitNs=" + maxWaitNs + '}';
    }
}
