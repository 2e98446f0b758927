package io.verbus.bench;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Whether the end of a burst waits: the publisher sends {@link #BURST_MESSAGES} messages back to back, then only
 * runs its duty cycle ({@link StreamPublisher#idle()}: in invoker mode the driver's {@code invoke()}, no offer and
 * no flush), as a gateway does between bursts. Per burst the histogram holds the longest silence after its last
 * successful send: the longest time the subscriber went without a receipt (counted from the last send or the
 * previous receipt, whichever is later) until it had the whole burst. A subscriber still draining a backlog receives
 * all along, so its silences are the gaps between polls; a stream that holds the end of a burst back until the
 * writer calls again, or until it counts as idle, shows that wait. Neither shows in a ping-pong (one message in
 * flight) nor in a throughput run (the writer never stops, and flushes).
 */
public final class BurstTailRunner
{
    /** Messages per burst: more than a 16-WR send queue or a coalesced write holds, fewer than a term. */
    static final int BURST_MESSAGES = 5_000;
    /** Bursts measured per size, after as many warm-up bursts. */
    static final int BURSTS = 40;
    /** The publisher's duty cycle between a burst's last receipt and the next burst. */
    private static final long GAP_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final int SPINS_BETWEEN_CLOCK_READS = 64;

    private final RunSettings settings;

    public BurstTailRunner(final RunSettings settings)
    {
        this.settings = settings;
    }

    /**
     * @param part      the report part the result belongs to.
     * @param contender whose stream is measured (for the names in the result).
     * @param pair      connected ends.
     * @param length    message length in bytes.
     * @return one longest silence per burst in the histogram, or a failed result naming what went wrong.
     */
    public BenchResult run(final String part, final Contender contender, final StreamPair pair, final int length)
    {
        return run(part, contender, pair, length, 0);
    }

    /**
     * {@link #run(String, Contender, StreamPair, int)} after warm-up bursts for the contender's JIT warm-up
     * ({@link RunSettings#contenderWarmupNs()}): for its first size. With only the 40 warm-up bursts (under 0.5 s)
     * the C2 compiler was still at work while the bursts were measured, a third runnable thread on two CPUs that each
     * spinning thread had to share in 3 ms scheduler slices: runs of the same code came out with p50 silences of
     * 0.0 ms or of 2-4 ms, at random.
     */
    public BenchResult runAfterContenderWarmUp(
        final String part, final Contender contender, final StreamPair pair, final int length)
    {
        return run(part, contender, pair, length, settings.contenderWarmupNs());
    }

    private BenchResult run(
        final String part, final Contender contender, final StreamPair pair, final int length, final long warmupNs)
    {
        try
        {
            final long warmupEndNs = System.nanoTime() + warmupNs;
            do
            {
                bursts(pair, length, BURSTS, null);
            }
            while (System.nanoTime() < warmupEndNs);
            final Histogram silences = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
            final long startNs = System.nanoTime();
            bursts(pair, length, BURSTS, silences);
            return new BenchResult(part, contender.name(), contender.provider(), length, BenchResult.Status.OK,
                null, silences, silences.getTotalCount(), System.nanoTime() - startNs, -1);
        }
        catch (final RuntimeException ex)
        {
            return BenchResult.failed(
                part, contender.name(), contender.provider(), length, LatencyRunner.describe(ex));
        }
    }

    private void bursts(final StreamPair pair, final int length, final int bursts, final Histogram silences)
    {
        final BurstState state = new BurstState();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread subscriber = new Thread(
            () -> subscribe(pair.subscriber(), length, state, stop, failure), "bench-subscriber");
        final Thread publisher = new Thread(
            () -> publish(pair.publisher(), length, bursts, silences, state, failure), "bench-publisher");
        subscriber.setDaemon(true);
        publisher.setDaemon(true);
        subscriber.start();
        publisher.start();
        final long limitNs = (long)bursts * (2 * settings.stallTimeoutNs() + GAP_NS);
        final boolean finished = LatencyRunner.join(publisher, limitNs);
        stop.set(true);
        if (!finished)
        {
            pair.close();
            LatencyRunner.join(publisher, settings.stallTimeoutNs());
            failure.compareAndSet(null, new IllegalStateException("the bursts did not finish"));
        }
        LatencyRunner.join(subscriber, settings.stallTimeoutNs());
        final Throwable error = failure.get();
        if (null != error)
        {
            throw error instanceof RuntimeException re ? re : new IllegalStateException(error);
        }
    }

    private void publish(
        final StreamPublisher publisher,
        final int length,
        final int bursts,
        final Histogram silences,
        final BurstState state,
        final AtomicReference<Throwable> failure)
    {
        try
        {
            LatencyRunner.pin(settings.pingerCpu());
            final IdleStrategy idle = settings.idleStrategy().get();
            long sent = 0;
            for (int burst = 0; burst < bursts; burst++)
            {
                final long burstEnd = sent + BURST_MESSAGES;
                long lastSendNs = 0;
                long deadlineNs = System.nanoTime() + settings.stallTimeoutNs();
                int spins = 0;
                while (sent < burstEnd)
                {
                    if (publisher.send(length))
                    {
                        sent++;
                        lastSendNs = System.nanoTime();
                        deadlineNs = lastSendNs + settings.stallTimeoutNs();
                    }
                    else if (++spins % SPINS_BETWEEN_CLOCK_READS == 0)
                    {
                        checkProgress(deadlineNs, failure, "publisher back-pressured", sent);
                    }
                }
                spins = 0;
                state.lastSendNs.set(lastSendNs);
                while (state.received.get() < sent)
                {
                    idle.idle(publisher.idle());
                    if (++spins % SPINS_BETWEEN_CLOCK_READS == 0)
                    {
                        checkProgress(lastSendNs + settings.stallTimeoutNs(), failure,
                            "the end of a burst did not arrive: received " + state.received.get() + " of", sent);
                    }
                }
                if (null != silences)
                {
                    silences.recordValue(state.longestSilenceNs.get());
                }
                // Nothing is in flight now, so the subscriber makes no receipt while these are reset.
                state.lastSendNs.set(0);
                state.longestSilenceNs.set(0);
                final long gapEndNs = System.nanoTime() + GAP_NS;
                while (System.nanoTime() < gapEndNs)
                {
                    idle.idle(publisher.idle());
                }
            }
        }
        catch (final Throwable ex)
        {
            failure.compareAndSet(null, ex);
        }
    }

    /** What the two threads share: the subscriber's count and longest silence, the burst's last send. */
    private static final class BurstState
    {
        final AtomicLong received = new AtomicLong();
        /** The current burst's last successful send, 0 while it is being sent. */
        final AtomicLong lastSendNs = new AtomicLong();
        final AtomicLong longestSilenceNs = new AtomicLong();
    }

    private static void checkProgress(
        final long deadlineNs, final AtomicReference<Throwable> failure, final String what, final long sent)
    {
        final Throwable error = failure.get();
        if (null != error)
        {
            throw error instanceof RuntimeException re ? re : new IllegalStateException(error);
        }
        if (System.nanoTime() > deadlineNs)
        {
            throw new IllegalStateException(what + " " + sent + " sent");
        }
    }

    private void subscribe(
        final StreamSubscriber subscriber,
        final int length,
        final BurstState state,
        final AtomicBoolean stop,
        final AtomicReference<Throwable> failure)
    {
        try
        {
            LatencyRunner.pin(settings.pongerCpu());
            final IdleStrategy idle = settings.idleStrategy().get();
            long previousReceiptNs = 0;
            while (!stop.get())
            {
                final int count = subscriber.poll(length);
                if (count > 0)
                {
                    final long nowNs = System.nanoTime();
                    final long lastSendNs = state.lastSendNs.get();
                    if (0 != lastSendNs && nowNs > lastSendNs)
                    {
                        final long silenceNs = nowNs - Math.max(previousReceiptNs, lastSendNs);
                        if (silenceNs > state.longestSilenceNs.get())
                        {
                            state.longestSilenceNs.set(silenceNs);
                        }
                    }
                    previousReceiptNs = nowNs;
                    state.received.addAndGet(count); // after the silence, which the publisher reads once all came
                    idle.reset();
                }
                else
                {
                    idle.idle();
                }
            }
        }
        catch (final Throwable ex)
        {
            failure.compareAndSet(null, ex);
        }
    }
}
