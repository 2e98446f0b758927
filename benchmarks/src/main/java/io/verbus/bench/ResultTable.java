package io.verbus.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * The terminal table: latency percentiles in microseconds, throughput in messages/s and MB/s, the seed comparison,
 * and every contender that did not run with its reason.
 */
public final class ResultTable
{
    private ResultTable()
    {
    }

    /**
     * @param report the run.
     * @return the table, lines ending in '\n'.
     */
    public static String render(final BenchReport report)
    {
        final StringBuilder out = new StringBuilder(4096);
        final MachineInfo machine = report.machine();
        out.append("Verbus bench ").append(report.quick() ? "(quick) " : "").append(report.startedAt()).append('\n')
            .append("machine: ").append(machine.cpuModel()).append(", ").append(machine.cpus()).append(" CPUs, ")
            .append(machine.os()).append('\n')
            .append("jdk: ").append(machine.jdk()).append('\n')
            .append("threads: ").append(report.pinning()).append('\n')
            .append("plan: ").append(report.plan()).append('\n')
            .append("load average at start: ").append(machine.loadAverage())
            .append(", at end: ").append(report.loadAverageAtEnd()).append('\n');

        section(out, report.results(), BenchResult.LATENCY,
            "LATENCY: round trip (ping-pong), microseconds",
            new String[]{ "contender", "size", "p50", "p90", "p99", "p99.9", "max", "round trips", "provider" });
        section(out, report.results(), BenchResult.THROUGHPUT,
            "THROUGHPUT: one publisher to one subscriber",
            new String[]{ "contender", "size", "msgs/s", "MB/s", "cpu ns/msg", "messages", "provider" });
        section(out, report.results(), BenchResult.BURST,
            "BURST TAIL: a " + String.format(Locale.ROOT, "%,d", BurstTailRunner.BURST_MESSAGES) +
            "-message burst: the subscriber's longest silence after its last send, the publisher running only " +
            "its duty cycle, microseconds",
            new String[]{ "contender", "size", "p50", "p90", "p99", "p99.9", "max", "bursts", "provider" });
        ratios(out, report.results());
        section(out, report.results(), SeedComparison.LATENCY_PART,
            "SEED COMPARISON, latency: round trip, microseconds; cpu = process CPU per round trip",
            new String[]{ "method", "size", "p50", "p90", "p99", "p99.9", "max", "cpu ns/rt", "provider" });
        section(out, report.results(), SeedComparison.THROUGHPUT_PART,
            "SEED COMPARISON, throughput: one sender to one receiver",
            new String[]{ "method", "size", "msgs/s", "MB/s", "cpu ns/msg", "messages", "provider" });
        return out.toString();
    }

    private static void section(
        final StringBuilder out,
        final List<BenchResult> results,
        final String part,
        final String title,
        final String[] header)
    {
        final List<String[]> rows = new ArrayList<>();
        BenchResult previous = null;
        for (final BenchResult result : results)
        {
            if (part.equals(result.part()))
            {
                if (sameNotRun(previous, result))
                {
                    // one line per contender that did not run, its sizes listed together
                    final String[] last = rows.get(rows.size() - 1);
                    last[1] = last[1] + "," + result.sizeBytes();
                }
                else
                {
                    rows.add(row(result, header.length));
                }
                previous = result;
            }
        }
        if (rows.isEmpty())
        {
            return;
        }
        out.append('\n').append(title).append('\n');
        final int[] widths = new int[header.length];
        for (int i = 0; i < header.length; i++)
        {
            widths[i] = header[i].length();
        }
        for (final String[] row : rows)
        {
            // the last column and a status message are free-running
            for (int i = 0; i < row.length - 1; i++)
            {
                if (null != row[i])
                {
                    widths[i] = Math.max(widths[i], row[i].length());
                }
            }
        }
        appendRow(out, header, widths);
        for (final String[] row : rows)
        {
            appendRow(out, row, widths);
        }
    }

