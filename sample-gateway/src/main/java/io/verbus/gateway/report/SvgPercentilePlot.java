package io.verbus.gateway.report;

import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;

import java.io.IOException;
import java.math.BigDecimal;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Writes a latency-by-percentile plot as a standalone SVG, in the style of HdrHistogram's plotter: the horizontal
 * axis is the percentile on a log scale of 1/(1-p), so 90%, 99%, 99.9%, ... are equally spaced and the tail gets the
 * room it deserves; the vertical axis is latency in microseconds from zero. No scripts, no external references.
 */
public final class SvgPercentilePlot
{
    static final int WIDTH = 900;
    static final int HEIGHT = 520;
    static final int LEFT = 80;
    static final int RIGHT = 30;
    static final int TOP = 50;
    static final int BOTTOM = 70;
    private static final int MIN_NINES = 3;
    private static final int MAX_NINES = 6;

    private SvgPercentilePlot()
    {
    }

    /**
     * @param histogram of latencies in nanoseconds; must not be empty.
     * @param title     shown above the plot.
     * @param subtitle  shown under the title (e.g. the channels and the count).
     * @param file      to write.
     * @throws IOException when the file cannot be written.
     */
    public static void write(final Histogram histogram, final String title, final String subtitle, final Path file)
        throws IOException
    {
        Files.writeString(file, render(histogram, title, subtitle), StandardCharsets.UTF_8);
    }

