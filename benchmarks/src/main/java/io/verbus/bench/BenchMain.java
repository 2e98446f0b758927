package io.verbus.bench;

import io.verbus.tools.SvgPercentilePlot;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * {@code ./verbus bench}: measures every contender in one process and one run, prints the table, writes the JSON
 * and the SVG percentile plot. {@code --jmh [regex]} runs the JMH suite instead.
 */
public final class BenchMain
{
    /**
     * The media log every connection at INFO; over a run of dozens of set-ups that buries the progress lines, so
     * the harness keeps warnings and errors only. Held here because java.util.logging keeps loggers weakly.
     */
    private static final Logger VERBUS_LOGGER = Logger.getLogger("io.verbus");

    private BenchMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final BenchOptions options;
        try
        {
            options = BenchOptions.parse(args);
        }
        catch (final IllegalArgumentException ex)
        {
            System.err.println("verbus bench: " + ex.getMessage());
            System.exit(2);
            return;
        }
        if (options.help())
        {
            System.out.print(BenchOptions.usage());
            return;
        }
        if (options.jmh())
        {
            org.openjdk.jmh.Main.main(options.jmhArgs().toArray(new String[0]));
            return;
        }

        VERBUS_LOGGER.setLevel(Level.WARNING);
        final RunSettings settings = RunSettings.from(options);
        final BenchReport report =
            new BenchRun(options, settings, System.err).run(Contenders.all(settings.pongerCpu()));
        System.out.println();
        System.out.print(ResultTable.render(report));
        write(report, options, System.out);
    }

    /**
     * Writes the JSON (when asked for) and the SVG plot.
     *
     * @param report  the run.
     * @param options where to write.
     * @param out     where to say what was written.
     * @throws IOException when a file cannot be written.
     */
    static void write(final BenchReport report, final BenchOptions options, final PrintStream out) throws IOException
    {
        if (null != options.jsonFile())
        {
            writeFile(options.jsonFile(), JsonReport.render(report));
            out.println("json: " + options.jsonFile().toAbsolutePath());
        }
        writeFile(options.svgFile(), SvgPercentilePlot.render(
            "Verbus bench: round-trip latency by percentile (" + report.machine().cpuModel() + ", " +
                report.machine().cpus() + " CPUs)", latencyPanels(report, options.latencySizes())));
        out.println("svg:  " + options.svgFile().toAbsolutePath());
    }

    static List<SvgPercentilePlot.Panel> latencyPanels(final BenchReport report, final int[] sizes)
    {
        final List<SvgPercentilePlot.Panel> panels = new ArrayList<>();
        for (final int size : sizes)
        {
            final List<SvgPercentilePlot.Series> series = new ArrayList<>();
            for (final BenchResult result : report.results())
            {
                if (BenchResult.LATENCY.equals(result.part()) && result.sizeBytes() == size && result.hasHistogram())
                {
                    series.add(new SvgPercentilePlot.Series(result.contender(), result.histogram()));
                }
            }
            panels.add(new SvgPercentilePlot.Panel(size + "-byte messages", series));
        }
        return panels;
    }

    private static void writeFile(final Path file, final String content) throws IOException
    {
        final Path parent = file.toAbsolutePath().getParent();
        if (null != parent)
        {
            Files.createDirectories(parent);
        }
        Files.writeString(file, content);
    }
}