    /** Verbus over rdma/shm against the references, per size, at p50 and p99.9. */
    static final String RATIO_SUBJECT = "verbus-rdma-shm-direct";
    static final String[] RATIO_REFERENCES = { "aeron-ipc", "floor" };

    private static void ratios(final StringBuilder out, final List<BenchResult> results)
    {
        final StringBuilder lines = new StringBuilder();
        for (final BenchResult subject : results)
        {
            if (!BenchResult.LATENCY.equals(subject.part()) || !RATIO_SUBJECT.equals(subject.contender()) ||
                !subject.hasHistogram())
            {
                continue;
            }
            for (final String referenceName : RATIO_REFERENCES)
            {
                for (final BenchResult reference : results)
                {
                    if (BenchResult.LATENCY.equals(reference.part()) && referenceName.equals(reference.contender()) &&
                        reference.sizeBytes() == subject.sizeBytes() && reference.hasHistogram())
                    {
                        lines.append(String.format(Locale.ROOT, "%s / %s at %d B: p50 %.1fx, p99.9 %.1fx%n",
                            RATIO_SUBJECT, referenceName, subject.sizeBytes(),
                            ratio(subject, reference, 50.0), ratio(subject, reference, 99.9)));
                    }
                }
            }
        }
        if (!lines.isEmpty())
        {
            out.append("\nRATIOS of round-trip latency\n").append(lines);
        }
    }

    private static double ratio(final BenchResult subject, final BenchResult reference, final double percentile)
    {
        return (double)subject.valueAtPercentileNs(percentile) / Math.max(1, reference.valueAtPercentileNs(percentile));
    }

    private static boolean sameNotRun(final BenchResult previous, final BenchResult result)
    {
        return null != previous && !result.ok() && !previous.ok() && previous.status() == result.status() &&
            previous.contender().equals(result.contender()) && previous.provider().equals(result.provider()) &&
            previous.reason().equals(result.reason());
    }

    private static String[] row(final BenchResult result, final int columns)
    {
        final String[] row = new String[columns];
        row[0] = result.contender();
        row[1] = Integer.toString(result.sizeBytes());
        row[columns - 1] = result.provider();
        if (!result.ok())
        {
            // one free-running cell in place of the numbers
            row[2] = result.statusText();
            return new String[]{ row[0], row[1], row[2] + "  [" + result.provider() + "]" };
        }
        if (null != result.histogram())
        {
            int column = 2;
            for (final double percentile : BenchResult.PERCENTILES)
            {
                row[column++] = micros(result.valueAtPercentileNs(percentile));
            }
            row[column++] = micros(result.maxNs());
            row[column] = SeedComparison.LATENCY_PART.equals(result.part()) ?
                cpu(result.cpuNsPerMessage()) : Long.toString(result.messages());
        }
        else
        {
            row[2] = String.format(Locale.ROOT, "%,.0f", result.messagesPerSecond());
            row[3] = String.format(Locale.ROOT, "%,.1f", result.megabytesPerSecond());
            row[4] = cpu(result.cpuNsPerMessage());
            row[5] = Long.toString(result.messages());
        }
        return row;
    }

    private static void appendRow(final StringBuilder out, final String[] cells, final int[] widths)
    {
        for (int i = 0; i < cells.length; i++)
        {
            final String cell = null == cells[i] ? "" : cells[i];
            final boolean last = i == cells.length - 1;
            if (last)
            {
                out.append(cell);
            }
            else if (0 == i)
            {
                out.append(cell).append(" ".repeat(widths[i] - cell.length())).append("  ");
            }
            else
            {
                out.append(" ".repeat(Math.max(0, widths[i] - cell.length()))).append(cell).append("  ");
            }
        }
        out.append('\n');
    }

    static String micros(final long nanos)
    {
        return String.format(Locale.ROOT, "%.2f", nanos / 1000.0);
    }

    private static String cpu(final double nsPerMessage)
    {
        return nsPerMessage < 0 ? "-" : String.format(Locale.ROOT, "%,.0f", nsPerMessage);
    }
}
