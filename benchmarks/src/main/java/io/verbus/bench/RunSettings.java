package io.verbus.bench;

import io.verbus.driver.Affinity;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.util.BitSet;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * How long and how hard each measurement runs. Every loop in the runners is bounded by a count and a time taken
 * from here.
 *
 * @param warmupNs        warm-up before recording, per size.
 * @param measureNs       latency measurement per size.
 * @param maxRoundTrips   latency measurement cap per size (also caps the warm-up).
 * @param throughputNs    throughput measurement per size (the warm-up is a shorter run of the same).
 * @param maxMessages     throughput cap per size.
 * @param stallTimeoutNs  a message that takes longer than this fails the contender instead of hanging the run.
 * @param pingerCpu       CPU of the pinger / publisher thread, -1 for none.
 * @param pongerCpu       CPU of the ponger / subscriber thread, -1 for none.
 * @param idleStrategy    what a waiting thread does: busy-spin for measurements, backing off in tests.
 */
public record RunSettings(
    long warmupNs,
    long measureNs,
    long maxRoundTrips,
    long throughputNs,
    long maxMessages,
    long stallTimeoutNs,
    int pingerCpu,
    int pongerCpu,
    Supplier<IdleStrategy> idleStrategy)
{
    public static final long DEFAULT_STALL_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    /**
     * The least JIT warm-up a contender gets before its first size, latency and throughput: with 1 s, quick runs still
     * measured compilation (rdma/tcp 32 B p99 1.2 ms after a short warm-up, 0.1 ms after 5 s).
     */
    public static final long MIN_CONTENDER_WARMUP_NS = TimeUnit.SECONDS.toNanos(3);
    /** A quick run gives up on a stalled contender sooner, to stay within its few minutes. */
    public static final long QUICK_STALL_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);
    public static final long DEFAULT_MAX_MESSAGES = 500_000_000L;
    /** Slack on top of the stall timeouts: a waiting thread reads the clock only every few hundred idles. */
    public static final long RUN_LIMIT_MARGIN_NS = TimeUnit.SECONDS.toNanos(1);

    public RunSettings
    {
        Objects.requireNonNull(idleStrategy, "idleStrategy");
    }

    /**
     * @param options the command line.
     * @return settings for a real measurement: busy-spinning waits, pinned as the options say when this process may
     * run on both CPUs (else unpinned, and the report says so).
     */
    public static RunSettings from(final BenchOptions options)
    {
        final BitSet allowed = allowedCpus();
        final boolean pin = options.pingerCpu() >= 0 && allowed.get(options.pingerCpu()) &&
            options.pongerCpu() >= 0 && allowed.get(options.pongerCpu());
        return new RunSettings(
            options.warmupNs(),
            options.measureNs(),
            options.maxRoundTrips(),
            options.throughputNs(),
            DEFAULT_MAX_MESSAGES,
            options.quick() ? QUICK_STALL_TIMEOUT_NS : DEFAULT_STALL_TIMEOUT_NS,
            pin ? options.pingerCpu() : -1,
            pin ? options.pongerCpu() : -1,
            BusySpinIdleStrategy::new);
    }

    /**
     * @param contender about to be measured.
     * @return these settings, with yielding waits when the contender has helper threads and the waits would
     * otherwise busy-spin.
     */
    public RunSettings forContender(final Contender contender)
    {
        if (contender.runsHelperThreads() && idleStrategy.get() instanceof BusySpinIdleStrategy)
        {
            return new RunSettings(warmupNs, measureNs, maxRoundTrips, throughputNs, maxMessages, stallTimeoutNs,
                pingerCpu, pongerCpu, YieldingIdleStrategy::new);
        }
        return this;
    }

    private static BitSet allowedCpus()
    {
        try
        {
            return Affinity.allowedCpus();
        }
        catch (final RuntimeException | LinkageError ex)
        {
            return new BitSet(); // no sched_getaffinity here: run unpinned
        }
    }

    /**
     * @return the JIT warm-up a contender gets once before its first size, latency or throughput: twice the usual
     * warm-up and at least {@link #MIN_CONTENDER_WARMUP_NS}, so the first size is not measured on colder code than
     * the others (on two cores the JIT compiler threads share the CPUs with the spinning threads and need time).
     */
    public long contenderWarmupNs()
    {
        return Math.max(2 * warmupNs, MIN_CONTENDER_WARMUP_NS);
    }

    /**
     * @return settings for a latency pass that only warms up ({@link #contenderWarmupNs()}, a token measurement).
     */
    public RunSettings warmUpOnly()
    {
        return new RunSettings(contenderWarmupNs(), 1, maxRoundTrips, throughputNs,
            maxMessages, stallTimeoutNs, pingerCpu, pongerCpu, idleStrategy);
    }

    public boolean pinned()
    {
        return pingerCpu >= 0 && pongerCpu >= 0;
    }

    /** @return a bound on a whole latency run of one size, after which it is abandoned as hung. */
    public long latencyRunLimitNs()
    {
        return warmupNs + measureNs + 2 * stallTimeoutNs + RUN_LIMIT_MARGIN_NS;
    }

    /**
     * @param durationNs of one throughput phase.
     * @return a bound on that phase, after which it is abandoned as hung.
     */
    public long throughputPhaseLimitNs(final long durationNs)
    {
        return durationNs + 2 * stallTimeoutNs + RUN_LIMIT_MARGIN_NS;
    }
}
