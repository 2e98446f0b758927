package io.verbus.bench;

import io.verbus.tools.SvgPercentilePlot;
import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import javax.xml.parsers.DocumentBuilderFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ReportOutputTest
{
    private static final MachineInfo MACHINE =
        new MachineInfo(2, "Test CPU \"quoted\" <model>", "Test JDK 25", "Linux test", "0.10 0.20 0.30");

    @Test
    void shouldWriteWellFormedJsonWithOneObjectPerContenderPartAndSize()
    {
        final Histogram histogram = syntheticHistogram();
        final BenchReport report = report(histogram);

        @SuppressWarnings("unchecked")
        final Map<String, Object> json = (Map<String, Object>)MiniJson.parse(JsonReport.render(report));

        @SuppressWarnings("unchecked")
        final Map<String, Object> machine = (Map<String, Object>)json.get("machine");
        assertEquals(2.0, machine.get("nproc"));
        assertEquals("Test CPU \"quoted\" <model>", machine.get("cpuModel"));
        assertEquals("Test JDK 25", machine.get("jdk"));
        assertEquals("latency: 250 ms warm-up", machine.get("plan"));

        @SuppressWarnings("unchecked")
        final List<Map<String, Object>> results = (List<Map<String, Object>>)json.get("results");
        assertEquals(report.results().size(), results.size());

        final Map<String, Object> latency = results.get(0);
        assertEquals("latency", latency.get("part"));
        assertEquals("floor", latency.get("contender"));
        assertEquals(32.0, latency.get("sizeBytes"));
        assertEquals("ok", latency.get("status"));
        assertEquals((double)histogram.getValueAtPercentile(50), latency.get("p50Ns"));
        assertEquals((double)histogram.getValueAtPercentile(99.9), latency.get("p999Ns"));
        assertEquals((double)histogram.getMaxValue(), latency.get("maxNs"));
        assertEquals(10_000 / 0.01, (Double)latency.get("messagesPerSecond"), 1.0);

        final Map<String, Object> throughput = results.get(1);
        assertEquals("throughput", throughput.get("part"));
        assertEquals(2_000_000.0, (Double)throughput.get("messagesPerSecond"), 1.0);
        assertEquals(2_000_000.0 * 1024 / 1e6, (Double)throughput.get("megabytesPerSecond"), 0.01);
        assertEquals(250.0, (Double)throughput.get("cpuNsPerMessage"), 0.01);
        assertFalse(throughput.containsKey("p50Ns"));

        final Map<String, Object> notRun = results.get(2);
        assertEquals("not run", notRun.get("status"));
        assertEquals("no RDMA device on this host", notRun.get("reason"));
        assertFalse(notRun.containsKey("messagesPerSecond"));
    }

    @Test
    void shouldPrintTableWithPercentilesInMicrosAndEveryContenderThatDidNotRun()
    {
        final Histogram histogram = syntheticHistogram();
        final String table = ResultTable.render(report(histogram));

        assertTrue(table.contains("Test CPU"), table);
        assertTrue(table.contains("2 CPUs"), table);
        assertTrue(table.contains("Test JDK 25"), table);
        assertTrue(table.contains("plan: latency: 250 ms warm-up"), table);
        assertTrue(table.contains("LATENCY"), table);
        assertTrue(table.contains("THROUGHPUT"), table);
        assertTrue(table.contains(ResultTable.micros(histogram.getValueAtPercentile(50))), table);
        assertTrue(table.contains("2,000,000"), table);
        assertTrue(table.contains("verbus-rdma-verbs"), table);
        // the two sizes of a contender that did not run share one line
        assertTrue(table.contains("32,256") && table.contains("not run: no RDMA device on this host"), table);
        assertTrue(table.contains("failed: echo timed out"), table);
    }

    @Test
    void shouldPrintRatiosOfVerbusRdmaOverShmToAeronIpcAndTheFloor()
    {
        final Histogram floor = syntheticHistogram();
        final Histogram rdma = scaled(floor, 10);
        final Histogram aeron = scaled(floor, 2);
        final BenchReport report = new BenchReport(Instant.parse("2026-11-29T12:30:00Z"), MACHINE, "0", true, "x", "y",
            List.of(latency("floor", floor), latency("aeron-ipc", aeron), latency("verbus-rdma-shm-direct", rdma)));

        final String table = ResultTable.render(report);

        assertTrue(table.contains("verbus-rdma-shm-direct / aeron-ipc at 32 B: p50 5.0x, p99.9 5.0x"), table);
        assertTrue(table.contains("verbus-rdma-shm-direct / floor at 32 B: p50 10.0x, p99.9 10.0x"), table);
    }

    private static BenchResult latency(final String contender, final Histogram histogram)
    {
        return new BenchResult(BenchResult.LATENCY, contender, "p", 32, BenchResult.Status.OK, null, histogram,
            histogram.getTotalCount(), 1_000_000, -1);
    }

    @Test
    void shouldDrawOneLinePerContenderThatRanInWellFormedSvg() throws Exception
    {
        final Histogram histogram = syntheticHistogram();
        final String svg = SvgPercentilePlot.render("title with <angle> & ampersand", List.of(
            new SvgPercentilePlot.Panel("32-byte messages", List.of(
                new SvgPercentilePlot.Series("floor", histogram),
                new SvgPercentilePlot.Series("aeron-ipc", scaled(histogram, 10)))),
            new SvgPercentilePlot.Panel("256-byte messages", List.of())));

        final Document document = DocumentBuilderFactory.newInstance().newDocumentBuilder()
            .parse(new ByteArrayInputStream(svg.getBytes(StandardCharsets.UTF_8)));
        final Element root = document.getDocumentElement();
        assertEquals("svg", root.getTagName());
        assertEquals("http://www.w3.org/2000/svg", root.getAttribute("xmlns"));

        final NodeList lines = document.getElementsByTagName("polyline");
        assertEquals(2, lines.getLength());
        final String[] points = ((Element)lines.item(0)).getAttribute("points").trim().split(" ");
        assertTrue(points.length > 30, "a point per tenth of a nine: " + points.length);
        assertTrue(svg.contains("title with &lt;angle&gt; &amp; ampersand"));
        assertTrue(svg.contains("no contender ran"));
    }

    @Test
    void shouldWriteJsonAndSvgFilesWhereAsked(@TempDir final Path dir) throws Exception
    {
        final Path json = dir.resolve("nested/run.json");
        final BenchOptions options = BenchOptions.parse("--json", json.toString());
        final ByteArrayOutputStream said = new ByteArrayOutputStream();

        BenchMain.write(report(syntheticHistogram()), options, new PrintStream(said, true, StandardCharsets.UTF_8));

        assertTrue(Files.size(json) > 0);
        final Path svg = dir.resolve("nested/run.svg");
        assertTrue(Files.readString(svg).contains("<polyline"));
        assertTrue(said.toString(StandardCharsets.UTF_8).contains(json.toAbsolutePath().toString()));
        MiniJson.parse(Files.readString(json));
    }

    private static BenchReport report(final Histogram histogram)
    {
        return new BenchReport(Instant.parse("2026-11-29T12:30:00Z"), MACHINE, "0.40 0.50 0.60", true,
            "pinned to CPUs 0 and 1", "latency: 250 ms warm-up", List.of(
            new BenchResult(BenchResult.LATENCY, "floor", "one cache line", 32, BenchResult.Status.OK, null,
                histogram, histogram.getTotalCount(), 10_000_000L, 20_000_000L),
            new BenchResult(BenchResult.THROUGHPUT, "floor", "ring", 1024, BenchResult.Status.OK, null,
                null, 1_000_000, 500_000_000L, 250_000_000L),
            BenchResult.notRun(BenchResult.LATENCY, "verbus-rdma-verbs", "rdma verbs", 32,
                "no RDMA device on this host"),
            BenchResult.notRun(BenchResult.LATENCY, "verbus-rdma-verbs", "rdma verbs", 256,
                "no RDMA device on this host"),
            BenchResult.failed(BenchResult.LATENCY, "tcp-socket", "kernel TCP", 32, "echo timed out")));
    }

    /** 10,000 round trips from 100 ns to 1 ms, most of them fast, as a real run looks. */
    private static Histogram syntheticHistogram()
    {
        final Histogram histogram = new Histogram(LatencyRunner.HIGHEST_TRACKABLE_NS, 3);
        for (int i = 0; i < 10_000; i++)
        {
            final long valueNs = i < 9_000 ? 100 + i % 50 : i < 9_990 ? 2_000 + i : 1_000_000;
            histogram.recordValue(valueNs);
        }
        return histogram;
    }

    private static Histogram scaled(final Histogram source, final int factor)
    {
        final Histogram scaled = new Histogram(LatencyRunner.HIGHEST_TRACKABLE_NS, 3);
        source.recordedValues().forEach(v -> scaled.recordValueWithCount(
            v.getValueIteratedTo() * factor, v.getCountAtValueIteratedTo()));
        return scaled;
    }
}
