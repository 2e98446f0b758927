package io.verbus.gateway.report;

import org.HdrHistogram.EncodableHistogram;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramLogReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
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
                total.add(interval);
                files.appendInterval(interval);
                interval.reset(); // the run reuses one interval histogram: the files keep their own copy
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
