package io.verbus.gateway;

import io.verbus.gateway.GatewayConfig.Part;
import io.verbus.gateway.feed.FeedHandler;
import io.verbus.gateway.orders.OrderGateway;
import io.verbus.gateway.report.HistogramFiles;
import io.verbus.gateway.report.PercentileTable;
import io.verbus.gateway.strategy.Strategy;
import io.verbus.tools.SvgPercentilePlot;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * One run of the gateway from launch to report: start the parts, sample the tick-to-trade recorder once a second
 * (into the interval log, and into the run's histogram once the warm-up is over), print a progress line now and then,
 * stop on time or when asked, let in-flight answers arrive, close everything, and report.
 */
public final class GatewayRun
{
    /** Highest latency the histogram tracks: 60 s in ns; anything slower is clamped there. */
    public static final long HIGHEST_TRACKABLE_NS = TimeUnit.SECONDS.toNanos(60);
    /** Precision of the histograms. */
    public static final int SIGNIFICANT_DIGITS = 3;

    /** @return how the parts and the driver run, and why, as the report prints it beside tick-to-trade. */
    static String describeThreads(final GatewayConfig config)
    {
        final String parts = config.dedicatedThreads() ? "one thread per part" : "the parts share one thread";
        final String idle = "idle " + config.idleStrategy() + (config.isIdleChosenForTheHost() ?
            " (chosen for this host: " + Runtime.getRuntime().availableProcessors() + " CPUs; --idle backoff to " +
            "override)" : "");
        final String driver = config.driverInvoked() ?
            "driver invoked on the parts' thread (invoker mode: one spinning thread per process)" :
            "driver on its own thread, idle " + config.driverIdleStrategy();
        return parts + ", " + idle + ", " + driver;
    }

    private static final long SAMPLE_INTERVAL_NS = TimeUnit.SECONDS.toNanos(1);
    /**
     * Longest sleep of the reporting loop between its due times (samples, progress, the end): how soon it notices a
     * stop request. It sleeps until the next due time otherwise, so on a 2-CPU host, where both processes' parts spin,
     * it takes a spinner's CPU a few times a second rather than at a fixed 50 Hz.
     */
    private static final long MAX_SLEEP_NS = TimeUnit.MILLISECONDS.toNanos(250);
    private static final long DRAIN_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);

    /**
     * What a run measured and checked.
     *
     * @param tickToTrade        histogram of the run after warm-up (ns); empty without a strategy.
     * @param feedMessages       market data messages published by this process's feed (0 without one).
     * @param ordersSent         new orders sent by this process's strategy.
     * @param requestsSent       new orders and cancels sent.
     * @param answers            answers received that matched the request in flight.
     * @param unexpectedAnswers  answers that matched none (duplicates or strays).
     * @param inFlightAtEnd      requests still unanswered when the run ended.
     * @param bookFaults         sequence gaps or entries that did not fit a book.
     * @param snapshotMismatches snapshots that disagreed with an up-to-date book.
     * @param gatewayAnswered    requests answered by this process's order gateway.
     * @param filesDirectory     where the files went, or null when none were written.
     * @param interrupted        true when stopped early (Ctrl-C).
     */
    public record Result(
        Histogram tickToTrade,
        long feedMessages,
        long ordersSent,
        long requestsSent,
        long answers,
        long unexpectedAnswers,
        long inFlightAtEnd,
        long bookFaults,
        long snapshotMismatches,
        long gatewayAnswered,
        Path filesDirectory,
        boolean interrupted)
    {
        /** @return true when every request got exactly one answer. */
        public boolean everyRequestAnsweredOnce()
        {
            return unexpectedAnswers == 0 && inFlightAtEnd == 0 && answers == requestsSent;
        }
    }

    private GatewayRun()
    {
    }

    /**
     * Run the gateway as configured.
     *
     * @param config        of the run.
     * @param out           for the banner, progress lines and the report.
     * @param stopRequested set by another thread (the shutdown hook) to end the run early.
     * @param gatewayHolder receives the running gateway, so a shutdown hook can close it if this thread is stuck.
     * @return what was measured.
     * @throws IOException          when the report files cannot be written.
     * @throws InterruptedException when interrupted while waiting.
     */
    public static Result run(
        final GatewayConfig config,
        final PrintStream out,
        final AtomicBoolean stopRequested,
        final AtomicReference<Gateway> gatewayHolder) throws IOException, InterruptedException
    {
        out.printf(Locale.ROOT, "Verbus trading gateway: parts [%s] in this process%n", config.roleName());
        out.printf(Locale.ROOT, "  channels: %s%n", config.describeChannels());
        out.printf(Locale.ROOT, "  market: %d instruments, depth %d, %,d msgs/s, bursts up to %d; run %s " +
            "(warm-up %s)%n", config.instruments(), config.depth(), config.ratePerSecond(), config.maxBurst(),
            GatewayConfig.formatSeconds(config.durationNs()), GatewayConfig.formatSeconds(config.warmupNs()));
        out.printf(Locale.ROOT, "  threads: %s; Verbus dir %s%n", describeThreads(config), config.verbusDir());
        out.printf(Locale.ROOT, "  live counters, from another shell: ./verbus stat --dir %s%n", config.verbusDir());

        final boolean measuring = config.runs(Part.STRATEGY);
        final Recorder recorder = new Recorder(HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS);
        final Histogram total = new Histogram(HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS);
        // The warm-up's intervals go through the same code into a histogram nobody reads, so that the JIT has compiled
        // the adding before the measured intervals start: compiling it then took a CPU from a spinning part.
        final Histogram warmup = new Histogram(HIGHEST_TRACKABLE_NS, SIGNIFICANT_DIGITS);
        final long startMs = System.currentTimeMillis();
        final HistogramFiles files = measuring ?
            new HistogramFiles(config.outputDir(), startMs, config.describeChannels()) : null;

        final Gateway gateway = Gateway.launch(config, recorder, throwable ->
        {
            out.println("gateway: agent error: " + throwable);
            throwable.printStackTrace(out);
        });
        gatewayHolder.set(gateway);

        boolean interrupted = false;
        Result result;
        try
        {
            final long startNs = System.nanoTime();
            long nextSampleNs = startNs + SAMPLE_INTERVAL_NS;
            long nextProgressNs = config.progressIntervalNs() > 0 && config.durationNs() > config.progressIntervalNs() ?
                startNs + config.progressIntervalNs() : Long.MAX_VALUE;
            long lastSampleMs = startMs;
            long lastSampleNs = startNs;
            Histogram interval = null;

            while (true)
            {
                final long nowNs = System.nanoTime();
                if (stopRequested.get())
                {
                    interrupted = true;
                    break;
                }
                if (nowNs - startNs >= config.durationNs())
                {
                    break;
                }
                if (nowNs - nextSampleNs >= 0)
                {
                    nextSampleNs += SAMPLE_INTERVAL_NS;
                    if (measuring)
                    {
                        interval = recorder.getIntervalHistogram(interval);
                        // Only intervals that began after the warm-up count towards the run's histogram.
                        lastSampleMs = sample(interval, lastSampleMs,
                            lastSampleNs - startNs >= config.warmupNs() ? total : warmup, files);
                        lastSampleNs = nowNs;
                    }
                }
                if (nowNs - nextProgressNs >= 0)
                {
                    nextProgressNs += config.progressIntervalNs();
                    final boolean warmingUp = 0 == total.getTotalCount();
                    out.println(progressLine(gateway, nowNs - startNs, warmingUp ? warmup : total, warmingUp));
                }
                final long dueNs = Math.min(Math.min(nextSampleNs, nextProgressNs), startNs + config.durationNs());
                final long sleepNs = Math.min(MAX_SLEEP_NS, Math.max(0, dueNs - System.nanoTime()));
                if (sleepNs > 0)
                {
                    Thread.sleep(TimeUnit.NANOSECONDS.toMillis(sleepNs), (int)(sleepNs % 1_000_000));
                }
            }

            gateway.quiesce();
            final boolean drained = gateway.awaitNothingInFlight(DRAIN_TIMEOUT_NS);
            if (!drained)
            {
                out.println("gateway: requests still in flight after " +
                    TimeUnit.NANOSECONDS.toSeconds(DRAIN_TIMEOUT_NS) + "s of draining");
            }
            if (measuring)
            {
                interval = recorder.getIntervalHistogram(interval);
                sample(interval, lastSampleMs, lastSampleNs - startNs >= config.warmupNs() ? total : warmup, files);
            }
        }
        finally
        {
            gateway.close();
            if (null != files)
            {
                files.close();
            }
        }

        result = result(gateway, total, null == files ? null : files.directory(), interrupted);
        report(config, out, gateway, result, files);
        return result;
    }

    private static long sample(
        final Histogram interval,
        final long lastSampleMs,
        final Histogram into,
        final HistogramFiles files)
    {
        final long nowMs = System.currentTimeMillis();
        interval.setStartTimeStamp(lastSampleMs);
        interval.setEndTimeStamp(nowMs);
        into.add(interval);
        files.appendInterval(interval);
        return nowMs;
    }

    static String progressLine(
        final Gateway gateway, final long elapsedNs, final Histogram shown, final boolean warmingUp)
    {
        final StringBuilder line = new StringBuilder(String.format(Locale.ROOT, "[%5.1fs]", elapsedNs / 1e9));
        if (null != gateway.feed())
        {
            line.append(String.format(Locale.ROOT, " md %,d", gateway.feed().counters().get(FeedHandler.MESSAGES)));
        }
        if (null != gateway.strategy())
        {
            final PartCounters s = gateway.strategy().counters();
            line.append(String.format(Locale.ROOT, " | orders %,d answers %,d (fills %,d acks %,d rejects %,d)",
                s.get(Strategy.ORDERS_SENT), s.get(Strategy.ANSWERS), s.get(Strategy.FILLS), s.get(Strategy.ACKS),
                s.get(Strategy.REJECTS)));
            if (shown.getTotalCount() > 0)
            {
                line.append(String.format(Locale.ROOT, " | tick-to-trade p50 %.1fus p99 %.1fus%s",
                    shown.getValueAtPercentile(50) / 1000.0, shown.getValueAtPercentile(99) / 1000.0,
                    warmingUp ? " (warm-up, not counted)" : ""));
            }
        }
        if (null != gateway.orderGateway())
        {
            line.append(String.format(Locale.ROOT, " | gateway answered %,d",
                gateway.orderGateway().counters().get(OrderGateway.ANSWERED)));
        }
        return line.toString();
    }

    private static Result result(
        final Gateway gateway, final Histogram total, final Path filesDirectory, final boolean interrupted)
    {
        final Strategy strategy = gateway.strategy();
        final PartCounters s = null == strategy ? null : strategy.counters();
        return new Result(
            total,
            null == gateway.feed() ? 0 : gateway.feed().counters().get(FeedHandler.MESSAGES),
            null == s ? 0 : s.get(Strategy.ORDERS_SENT),
            null == s ? 0 : s.get(Strategy.ORDERS_SENT) + s.get(Strategy.CANCELS_SENT),
            null == s ? 0 : s.get(Strategy.ANSWERS),
            null == s ? 0 : s.get(Strategy.UNEXPECTED_ANSWERS),
            null == s ? 0 : s.get(Strategy.IN_FLIGHT),
            null == s ? 0 : s.get(Strategy.BOOK_FAULTS),
            null == s ? 0 : s.get(Strategy.SNAPSHOT_MISMATCHES),
            null == gateway.orderGateway() ? 0 : gateway.orderGateway().counters().get(OrderGateway.ANSWERED),
            filesDirectory,
            interrupted);
    }

    private static void report(
        final GatewayConfig config,
        final PrintStream out,
        final Gateway gateway,
        final Result result,
        final HistogramFiles files) throws IOException
    {
        out.println();
        out.println(result.interrupted() ? "Stopped early (interrupt); report of what ran:" : "Run complete.");
        if (null != gateway.feed())
        {
            final PartCounters f = gateway.feed().counters();
            out.printf(Locale.ROOT, "  feed: %,d messages (%,d refreshes), %,d offers refused by back pressure, " +
                "%,d while no subscriber was connected%n", f.get(FeedHandler.MESSAGES), f.get(FeedHandler.REFRESHES),
                f.get(FeedHandler.BACK_PRESSURE), f.get(FeedHandler.NOT_CONNECTED));
        }
        if (null != gateway.orderGateway())
        {
            final PartCounters g = gateway.orderGateway().counters();
            out.printf(Locale.ROOT, "  order gateway: %,d answered (fills %,d, acks %,d, rejects %,d, " +
                "cancels %,d), %,d answers refused by back pressure, %,d while the strategy was not connected%n",
                g.get(OrderGateway.ANSWERED), g.get(OrderGateway.FILLS), g.get(OrderGateway.ACKS),
                g.get(OrderGateway.REJECTS), g.get(OrderGateway.CANCELS_REPLACES), g.get(OrderGateway.BACK_PRESSURE),
                g.get(OrderGateway.NOT_CONNECTED));
        }
        if (null == gateway.strategy())
        {
            return;
        }

        final PartCounters s = gateway.strategy().counters();
        out.printf(Locale.ROOT, "  strategy: %,d md messages, %,d book entries applied, %,d orders + %,d cancels " +
            "sent, %,d not sent (order stream not connected or back-pressured)%n", s.get(Strategy.MD_MESSAGES),
            s.get(Strategy.ENTRIES_APPLIED), s.get(Strategy.ORDERS_SENT), s.get(Strategy.CANCELS_SENT),
            s.get(Strategy.SEND_FAILURES));
        final long session = s.get(Strategy.SESSION);
        out.printf(Locale.ROOT, "  session: %s (protocol %d.%d)%n",
            session == 1 ? "logged on" : session < 0 ? "logon REFUSED by the order gateway" : "never logged on",
            SessionProtocol.MAJOR, SessionProtocol.MINOR);
        out.printf(Locale.ROOT, "  checks: every request answered exactly once: %s (%,d sent, %,d answered, " +
            "%,d unexpected, %,d in flight); books: %,d gaps/faults, %,d snapshot mismatches%n",
            result.everyRequestAnsweredOnce() ? "yes" : "NO", result.requestsSent(), result.answers(),
            result.unexpectedAnswers(), result.inFlightAtEnd(), result.bookFaults(), result.snapshotMismatches());
        out.println();

        final Histogram total = result.tickToTrade();
        out.print(PercentileTable.format(
            "Tick-to-trade (feed publish -> execution report received), after warm-up; channels: " +
            config.describeChannels() + "; threads: " + describeThreads(config), total));

        if (total.getTotalCount() > 0)
        {
            final Path hgrm = files.writePercentileDistribution(total);
            final Path svg = files.directory().resolve(HistogramFiles.SVG_FILE);
            java.nio.file.Files.writeString(svg, SvgPercentilePlot.render("Verbus gateway tick-to-trade",
                List.of(new SvgPercentilePlot.Panel(String.format(Locale.ROOT, "%,d orders, %s",
                    total.getTotalCount(), config.describeChannels()),
                    List.of(new SvgPercentilePlot.Series("tick-to-trade", total))))));
            out.println();
            out.println("Files:");
            out.println("  " + hgrm.toAbsolutePath() + "   (percentile distribution, us)");
            out.println("  " + files.directory().resolve(HistogramFiles.LOG_FILE).toAbsolutePath() +
                "   (HdrHistogram interval log, ns)");
            out.println("  " + svg.toAbsolutePath() + "   (percentile plot)");
        }
        else
        {
            out.println("No orders were answered after the warm-up: nothing to plot (interval log at " +
                files.directory().resolve(HistogramFiles.LOG_FILE).toAbsolutePath() + ")");
        }
    }
}
