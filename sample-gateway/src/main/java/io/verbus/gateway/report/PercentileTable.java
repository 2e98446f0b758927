package io.verbus.gateway.report;

import org.HdrHistogram.Histogram;

import java.util.Locale;

/**
 * The percentile table printed at the end of a run: count, min, the usual percentiles, max and mean, in microseconds.
 */
public final class PercentileTable
{
    /** Percentiles shown, in order. */
    public static final double[] PERCENTILES = { 50.0, 90.0, 99.0, 99.9, 99.99 };

    private PercentileTable()
    {
    }

    /**
     * @param title     first line.
     * @param histogram of latencies in nanoseconds.
     * @return the table, one line per row, ending with a newline.
     */
    public static String format(final String title, final Histogram histogram)
    {
        final StringBuilder out = new StringBuilder(title).append('\n');
        row(out, "count", Long.toString(histogram.getTotalCount()), "");
        if (histogram.getTotalCount() == 0)
        {
            return out.toString();
        }
        row(out, "min", micros(histogram.getMinValue()), "us");
        for (final double percentile : PERCENTILES)
        {
            row(out, label(percentile), micros(histogram.getValueAtPercentile(percentile)), "us");
        }
        row(out, "max", micros(histogram.getMaxValue()), "us");
        row(out, "mean", String.format(Locale.ROOT, "%.2f", histogram.getMean() / 1000.0), "us");
        return out.toString();
    }

    /**
     * @param percentile such as 99.9.
     * @return its label, such as p99.9.
     */
    public static String label(final double percentile)
    {
        final String number = percentile == Math.rint(percentile) ?
            Long.toString((long)percentile) : Double.toString(percentile);
        return "p" + number;
    }

    private static void row(final StringBuilder out, final String name, final String value, final String unit)
    {
        out.append(String.format(Locale.ROOT, "  %-8s %12s %s%n", name, value, unit).stripTrailing()).append('\n');
    }

    private static String micros(final long nanos)
    {
        return String.format(Locale.ROOT, "%.2f", nanos / 1000.0);
    }
}
