package io.verbus.tools;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Latency percentile plots as one SVG document: a panel per message size, one line per contender, latency on a log
 * scale against "number of nines" (0 = p0, 1 = p90, 2 = p99, 3 = p99.9 ...), which is how tail latency is read.
 */
public final class SvgPercentilePlot
{
    /** One line of a panel. */
    public record Series(String name, Histogram histogram)
    {
    }

    /** One chart. */
    public record Panel(String title, List<Series> series)
    {
        public Panel
        {
            series = List.copyOf(series);
        }
    }

    private static final int PANEL_WIDTH = 900;
    private static final int PANEL_HEIGHT = 380;
    private static final int PLOT_LEFT = 70;
    private static final int PLOT_TOP = 40;
    private static final int PLOT_WIDTH = 520;
    private static final int PLOT_HEIGHT = 290;
    private static final int LEGEND_LEFT = PLOT_LEFT + PLOT_WIDTH + 20;
    private static final double MAX_NINES = 5.0;
    private static final int STEPS_PER_NINE = 10;
    private static final String[] COLOURS = {
        "#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
        "#17becf", "#000000", "#aec7e8" };

    private SvgPercentilePlot()
    {
    }

    /**
     * @param title  of the document.
     * @param panels one chart each, stacked vertically; panels without series say so.
     * @return the SVG document.
     */
    public static String render(final String title, final List<Panel> panels)
    {
        final int height = 40 + PANEL_HEIGHT * Math.max(1, panels.size());
        final StringBuilder svg = new StringBuilder(16 * 1024);
        svg.append("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n")
            .append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"").append(PANEL_WIDTH)
            .append("\" height=\"").append(height).append("\" viewBox=\"0 0 ").append(PANEL_WIDTH).append(' ')
            .append(height).append("\" font-family=\"sans-serif\" font-size=\"12\">\n")
            .append("<rect width=\"100%\" height=\"100%\" fill=\"white\"/>\n");
        text(svg, PANEL_WIDTH / 2.0, 24, "middle", 16, title);
        int top = 40;
        for (final Panel panel : panels)
        {
            panel(svg, panel, top);
            top += PANEL_HEIGHT;
        }
        return svg.append("</svg>\n").toString();
    }

    private static void panel(final StringBuilder svg, final Panel panel, final int top)
    {
        svg.append("<g transform=\"translate(0,").append(top).append(")\">\n");
        text(svg, PLOT_LEFT + PLOT_WIDTH / 2.0, 20, "middle", 14, panel.title());
        final List<Series> series = new ArrayList<>();
        for (final Series s : panel.series())
        {
            if (null != s.histogram() && s.histogram().getTotalCount() > 0)
            {
                series.add(s);
            }
        }
        if (series.isEmpty())
        {
            text(svg, PLOT_LEFT + PLOT_WIDTH / 2.0, PLOT_TOP + PLOT_HEIGHT / 2.0, "middle", 12, "no contender ran");
            svg.append("</g>\n");
            return;
        }

        long minNs = Long.MAX_VALUE;
        long maxNs = 1;
        for (final Series s : series)
        {
            minNs = Math.min(minNs, Math.max(1, s.histogram().getMinValue()));
            maxNs = Math.max(maxNs, s.histogram().getMaxValue());
        }
        final int lowDecade = (int)Math.floor(Math.log10(minNs));
        final int highDecade = Math.max(lowDecade + 1, (int)Math.ceil(Math.log10(Math.max(maxNs, minNs + 1))));

        // axes and grid
        svg.append("<rect x=\"").append(PLOT_LEFT).append("\" y=\"").append(PLOT_TOP).append("\" width=\"")
            .append(PLOT_WIDTH).append("\" height=\"").append(PLOT_HEIGHT)
            .append("\" fill=\"none\" stroke=\"#444\"/>\n");
        for (int nines = 0; nines <= MAX_NINES; nines++)
        {
            final double x = PLOT_LEFT + nines / MAX_NINES * PLOT_WIDTH;
            line(svg, x, PLOT_TOP, x, PLOT_TOP + PLOT_HEIGHT, "#ddd");
            text(svg, x, PLOT_TOP + PLOT_HEIGHT + 16, "middle", 11, percentileLabel(nines));
        }
        text(svg, PLOT_LEFT + PLOT_WIDTH / 2.0, PLOT_TOP + PLOT_HEIGHT + 34, "middle", 12, "percentile");
        for (int decade = lowDecade; decade <= highDecade; decade++)
        {
            final double y = y(Math.pow(10, decade), lowDecade, highDecade);
            line(svg, PLOT_LEFT, y, PLOT_LEFT + PLOT_WIDTH, y, "#ddd");
            text(svg, PLOT_LEFT - 6, y + 4, "end", 11, durationLabel(decade));
        }
        svg.append("<text x=\"16\" y=\"").append(PLOT_TOP + PLOT_HEIGHT / 2)
            .append("\" text-anchor=\"middle\" transform=\"rotate(-90 16 ").append(PLOT_TOP + PLOT_HEIGHT / 2)
            .append(")\">round trip</text>\n");

        int colour = 0;
        for (final Series s : series)
        {
            final String stroke = COLOURS[colour % COLOURS.length];
            final Histogram histogram = s.histogram();
            final double maxNines = Math.min(MAX_NINES, Math.log10(histogram.getTotalCount()));
            svg.append("<polyline fill=\"none\" stroke-width=\"1.8\" stroke=\"").append(stroke).append("\" points=\"");
            for (int step = 0; step <= maxNines * STEPS_PER_NINE; step++)
            {
                final double nines = (double)step / STEPS_PER_NINE;
                final double percentile = 100.0 * (1.0 - Math.pow(10, -nines));
                final long valueNs = Math.max(1, histogram.getValueAtPercentile(percentile));
                svg.append(format(PLOT_LEFT + nines / MAX_NINES * PLOT_WIDTH)).append(',')
                    .append(format(y(valueNs, lowDecade, highDecade))).append(' ');
            }
            svg.append("\"/>\n");
            final double legendY = PLOT_TOP + 10 + colour * 18;
            line(svg, LEGEND_LEFT, legendY, LEGEND_LEFT + 24, legendY, stroke);
            text(svg, LEGEND_LEFT + 30, legendY + 4, "start", 11, s.name() + "  p50 " +
                String.format(Locale.ROOT, "%.2f", histogram.getValueAtPercentile(50) / 1000.0) + " us");
            colour++;
        }
        svg.append("</g>\n");
    }

    private static double y(final double valueNs, final int lowDecade, final int highDecade)
    {
        final double fraction = (Math.log10(valueNs) - lowDecade) / (highDecade - lowDecade);
        return PLOT_TOP + PLOT_HEIGHT - Math.max(0.0, Math.min(1.0, fraction)) * PLOT_HEIGHT;
    }

    private static String percentileLabel(final int nines)
    {
        return switch (nines)
        {
            case 0 -> "0%";
            case 1 -> "90%";
            case 2 -> "99%";
            case 3 -> "99.9%";
            case 4 -> "99.99%";
            default -> "99.999%";
        };
    }

    private static String durationLabel(final int decade)
    {
        final String[] units = { "ns", "us", "ms", "s" };
        final int unit = Math.min(units.length - 1, Math.max(0, decade / 3));
        final long value = (long)Math.pow(10, decade - unit * 3);
        return value + " " + units[unit];
    }

    private static void line(
        final StringBuilder svg,
        final double x1,
        final double y1,
        final double x2,
        final double y2,
        final String stroke)
    {
        svg.append("<line x1=\"").append(format(x1)).append("\" y1=\"").append(format(y1))
            .append("\" x2=\"").append(format(x2)).append("\" y2=\"").append(format(y2))
            .append("\" stroke=\"").append(stroke).append("\"/>\n");
    }

    private static void text(
        final StringBuilder svg, final double x, final double y, final String anchor, final int size, final String text)
    {
        svg.append("<text x=\"").append(format(x)).append("\" y=\"").append(format(y))
            .append("\" text-anchor=\"").append(anchor).append("\" font-size=\"").append(size).append("\">");
        escape(svg, text);
        svg.append("</text>\n");
    }

    static void escape(final StringBuilder svg, final String text)
    {
        for (int i = 0; i < text.length(); i++)
        {
            final char c = text.charAt(i);
            switch (c)
            {
                case '<' -> svg.append("&lt;");
                case '>' -> svg.append("&gt;");
                case '&' -> svg.append("&amp;");
                case '"' -> svg.append("&quot;");
                default -> svg.append(c);
            }
        }
    }

    private static String format(final double value)
    {
        return String.format(Locale.ROOT, "%.1f", value);
    }
}
