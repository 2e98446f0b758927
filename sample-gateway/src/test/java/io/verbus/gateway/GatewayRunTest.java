package io.verbus.gateway;

import io.verbus.gateway.report.HistogramFiles;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Short real runs of the gateway on an embedded Verbus, all parts in this JVM, sleeping idle strategies so the test
 * never spins a core.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class GatewayRunTest
{
    @TempDir
    Path dir;

    private GatewayConfig config(final String transport, final String duration)
    {
        return GatewayConfig.parse(
            "--launch", "single", "--transport", transport, "--duration", duration, "--warmup", "1s",
            "--rate", "5000", "--instruments", "4", "--idle", "sleeping", "--driver-idle", "sleeping",
            "--progress", "1s", "--out", dir.resolve("out").toString(), "--dir", dir.resolve("verbus").toString());
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldAnswerEveryOrderWithExactlyOneExecutionReportOverNativeIpc() throws Exception
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final AtomicReference<Gateway> gateway = new AtomicReference<>();
        final GatewayRun.Result result = GatewayRun.run(config("ipc", "3s"),
            new PrintStream(bytes, true, StandardCharsets.UTF_8), new AtomicBoolean(), gateway);
        final String output = bytes.toString(StandardCharsets.UTF_8);

        assertFalse(result.interrupted());
        assertTrue(result.feedMessages() > 1_000, output);
        assertTrue(result.ordersSent() > 10, output);
        assertTrue(result.everyRequestAnsweredOnce(), output);
        assertEquals(result.requestsSent(), result.gatewayAnswered(), output);
        assertEquals(0, result.bookFaults(), output);
        assertEquals(0, result.snapshotMismatches(), output);
        assertTrue(result.tickToTrade().getTotalCount() > 0 &&
            result.tickToTrade().getTotalCount() < result.ordersSent(), "warm-up orders are left out: " + output);
        assertTrue(gateway.get().isClosed() && gateway.get().verbus().isClosed());

        assertTrue(output.contains("Tick-to-trade (feed publish -> execution report received)"), output);
        assertTrue(output.contains("channels: market data ipc, orders ipc, reports ipc"), output);
        assertTrue(output.contains("every request answered exactly once: yes"), output);
        assertTrue(output.contains("session: logged on (protocol 1.0)"), output);
        assertTrue(output.matches("(?s).*\\[\\s*1\\.\\ds] md [0-9,]+ \\| orders.*"), "progress lines: " + output);
        for (final String file : new String[]{ HistogramFiles.HGRM_FILE, HistogramFiles.LOG_FILE,
            HistogramFiles.SVG_FILE })
        {
            final Path path = dir.resolve("out").resolve(file);
            assertTrue(Files.size(path) > 100, file);
            assertTrue(output.contains(path.toAbsolutePath().toString()), "report names " + file);
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldRunTheSamePartsOverAnEmbeddedAeronDriversIpc() throws Exception
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final GatewayRun.Result result = GatewayRun.run(config("aeron-ipc", "3s"),
            new PrintStream(bytes, true, StandardCharsets.UTF_8), new AtomicBoolean(), new AtomicReference<>());
        final String output = bytes.toString(StandardCharsets.UTF_8);

        assertTrue(result.ordersSent() > 10, output);
        assertTrue(result.everyRequestAnsweredOnce(), output);
        assertEquals(0, result.bookFaults(), output);
        assertTrue(output.contains("channels: market data aeron:ipc"), output);
    }

    @Test
    @Timeout(value = 90, unit = TimeUnit.SECONDS)
    void shouldRunTheFeedAndOrderGatewayInAChildProcessOverRdmaShm() throws Exception
    {
        final GatewayConfig config = GatewayConfig.parse("--duration", "8s", "--warmup", "3s",
            "--rate", "2000", "--instruments", "4", "--idle", "sleeping", "--driver-idle", "sleeping",
            "--md-endpoint", "127.0.0.1:" + freePort(), "--order-endpoint", "127.0.0.1:" + freePort(),
            "--report-endpoint", "127.0.0.1:" + freePort(),
            "--out", dir.resolve("out").toString(), "--dir", dir.resolve("verbus").toString());
        assertTrue(config.launchesProcesses());
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final GatewayRun.Result result = SeparateProcesses.run(config,
            new PrintStream(bytes, true, StandardCharsets.UTF_8), new AtomicBoolean(), new AtomicReference<>());
        final String output = bytes.toString(StandardCharsets.UTF_8);

        assertTrue(output.contains("parts [strategy] in this process"), output);
        assertTrue(output.contains("provider=shm"), output);
        assertTrue(result.ordersSent() > 5, output);
        assertTrue(result.everyRequestAnsweredOnce(), output);
        assertEquals(0, result.bookFaults(), output);
        assertTrue(output.matches("(?s).*\\|\\s+order gateway: [0-9,]+ answered.*"), "child's report: " + output);
        assertTrue(Files.exists(dir.resolve("out").resolve(HistogramFiles.SVG_FILE)), output);
    }

    private static int freePort() throws java.io.IOException
    {
        try (java.net.ServerSocket socket = new java.net.ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    @Test
    @Timeout(value = 60, unit = TimeUnit.SECONDS)
    void shouldStopEarlyWhenAskedAndStillCloseEverythingAndReport() throws Exception
    {
        final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        final AtomicBoolean stop = new AtomicBoolean();
        final AtomicReference<Gateway> gateway = new AtomicReference<>();
        final Thread interrupter = new Thread(() ->
        {
            try
            {
                Thread.sleep(2_000);
            }
            catch (final InterruptedException ignore)
            {
                return;
            }
            stop.set(true);
        });
        interrupter.start();
        final long startNs = System.nanoTime();
        final GatewayRun.Result result = GatewayRun.run(config("ipc", "60s"),
            new PrintStream(bytes, true, StandardCharsets.UTF_8), stop, gateway);
        interrupter.join();
        final String output = bytes.toString(StandardCharsets.UTF_8);

        assertTrue(result.interrupted());
        assertTrue(System.nanoTime() - startNs < TimeUnit.SECONDS.toNanos(30), "stopped long before 60s");
        assertTrue(result.everyRequestAnsweredOnce(), output);
        assertTrue(gateway.get().isClosed() && gateway.get().verbus().isClosed());
        assertTrue(output.contains("Stopped early"), output);
    }
}
