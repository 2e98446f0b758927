package io.verbus.bench;

import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Measures one publisher to one subscriber: the publisher sends as fast as the stream accepts for a bounded time
 * and count, the subscriber counts whole messages until it has them all. Throughput is messages over the time
 * from the first send to the last receipt; CPU is the process's CPU time over the same window. A shorter run of
 * the same kind warms up first.
 */
public final class ThroughputRunner
{
    private static final long NOT_KNOWN = Long.MAX_VALUE;
    private static final int SPINS_BETWEEN_CLOCK_READS = 256;

    private final RunSettings settings;

    public ThroughputRunner(final RunSettings settings)
    {
        this.settings = settings;
    }

    /**
     * @param part      the report part the result belongs to.
     * @param contender whose stream is measured (for the names in the result).
     * @param pair      connected ends.
     * @param length    message length in bytes.
     * @return messages, elapsed time and CPU time, or a failed result naming what went wrong.
     */
    public BenchResult run(final String part, final Contender contender, final StreamPair pair, final int length)
    {
        return run(part, contender, pair, length, Math.min(settings.warmupNs(), settings.throughputNs() / 2 + 1));
    }

    /**
     * {@link #run(String, Contender, StreamPair, int)} after the contender's JIT warm-up
     * ({@link RunSettings#contenderWarmupNs()}): for its first size, so that its first figure is not taken on code
     * still compiling (rdma/shm direct mode at 32 B measured 0.2 M msg/s over 300 ms and 2.3 M over 3 s in the same
     * quiet hour).
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
            phase(pair, length, warmupNs);
            final long[] measured = phase(pair, length, settings.throughputNs());
            return new BenchResult(part, contender.name(), contender.provider(), length,
                BenchResult.Status.OK, null, null, measured[0], measured[1], measured[2]);
        }
        catch (final RuntimeException ex)
        {
            return BenchResult.failed(
                part, contender.name(), contender.provider(), length, LatencyRunner.describe(ex));
        }
    }

    /**
     * @return messages, elapsed ns, process CPU ns.
     */
    private long[] phase(final StreamPair pair, final int length, final long durationNs)
    {
        final AtomicLong sentTotal = new AtomicLong(NOT_KNOWN);
        final AtomicBoolean subscriberDone = new AtomicBoolean();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long[] publisherResult = new long[1]; // start ns
        final long[] subscriberResult = new long[2]; // received, last receipt ns

        final Thread subscriber = new Thread(
            () -> subscribe(pair.subscriber(), length, sentTotal, subscriberResult, subscriberDone, failure),
            "bench-subscriber");
        final Thread publisher = new Thread(
            () -> publish(pair.publisher(), length, durationNs, sentTotal, subscriberDone, publisherResult, failure),
            "bench-publisher");
        subscriber.setDaemon(true);
        publisher.setDaemon(true);

        final long cpuStartNs = ProcessCpuClock.cpuTimeNs();
        subscriber.start();
        publisher.start();
        final long limitNs = settings.throughputPhaseLimitNs(durationNs);
        final boolean finished = LatencyRunner.join(publisher, limitNs) && LatencyRunner.join(subscriber, limitNs);
        final long cpuEndNs = ProcessCpuClock.cpuTimeNs();
        if (!finished)
        {
            pair.close();
            LatencyRunner.join(publisher, settings.stallTimeoutNs());
            LatencyRunner.join(subscriber, settings.stallTimeoutNs());
            failure.compareAndSet(null, new IllegalStateException(
                "stream did not finish within " + TimeUnit.NANOSECONDS.toMillis(limitNs) + " ms"));
        }
        final Throwable error = failure.get();
        if (null != error)
        {
            throw error instanceof RuntimeException re ? re : new IllegalStateException(error);
        }
        final long received = subscriberResult[0];
        final long elapsedNs = Math.max(1, subscriberResult[1] - publisherResult[0]);
        return new long[]{ received, elapsedNs, cpuStartNs < 0 ? -1 : cpuEndNs - cpuStartNs };
    }

