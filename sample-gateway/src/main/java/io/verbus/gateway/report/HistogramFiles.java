package io.verbus.gateway.report;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogWriter;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The files a run leaves behind: the percentile distribution as an .hgrm (values in microseconds, readable by
 * HdrHistogram's online plotter), and an HdrHistogram interval log (.hlog, nanoseconds, one interval per second) that
 * tools such as HistogramLogProcessor read back.
 */
public final class HistogramFiles implements AutoCloseable
{
    /** File name of the percentile distribution. */
    public static final String HGRM_FILE = "tick-to-trade.hgrm";
    /** File name of the interval log. */
    public static final String LOG_FILE = "tick-to-trade.hlog";
    /** File name of the plot. */
    public static final String SVG_FILE = "tick-to-trade.svg";

    private static final double NANOS_PER_MICRO = 1000.0;

    private final Path directory;
    private final PrintStream logStream;
    private final HistogramLogWriter logWriter;
    private final List<Histogram> intervals = new ArrayList<>();

    /**
     * Create the directory and start the interval log.
     *
     * @param directory   for the files.
     * @param startTimeMs wall clock start of the run, for the log header.
     * @param comment     for the log header (e.g. the channels).
     * @throws IOException when the directory or the log cannot be created.
     */
    public HistogramFiles(final Path directory, final long startTimeMs, final String comment) throws IOException
    {
        this.directory = directory;
        Files.createDirectories(directory);
        this.logStream = new PrintStream(Files.newOutputStream(directory.resolve(LOG_FILE)), false,
            StandardCharsets.UTF_8);
        this.logWriter = new HistogramLogWriter(logStream);
        logWriter.outputComment("tick-to-trade in nanoseconds: " + comment);
        logWriter.outputLogFormatVersion();
        logWriter.outputStartTime(startTimeMs);
        logWriter.setBaseTime(startTimeMs);
        logWriter.outputLegend();
    }

    /**
     * Keep one interval for the log (its start and end timestamps must be set, in milliseconds); the log is written
     * when the run closes. Why not at once: encoding, compressing and writing an interval took the reporting thread
     * 0.5-2.5 ms each second, and on a 2-CPU host every such millisecond is taken from one of the two spinning
     * processes whose tick-to-trade is being measured (perf sched showed it beside the control threads' wake-ups).
     *
     * @param interval histogram of the interval (copied: the caller reuses it).
     */
    public void appendInterval(final Histogram interval)
    {
        intervals.add(interval.copy());
    }

    /**
     * Write the .hgrm of the whole run.
     *
     * @param total histogram of the run.
     * @return the file written.
     * @throws IOException when it cannot be written.
     */
    public Path writePercentileDistribution(final Histogram total) throws IOException
    {
        final Path file = directory.resolve(HGRM_FILE);
        try (PrintStream out = new PrintStream(Files.newOutputStream(file), false, StandardCharsets.UTF_8))
        {
            total.outputPercentileDistribution(out, NANOS_PER_MICRO);
        }
        return file;
    }

    /** @return the directory of the files. */
    public Path directory()
    {
        return directory;
    }

    /** Write the intervals kept so far and close the interval log. */
    @Override
    public void close()
    {
        for (final Histogram interval : intervals)
        {
            logWriter.outputIntervalHistogram(interval);
        }
        intervals.clear();
        logStream.close();
    }
}
