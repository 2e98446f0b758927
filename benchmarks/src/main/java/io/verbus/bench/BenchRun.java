package io.verbus.bench;

import java.io.PrintStream;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;

/**
 * One run of the harness: every contender, one after another in this process, latency then throughput, then the
 * seed comparison. A contender that cannot run, or fails, is recorded with its reason and the run goes on.
 */
public final class BenchRun
{
    private final BenchOptions options;
    private final RunSettings settings;
    private final PrintStream log;

    public BenchRun(final BenchOptions options, final RunSettings settings, final PrintStream log)
    {
        this.options = options;
        this.settings = settings;
        this.log = log;
    }

    /**
     * @param contenders to measure, in table order.
     * @return the report.
     */
    public BenchReport run(final List<Contender> contenders)
    {
        final Instant startedAt = Instant.now();
        final MachineInfo machine = MachineInfo.current();
        final List<BenchResult> results = new ArrayList<>();

        if (options.runs(BenchOptions.Part.LATENCY))
        {
            results.addAll(inRounds(BenchResult.LATENCY, contenders, this::latency));
        }
        if (options.runs(BenchOptions.Part.THROUGHPUT))
        {
            results.addAll(inRounds(BenchResult.THROUGHPUT, contenders, this::throughput));
        }
        if (options.runs(BenchOptions.Part.SEED))
        {
            results.addAll(SeedComparison.run(this));
        }
        if (options.runs(BenchOptions.Part.BURST))
        {
            for (final Contender contender : contenders)
            {
                results.addAll(burst(contender));
            }
        }
        return new BenchReport(
            startedAt, machine, MachineInfo.currentLoadAverage(), options.quick(), pinning(), plan(), results);
    }

    /**
     * One part for every contender, {@link BenchOptions#rounds()} times over (each round runs every contender once,
     * in table order, so a drift of the machine's speed between minutes falls on all of them alike), and each
     * contender's median round per size ({@link MedianRound}).
     */
    private List<BenchResult> inRounds(
        final String part, final List<Contender> contenders, final Function<Contender, List<BenchResult>> measure)
    {
        final int rounds = options.rounds();
        final List<List<List<BenchResult>>> byContender = new ArrayList<>();
        for (int round = 1; round <= rounds; round++)
        {
            if (rounds > 1)
            {
                log.println("bench: " + part + " round " + round + " of " + rounds);
            }
            for (int i = 0; i < contenders.size(); i++)
            {
                final List<BenchResult> sizes = measure.apply(contenders.get(i));
                if (1 == round)
                {
                    byContender.add(new ArrayList<>());
                }
                byContender.get(i).add(sizes);
            }
        }
        final List<BenchResult> picked = new ArrayList<>();
        for (int i = 0; i < contenders.size(); i++)
        {
            final List<List<BenchResult>> roundsOfContender = byContender.get(i);
            for (int size = 0; size < roundsOfContender.getFirst().size(); size++)
            {
                final List<BenchResult> roundsOfSize = new ArrayList<>();
                for (final List<BenchResult> round : roundsOfContender)
                {
                    roundsOfSize.add(round.get(size));
                }
                final BenchResult median = MedianRound.pick(roundsOfSize);
                if (rounds > 1 && median.ok())
                {
                    log.println("bench: " + part + " " + median.contender() + " " + median.sizeBytes() +
                        " B by round: " + MedianRound.spread(roundsOfSize) + " (the median round is reported)");
                }
                picked.add(median);
            }
        }
        return picked;
    }

    /**
     * @param contender to measure.
     * @return one result per latency size.
     */
    public List<BenchResult> latency(final Contender contender)
    {
        return latency(BenchResult.LATENCY, contender);
    }

    /**
     * @param contender to measure.
     * @return one result per throughput size.
     */
    public List<BenchResult> throughput(final Contender contender)
    {
        return throughput(BenchResult.THROUGHPUT, contender);
    }

    /**
     * @param part      the report part the results belong to.
     * @param contender to measure.
     * @return one result per latency size.
     */
    public List<BenchResult> latency(final String part, final Contender contender)
    {
        final int[] sizes = options.latencySizes();
        final List<BenchResult> results = new ArrayList<>();
        final String reason = reasonNotToRun(contender);
        if (null != reason)
        {
            for (final int size : sizes)
            {
                results.add(BenchResult.notRun(part, contender.name(), contender.provider(), size, reason));
            }
            return results;
        }

        log.println("bench: " + part + " " + contender.name() + " [" + contender.provider() + "]");
        final RunSettings contenderSettings = settings.forContender(contender);
        final LatencyRunner runner = new LatencyRunner(contenderSettings);
        try (PingPongPair pair = contender.openPingPong(max(sizes)))
        {
            // JIT warm-up of this contender's code, discarded; failures show in the measured runs that follow
            new LatencyRunner(contenderSettings.warmUpOnly()).run(part, contender, pair, sizes[0]);
            boolean failed = false;
            for (final int size : sizes)
            {
                final BenchResult result = failed ?
                    BenchResult.failed(part, contender.name(), contender.provider(), size,
                        "an earlier size failed") :
                    runner.run(part, contender, pair, size);
                failed = !result.ok();
                results.add(result);
                log.println("bench:   " + size + " B " + summary(result));
            }
        }
        catch (final Exception ex)
        {
            failAll(results, part, contender, sizes, ex);
        }
        return results;
    }