    private void publish(
        final StreamPublisher publisher,
        final int length,
        final long durationNs,
        final AtomicLong sentTotal,
        final AtomicBoolean subscriberDone,
        final long[] result,
        final AtomicReference<Throwable> failure)
    {
        long sent = 0;
        try
        {
            LatencyRunner.pin(settings.pingerCpu());
            final IdleStrategy idle = settings.idleStrategy().get();
            final long startNs = System.nanoTime();
            result[0] = startNs;
            final long endNs = startNs + durationNs;
            long lastProgressNs = startNs;
            long sentAtLastCheck = 0;
            int spins = 0;
            while (sent < settings.maxMessages())
            {
                if (publisher.send(length))
                {
                    sent++;
                    idle.reset();
                }
                else
                {
                    idle.idle();
                }
                if (++spins % SPINS_BETWEEN_CLOCK_READS == 0)
                {
                    final long nowNs = System.nanoTime();
                    if (nowNs >= endNs)
                    {
                        break;
                    }
                    if (sent != sentAtLastCheck)
                    {
                        sentAtLastCheck = sent;
                        lastProgressNs = nowNs;
                    }
                    else if (nowNs - lastProgressNs > settings.stallTimeoutNs())
                    {
                        throw new IllegalStateException("publisher back-pressured for " +
                            TimeUnit.NANOSECONDS.toMillis(settings.stallTimeoutNs()) + " ms after " + sent);
                    }
                }
            }
            sentTotal.set(sent);
            flushUntilReceived(publisher, idle, subscriberDone);
        }
        catch (final Throwable ex)
        {
            failure.compareAndSet(null, ex);
        }
        finally
        {
            sentTotal.set(sent);
        }
    }

    private void flushUntilReceived(
        final StreamPublisher publisher, final IdleStrategy idle, final AtomicBoolean subscriberDone)
    {
        final long deadlineNs = System.nanoTime() + settings.stallTimeoutNs();
        int spins = 0;
        while (!subscriberDone.get())
        {
            idle.idle(publisher.flush());
            if (++spins % SPINS_BETWEEN_CLOCK_READS == 0 && System.nanoTime() > deadlineNs)
            {
                return; // the subscriber reports what is missing
            }
        }
    }

    private void subscribe(
        final StreamSubscriber subscriber,
        final int length,
        final AtomicLong sentTotal,
        final long[] result,
        final AtomicBoolean done,
        final AtomicReference<Throwable> failure)
    {
        try
        {
            LatencyRunner.pin(settings.pongerCpu());
            final IdleStrategy idle = settings.idleStrategy().get();
            long received = 0;
            long lastReceiptNs = System.nanoTime();
            int spins = 0;
            while (received < sentTotal.get())
            {
                final int count = subscriber.poll(length);
                if (count > 0)
                {
                    received += count;
                    lastReceiptNs = System.nanoTime();
                    idle.reset();
                }
                else
                {
                    idle.idle();
                    if (++spins % SPINS_BETWEEN_CLOCK_READS == 0 &&
                        System.nanoTime() - lastReceiptNs > settings.stallTimeoutNs())
                    {
                        if (null != failure.get())
                        {
                            return;
                        }
                        throw new IllegalStateException("subscriber received nothing for " +
                            TimeUnit.NANOSECONDS.toMillis(settings.stallTimeoutNs()) + " ms after " + received);
                    }
                }
            }
            if (received > sentTotal.get())
            {
                throw new IllegalStateException("subscriber counted " + received + " messages but " +
                    sentTotal.get() + " were sent");
            }
            result[0] = received;
            result[1] = lastReceiptNs;
        }
        catch (final Throwable ex)
        {
            failure.compareAndSet(null, ex);
        }
        finally
        {
            done.set(true);
        }
    }
}