    /**
     * @param histogram of latencies in nanoseconds; must not be empty.
     * @param title     shown above the plot.
     * @param subtitle  shown under the title.
     * @return the SVG document.
     */
    public static String render(final Histogram histogram, final String title, final String subtitle)
    {
        if (histogram.getTotalCount() == 0)
        {
            throw new IllegalArgumentException("cannot plot an empty histogram");
        }
        // Enough nines that the last sample is on the axis: 1/(1-p) reaches the count.
        final int nines = Math.max(MIN_NINES,
            Math.min(MAX_NINES, (int)Math.ceil(Math.log10(Math.max(10, histogram.getTotalCount())))));
        final double maxX = nines;
        final double maxMicros = niceCeiling(histogram.getMaxValue() / 1000.0);

        final double plotWidth = WIDTH - LEFT - RIGHT;
        final double plotHeight = HEIGHT - TOP - BOTTOM;

        final List<double[]> points = new ArrayList<>();
        for (final HistogramIterationValue value : histogram.percentiles(5))
        {
            final double percentile = Math.min(value.getPercentileLevelIteratedTo(), 100.0);
            final double x = xOf(percentile, maxX);
            final double micros = histogram.highestEquivalentValue(value.getValueIteratedTo()) / 1000.0;
            points.add(new double[]{ x, Math.min(micros, maxMicros) });
            if (percentile >= 100.0 || x >= maxX)
            {
                break;
            }
        }

        final StringBuilder svg = new StringBuilder(16 * 1024);
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
        svg.append(String.format(Locale.ROOT,
            "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" " +
            "font-family=\"sans-serif\" font-size=\"12\">%n", WIDTH, HEIGHT, WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT, "<rect width=\"%d\" height=\"%d\" fill=\"white\"/>%n", WIDTH, HEIGHT));
        svg.append(String.format(Locale.ROOT,
            "<text x=\"%d\" y=\"22\" font-size=\"16\" font-weight=\"bold\">%s</text>%n", LEFT, escape(title)));
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"40\" fill=\"#555\">%s</text>%n",
            LEFT, escape(subtitle)));

        svg.append("<g class=\"grid\" stroke=\"#ddd\" stroke-width=\"1\">\n");
        for (int nine = 0; nine <= nines; nine++)
        {
            final double px = LEFT + plotWidth * nine / maxX;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\"/>%n",
                px, TOP, px, HEIGHT - BOTTOM));
        }
        final int yTicks = 5;
        for (int tick = 0; tick <= yTicks; tick++)
        {
            final double py = TOP + plotHeight - plotHeight * tick / yTicks;
            svg.append(String.format(Locale.ROOT, "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\"/>%n",
                LEFT, py, WIDTH - RIGHT, py));
        }
        svg.append("</g>\n");

        svg.append("<g class=\"x-labels\" text-anchor=\"middle\">\n");
        for (int nine = 0; nine <= nines; nine++)
        {
            final double px = LEFT + plotWidth * nine / maxX;
            svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">%s</text>%n",
                px, HEIGHT - BOTTOM + 18, percentileLabel(nine)));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%.1f\" y=\"%d\">Percentile</text>%n",
            LEFT + plotWidth / 2, HEIGHT - 20));
        svg.append("</g>\n");

        svg.append("<g class=\"y-labels\" text-anchor=\"end\">\n");
        for (int tick = 0; tick <= yTicks; tick++)
        {
            final double py = TOP + plotHeight - plotHeight * tick / yTicks;
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%.1f\">%s</text>%n",
                LEFT - 8, py + 4, trim(maxMicros * tick / yTicks)));
        }
        svg.append(String.format(Locale.ROOT,
            "<text x=\"20\" y=\"%.1f\" transform=\"rotate(-90 20 %.1f)\" text-anchor=\"middle\">" +
            "Latency (us)</text>%n", TOP + plotHeight / 2, TOP + plotHeight / 2));
        svg.append("</g>\n");

        svg.append(String.format(Locale.ROOT,
            "<rect x=\"%d\" y=\"%d\" width=\"%.0f\" height=\"%.0f\" fill=\"none\" stroke=\"#333\"/>%n",
            LEFT, TOP, plotWidth, plotHeight));

        svg.append("<polyline class=\"latency\" fill=\"none\" stroke=\"#1f77b4\" stroke-width=\"2\" points=\"");
        for (int i = 0; i < points.size(); i++)
        {
            final double[] point = points.get(i);
            final double px = LEFT + plotWidth * point[0] / maxX;
            final double py = TOP + plotHeight - plotHeight * point[1] / maxMicros;
            svg.append(i == 0 ? "" : " ").append(String.format(Locale.ROOT, "%.1f,%.1f", px, py));
        }
        svg.append("\"/>\n");

        // The numbers a reader looks for first, in the empty upper-left corner of a latency curve.
        svg.append("<g class=\"legend\" font-family=\"monospace\" fill=\"#333\" xml:space=\"preserve\" " +
            "style=\"white-space:pre\">\n");
        int line = 0;
        for (final double percentile : PercentileTable.PERCENTILES)
        {
            svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%-7s %10.2f us</text>%n", LEFT + 12,
                TOP + 20 + 16 * line++, PercentileTable.label(percentile),
                histogram.getValueAtPercentile(percentile) / 1000.0));
        }
        svg.append(String.format(Locale.ROOT, "<text x=\"%d\" y=\"%d\">%-7s %10.2f us</text>%n", LEFT + 12,
            TOP + 20 + 16 * line, "max", histogram.getMaxValue() / 1000.0));
        svg.append("</g>\n");
        svg.append("</svg>\n");
        return svg.toString();
    }

    /** Position of a percentile on the axis, in "nines": 0 at 0%, 1 at 90%, 2 at 99%, ... */
    static double xOf(final double percentile, final double maxX)
    {
        final double remaining = 1.0 - percentile / 100.0;
        if (remaining <= 0)
        {
            return maxX;
        }
        return Math.min(maxX, Math.log10(1.0 / remaining));
    }

    /** Label of the grid line {@code nines} nines along: 0%, 90%, 99%, 99.9%, ... */
    static String percentileLabel(final int nines)
    {
        final BigDecimal hundred = BigDecimal.valueOf(100);
        return hundred.subtract(hundred.movePointLeft(nines)).stripTrailingZeros().toPlainString() + "%";
    }

    /** Round up to 1, 2 or 5 times a power of ten, so axis labels are round. */
    static double niceCeiling(final double value)
    {
        if (value <= 0)
        {
            return 1;
        }
        final double magnitude = Math.pow(10, Math.floor(Math.log10(value)));
        for (final double step : new double[]{ 1, 2, 5, 10 })
        {
            if (value <= step * magnitude)
            {
                return step * magnitude;
            }
        }
        return 10 * magnitude;
    }

    private static String trim(final double value)
    {
        return value == Math.rint(value) ? Long.toString((long)value) : String.format(Locale.ROOT, "%.2f", value);
    }

    private static String escape(final String text)
    {
        return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace("\"", "&quot;");
    }
}
