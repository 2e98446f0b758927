package io.verbus.gateway.report;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import javax.xml.parsers.DocumentBuilderFactory;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReportFilesTest
{
    @TempDir
    Path dir;

    private static Histogram latencies(final int count)
    {
        final Histogram histogram = new Histogram(60_000_000_000L, 3);
        final Random random = new Random(1);
        for (int i = 0; i < count; i++)
        {
            // mostly 2-10 us with a long tail to a few ms
            final long ns = 2_000 + random.nextInt(8_000) + (random.nextInt(1000) == 0 ? random.nextInt(3_000_000) : 0);
            histogram.recordValue(ns);
        }
        return histogram;
    }

    @Test
    void shouldWriteAWellFormedSvgWithALogPercentileAxisAndOneLatencyCurve() throws Exception
    {
        final Histogram histogram = latencies(100_000);
        final Path svg = dir.resolve(HistogramFiles.SVG_FILE);
        SvgPercentilePlot.write(histogram, "title <&>", "ipc", svg);

        final Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder().parse(svg.toFile());
        final Element root = document.getDocumentElement();
        assertEquals("svg", root.getTagName());
        assertEquals("http://www.w3.org/2000/svg", root.getAttribute("xmlns"));
        assertEquals(0, document.getElementsByTagName("script").getLength());

        final NodeList polylines = document.getElementsByTagName("polyline");
        assertEquals(1, polylines.getLength());
        final String[] points = ((Element)polylines.item(0)).getAttribute("points").trim().split(" ");
        assertTrue(points.length > 20, "points: " + points.length);
        double lastX = -1;
        double lastY = Double.MAX_VALUE;
        for (final String point : points)
        {
            final String[] xy = point.split(",");
            final double x = Double.parseDouble(xy[0]);
            final double y = Double.parseDouble(xy[1]);
            assertTrue(x >= lastX, "x never goes back");
            assertTrue(y <= lastY + 1e-9, "latency never falls as the percentile rises (y grows downwards)");
            assertTrue(x >= SvgPercentilePlot.LEFT && x <= SvgPercentilePlot.WIDTH - SvgPercentilePlot.RIGHT);
            assertTrue(y >= SvgPercentilePlot.TOP && y <= SvgPercentilePlot.HEIGHT - SvgPercentilePlot.BOTTOM);
            lastX = x;
            lastY = y;
        }

        final List<String> labels = new ArrayList<>();
        final NodeList texts = document.getElementsByTagName("text");
        for (int i = 0; i < texts.getLength(); i++)
        {
            labels.add(texts.item(i).getTextContent());
        }
        for (final String expected : new String[]{ "0%", "90%", "99%", "99.9%", "99.99%", "99.999%", "Percentile",
            "Latency (us)", "title <&>" })
        {
            assertTrue(labels.contains(expected), expected + " in " + labels);
        }
        final String p99 = String.format(java.util.Locale.ROOT, "p99     %10.2f us",
            histogram.getValueAtPercentile(99) / 1000.0);
        assertTrue(labels.contains(p99), "legend line '" + p99 + "' in " + labels);
    }

    @Test
    void shouldPlaceNinesEquallyOnThePercentileAxis()
    {
        assertEquals(0.0, SvgPercentilePlot.xOf(0, 5), 1e-9);
        assertEquals(1.0, SvgPercentilePlot.xOf(90, 5), 1e-9);
        assertEquals(2.0, SvgPercentilePlot.xOf(99, 5), 1e-9);
        assertEquals(3.0, SvgPercentilePlot.xOf(99.9, 5), 1e-9);
        assertEquals(5.0, SvgPercentilePlot.xOf(100, 5), 1e-9);
        assertEquals(50.0, SvgPercentilePlot.niceCeiling(41.3), 1e-9);
        assertEquals(2.0, SvgPercentilePlot.niceCeiling(1.01), 1e-9);
        assertThrows(IllegalArgumentException.class,
            () -> SvgPercentilePlot.render(new Histogram(3), "empty", ""));
    }

    @Test
    void shouldWriteAnHgrmAndAnIntervalLogThatReadBack() throws Exception
    {
        final Histogram total = new Histogram(60_000_000_000L, 3);
        try (HistogramFiles files = new HistogramFiles(dir.resolve("out"), 1_700_000_000_000L, "ipc"))
        {
            for (int second = 0; second < 3; second++)
            {
                final Histogram interval = latencies(1_000 * (second + 1));
                interval.setStartTimeStamp(1_700_000_000_000L + second * 1000L);
                interval.setEndTimeStamp(1_700_000_000_000L + (second + 1) * 1000L);
                files.appendInterval(interval);
                total.add(interval);
            }
            files.writePercentileDistribution(total);
        }

        final List<String> lines = Files.readAllLines(dir.resolve("out").resolve(HistogramFiles.HGRM_FILE));
        assertTrue(lines.get(0).trim().startsWith("Value"), lines.get(0));
        double lastPercentile = -1;
        double lastValue = -1;
        int rows = 0;
        for (final String line : lines.subList(2, lines.size()))
        {
            if (line.startsWith("#") || line.isBlank())
            {
                continue;
            }
            final String[] columns = line.trim().split("\\s+");
            final double value = Double.parseDouble(columns[0]);
            final double percentile = Double.parseDouble(columns[1]);
            assertTrue(value >= lastValue && percentile >= lastPercentile, line);
            lastValue = value;
            lastPercentile = percentile;
            rows++;
        }
        assertTrue(rows > 20);
        assertEquals(1.0, lastPercentile, 1e-9);
        assertEquals(total.getMaxValue() / 1000.0, lastValue, total.getMaxValue() / 1000.0 * 0.002,
            "values are in microseconds");
        assertTrue(lines.stream().anyMatch(line -> line.startsWith("#[Mean")));

        final File log = dir.resolve("out").resolve(HistogramFiles.LOG_FILE).toFile();
        final HistogramLogReader reader = new HistogramLogReader(log);
        long count = 0;
        int intervals = 0;
        EncodableHistogram interval;
        while (null != (interval = reader.nextIntervalHistogram()))
        {
            count += ((Histogram)interval).getTotalCount();
            intervals++;
        }
        assertEquals(3, intervals);
        assertEquals(6_000, count);
        assertFalse(Files.readString(log.toPath()).isEmpty());
    }

    @Test
    void shouldPrintThePercentileTableInMicroseconds()
    {
        final Histogram histogram = new Histogram(60_000_000_000L, 3);
        for (int i = 1; i <= 1000; i++)
        {
            histogram.recordValue(i * 1000L);
        }
        final String table = PercentileTable.format("Tick-to-trade", histogram);
        assertTrue(table.startsWith("Tick-to-trade\n"));
        assertTrue(table.contains("count            1000"), table);
        assertTrue(table.matches("(?s).*p50\\s+500\\.\\d\\d us.*"), table);
        assertTrue(table.matches("(?s).*p99\\.9\\s+999\\.\\d\\d us.*"), table);
        assertTrue(table.matches("(?s).*max\\s+1000\\.\\d\\d us.*"), table);
    }
}
