package io.verbus.bench;

import io.verbus.driver.Affinity;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.IdleStrategy;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Measures round trips of one size over a {@link PingPongPair}: a pinger thread and a ponger thread, each pinned to
 * its own CPU and the only spinning threads, warm up, then the pinger records every round trip in an HdrHistogram.
 * Every wait is bounded by the stall timeout and the run by count and time.
 */
public final class LatencyRunner
{
    /** The JIT counts as quiet once a slice this long added no compilation time. */
    private static final long JIT_QUIET_SLICE_NS = TimeUnit.MILLISECONDS.toNanos(200);
    /** Longest extra warm-up waiting for a quiet JIT. */
    private static final long MAX_JIT_SETTLE_NS = TimeUnit.SECONDS.toNanos(3);
    /** Ten seconds at three significant digits: any round trip slower than that is a stall anyway. */
    public static final long HIGHEST_TRACKABLE_NS = TimeUnit.SECONDS.toNanos(10);
    private static final int SPINS_BETWEEN_CLOCK_READS = 256;
    /**
     * The last sequence number any run sent: each run continues from it, so numbers only grow over a pair's runs and
     * a late echo from a run that was given up (a warm-up that stalled) is told apart and dropped
     * ({@code MessageHeader.isEchoOf}) instead of failing the next run's first round trip.
     */
    private static final AtomicLong LAST_SEQUENCE = new AtomicLong();

    private final RunSettings settings;

    public LatencyRunner(final RunSettings settings)
    {
        this.settings = settings;
    }

    /**
     * @param part      the report part the result belongs to.
     * @param contender whose pair is measured (for the names in the result).
     * @param pair      connected ends.
     * @param length    message length in bytes.
     * @return the measured histogram, or a failed result naming what went wrong.
     */
    public BenchResult run(final String part, final Contender contender, final PingPongPair pair, final int length)
    {
        final Histogram histogram = new Histogram(HIGHEST_TRACKABLE_NS, 3);
        final AtomicBoolean running = new AtomicBoolean(true);
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final long[] measured = new long[3]; // round trips, elapsed ns, process CPU ns

        final Thread ponger = new Thread(() -> pong(pair.ponger(), running, failure), "bench-ponger");
        final Thread pinger = new Thread(
            () -> ping(pair.pinger(), length, histogram, measured, running, failure), "bench-pinger");
        ponger.setDaemon(true);
        pinger.setDaemon(true);
        ponger.start();
        pinger.start();

        final boolean finished = join(pinger, settings.latencyRunLimitNs());
        running.set(false);
        if (!finished || !join(ponger, settings.stallTimeoutNs()))
        {
            pair.close(); // unblocks a stuck end; the contender is done for
            join(pinger, settings.stallTimeoutNs());
            join(ponger, settings.stallTimeoutNs());
            failure.compareAndSet(null, new IllegalStateException("round trip did not finish within " +
                TimeUnit.NANOSECONDS.toMillis(settings.latencyRunLimitNs()) + " ms"));
        }

        final Throwable error = failure.get();
        if (null != error)
        {
            return BenchResult.failed(part, contender.name(), contender.provider(), length, describe(error));
        }
        return new BenchResult(part, contender.name(), contender.provider(), length,
            BenchResult.Status.OK, null, histogram, measured[0], measured[1], measured[2]);
    }

    private void ping(
        final Pinger pinger,
        final int length,
        final Histogram histogram,
        final long[] measured,
        final AtomicBoolean running,
        final AtomicReference<Throwable> failure)
    {
        try
        {
            pin(settings.pingerCpu());
            final IdleStrategy idle = settings.idleStrategy().get();
            long sequence = LAST_SEQUENCE.get();

            final long warmupEndNs = System.nanoTime() + settings.warmupNs();
            for (long i = 0; i < settings.maxRoundTrips() && System.nanoTime() < warmupEndNs; i++)
            {
                roundTrip(pinger, ++sequence, length, idle, System.nanoTime());
            }
            sequence = warmUntilTheJitIsQuiet(pinger, sequence, length, idle);

            final long cpuStartNs = ProcessCpuClock.cpuTimeNs();
            final long startNs = System.nanoTime();
            final long endNs = startNs + settings.measureNs();
            long count = 0;
            long nowNs = startNs;
            while (count < settings.maxRoundTrips() && nowNs < endNs && running.get())
            {
                final long sentNs = System.nanoTime();
                roundTrip(pinger, ++sequence, length, idle, sentNs);
                nowNs = System.nanoTime();
                histogram.recordValue(Math.min(nowNs - sentNs, HIGHEST_TRACKABLE_NS));
                count++;
            }
            measured[0] = count;
            measured[1] = nowNs - startNs;
            measured[2] = cpuStartNs < 0 ? -1 : ProcessCpuClock.cpuTimeNs() - cpuStartNs;
            LAST_SEQUENCE.accumulateAndGet(sequence, Math::max);
        }
        catch (final Throwable ex)
        {
            failure.compareAndSet(null, ex);
        }
    }

