package io.verbus.bench;

import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * How late the end of a burst arrives: the publisher sends {@link #BURST_MESSAGES} messages back to back, then only
 * runs its duty cycle ({@link StreamPublisher#idle()}: in invoker mode the driver's {@code invoke()}, no offer and
 * no flush), as a gateway does between bursts. Each burst's tail is the time from its last successful send to the
 * subscriber's receipt of its last message; the histogram holds one tail per burst. A stream that sends only when
 * the writer calls again shows its idle threshold here, not in a ping-pong (one message in flight) or in throughput
 * (the writer never stops).
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
     * @return one tail per burst in the histogram, or a failed result naming what went wrong.
     */
    public BenchResult run(final String part, final Contender contender, final StreamPair pair, final int length)
    {
        try
        {
            bursts(pair, length, BURSTS, null);
            final Histogram tails = new Histogram(TimeUnit.SECONDS.toNanos(60), 3);
            final long startNs = System.nanoTime();
            bursts(pair, length, BURSTS, tails);
            return new BenchResult(part, contender.name(), contender.provider(), length, BenchResult.Status.OK,
                null, tails, tails.getTotalCount(), System.nanoTime() - startNs, -1);
        }
        catch (final RuntimeException ex)
        {
            return BenchResult.failed(
                part, contender.name(), contender.provider(), length, LatencyRunner.describe(ex));
        }
    }

    private void bursts(final StreamPair pair, final int length, final int bursts, final Histogram tails)
    {
        final AtomicLong received = new AtomicLong();
        final AtomicLong lastReceiptNs = new AtomicLong();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread subscriber = new Thread(
            () -> subscribe(pair.subscriber(), length, received, lastReceiptNs, stop, failure), "bench-subscriber");
        final Thread publisher = new Thread(
            () -> publish(pair.publisher(), length, bursts, tails, received, lastReceiptNs, failure),
            "bench-publisher");
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
        final Histogram tails,
        final AtomicLong received,
        final AtomicLong lastReceiptNs,
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
                while (received.get() < sent)
                {
                    idle.idle(publisher.idle());
                    if (++spins % SPINS_BETWEEN_CLOCK_READS == 0)
                    {
                        checkProgress(lastSendNs + settings.stallTimeoutNs(), failure,
                            "the end of a burst did not arrive: received " + received.get() + " of", sent);
                    }
                }
                if (null != tails)
                {
                    tails.recordValue(Math.max(0, lastReceiptNs.get() - lastSendNs));
                }
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
        final AtomicLong received,
        final AtomicLong lastReceiptNs,
        final AtomicBoolean stop,
        final AtomicReference<Throwable> failure)
    {
        try
        {
            LatencyRunner.pin(settings.pongerCpu());
            final IdleStrategy idle = settings.idleStrategy().get();
            while (!stop.get())
            {
                final int count = subscriber.poll(length);
                if (count > 0)
                {
                    lastReceiptNs.setRelease(System.nanoTime()); // before the count, which the publisher waits on
                    received.addAndGet(count);
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