    /**
     * @param part      the report part the results belong to.
     * @param contender to measure.
     * @return one result per throughput size.
     */
    public List<BenchResult> throughput(final String part, final Contender contender)
    {
        final ThroughputRunner runner = new ThroughputRunner(settings.forContender(contender));
        return perStream(part, contender, options.throughputSizes(), reasonNotToRun(contender),
            (pair, size, first) -> first ? runner.runAfterContenderWarmUp(part, contender, pair, size) :
                runner.run(part, contender, pair, size));
    }

    /**
     * @param contender to measure.
     * @return one result per latency size: the longest silences after its bursts' last sends.
     */
    public List<BenchResult> burst(final Contender contender)
    {
        final String notRunReason = reasonNotToRun(contender);
        final BurstTailRunner runner = new BurstTailRunner(settings.forContender(contender));
        return perStream(BenchResult.BURST, contender, options.latencySizes(),
            null != notRunReason ? notRunReason : contender.burstTailUnavailableReason(),
            (pair, size, first) -> first ? runner.runAfterContenderWarmUp(BenchResult.BURST, contender, pair, size) :
                runner.run(BenchResult.BURST, contender, pair, size));
    }

    /** One measurement of a stream of one size; {@code first} for the contender's first size. */
    @FunctionalInterface
    private interface StreamMeasurement
    {
        BenchResult measure(StreamPair pair, int size, boolean first);
    }

    /**
     * A fresh stream per size (a size that failed or left bytes in flight cannot spoil the next), measured; or every
     * size listed as not run, with the reason.
     */
    private List<BenchResult> perStream(
        final String part,
        final Contender contender,
        final int[] sizes,
        final String reason,
        final StreamMeasurement measurement)
    {
        final List<BenchResult> results = new ArrayList<>();
        if (null != reason)
        {
            for (final int size : sizes)
            {
                results.add(BenchResult.notRun(part, contender.name(), contender.provider(), size, reason));
            }
            return results;
        }

        log.println("bench: " + part + " " + contender.name() + " [" + contender.provider() + "]");
        boolean first = true;
        for (final int size : sizes)
        {
            try (StreamPair pair = contender.openStream(size))
            {
                final BenchResult result = measurement.measure(pair, size, first);
                first = false;
                results.add(result);
                log.println("bench:   " + size + " B " + summary(result));
            }
            catch (final Exception ex)
            {
                results.add(BenchResult.failed(part, contender.name(), contender.provider(), size,
                    "set-up failed: " + LatencyRunner.describe(ex)));
            }
        }
        return results;
    }

    private String reasonNotToRun(final Contender contender)
    {
        if (!options.selects(contender.name()))
        {
            return "not selected by --contenders";
        }
        return contender.unavailableReason();
    }

    private void failAll(
        final List<BenchResult> results,
        final String part,
        final Contender contender,
        final int[] sizes,
        final Exception ex)
    {
        for (int i = results.size(); i < sizes.length; i++)
        {
            results.add(BenchResult.failed(part, contender.name(), contender.provider(), sizes[i],
                "set-up failed: " + LatencyRunner.describe(ex)));
        }
        log.println("bench:   " + contender.name() + " failed: " + LatencyRunner.describe(ex));
    }

    private String plan()
    {
        return String.format(java.util.Locale.ROOT,
            "latency: %d ms warm-up, then %d ms or %d round trips per size; throughput: %d ms per size after a " +
            "shorter warm-up; stall timeout %d ms" + (options.rounds() > 1 ? "; " + options.rounds() +
            " rounds of both, each contender's median round reported" : ""),
            TimeUnit.NANOSECONDS.toMillis(settings.warmupNs()), TimeUnit.NANOSECONDS.toMillis(settings.measureNs()),
            settings.maxRoundTrips(), TimeUnit.NANOSECONDS.toMillis(settings.throughputNs()),
            TimeUnit.NANOSECONDS.toMillis(settings.stallTimeoutNs()));
    }

    private String pinning()
    {
        final String spin = "exactly two spinning threads (pinger/publisher and ponger/subscriber)";
        return settings.pinned() ?
            spin + ", pinned to CPUs " + settings.pingerCpu() + " and " + settings.pongerCpu() :
            spin + ", not pinned";
    }

    private static String summary(final BenchResult result)
    {
        if (!result.ok())
        {
            return result.statusText();
        }
        if (null != result.histogram())
        {
            return "p50 " + ResultTable.micros(result.valueAtPercentileNs(50)) + " us, p99.9 " +
                ResultTable.micros(result.valueAtPercentileNs(99.9)) + " us, " + result.messages() +
                (BenchResult.BURST.equals(result.part()) ? " bursts" : " round trips");
        }
        return String.format(java.util.Locale.ROOT, "%,.0f msgs/s", result.messagesPerSecond());
    }

    static int max(final int[] values)
    {
        int max = 0;
        for (final int value : values)
        {
            max = Math.max(max, value);
        }
        return max;
    }
}