    /**
     * Keeps warming up past the warm-up time while this JVM's JIT is still compiling (up to
     * {@link #MAX_JIT_SETTLE_NS}): with the pinger and ponger spinning on the only two CPUs, a compiler thread still
     * at work takes a CPU from one of them for scheduler slices, and a short warm-up (--quick) then measured the
     * compiler, not the contender (in-process rdma round trips swung between 1.4 and 20 us p50 from run to run). A
     * contender's other process (the cross-process ones) warms up on its own and is not watched.
     *
     * @return the last sequence used.
     */
    private long warmUntilTheJitIsQuiet(
        final Pinger pinger, final long firstSequence, final int length, final IdleStrategy idle)
    {
        final CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
        long sequence = firstSequence;
        if (null == jit || !jit.isCompilationTimeMonitoringSupported())
        {
            return sequence;
        }
        final long capNs = System.nanoTime() + MAX_JIT_SETTLE_NS;
        long compiledMs = jit.getTotalCompilationTime();
        long sliceEndNs = System.nanoTime() + JIT_QUIET_SLICE_NS;
        long nowNs = System.nanoTime();
        while (nowNs < capNs)
        {
            roundTrip(pinger, ++sequence, length, idle, nowNs);
            nowNs = System.nanoTime();
            if (nowNs >= sliceEndNs)
            {
                final long totalMs = jit.getTotalCompilationTime();
                if (totalMs == compiledMs)
                {
                    break;
                }
                compiledMs = totalMs;
                sliceEndNs = nowNs + JIT_QUIET_SLICE_NS;
            }
        }
        return sequence;
    }

    private void roundTrip(
        final Pinger pinger, final long sequence, final int length, final IdleStrategy idle, final long sentNs)
    {
        try
        {
            final long deadlineNs = sentNs + settings.stallTimeoutNs();
            int spins = 0;
            idle.reset();
            while (!pinger.send(sequence, length))
            {
                if (++spins % SPINS_BETWEEN_CLOCK_READS == 0 && System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException("could not send message " + sequence + " for " + stallMs() + " ms");
                }
                idle.idle();
            }
            idle.reset();
            while (!pinger.pollEcho(sequence))
            {
                if (++spins % SPINS_BETWEEN_CLOCK_READS == 0 && System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException("no echo of message " + sequence + " within " + stallMs() + " ms");
                }
                idle.idle();
            }
        }
        catch (final RuntimeException | Error ex)
        {
            LAST_SEQUENCE.accumulateAndGet(sequence, Math::max); // it may still be in flight: the next run goes past it
            throw ex;
        }
    }

    private void pong(final Ponger ponger, final AtomicBoolean running, final AtomicReference<Throwable> failure)
    {
        try
        {
            pin(settings.pongerCpu());
            final IdleStrategy idle = settings.idleStrategy().get();
            final long deadlineNs = System.nanoTime() + settings.latencyRunLimitNs();
            int spins = 0;
            while (running.get())
            {
                idle.idle(ponger.echo());
                if (++spins % SPINS_BETWEEN_CLOCK_READS == 0 && System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException("ponger still running after its time limit");
                }
            }
        }
        catch (final Throwable ex)
        {
            if (running.get())
            {
                failure.compareAndSet(null, ex);
            }
        }
    }

    private long stallMs()
    {
        return TimeUnit.NANOSECONDS.toMillis(settings.stallTimeoutNs());
    }

    /**
     * Pins the calling thread with bus-core's {@link Affinity} (sched_setaffinity through FFM).
     *
     * @param cpu the CPU, or {@link Affinity#NO_CPU}.
     */
    static void pin(final int cpu)
    {
        if (Affinity.NO_CPU != cpu)
        {
            Affinity.pinCurrentThread(cpu);
        }
    }

    static boolean join(final Thread thread, final long timeoutNs)
    {
        try
        {
            return thread.join(java.time.Duration.ofNanos(timeoutNs));
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    static String describe(final Throwable error)
    {
        final String message = error.getMessage();
        return null == message ? error.getClass().getSimpleName() : message.replace('\n', ' ');
    }
}
