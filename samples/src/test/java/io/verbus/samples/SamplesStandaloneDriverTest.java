package io.verbus.samples;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static io.verbus.samples.SampleProcesses.PROCESS_TIMEOUT_S;
import static io.verbus.samples.SampleProcesses.concat;
import static io.verbus.samples.SampleProcesses.freePort;
import static io.verbus.samples.SampleProcesses.stop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two-process samples attached to one standalone driver process ({@code io.verbus.MediaDriver}'s main, what
 * {@code ./verbus driver} runs, with the rdma media on its class path) by {@code verbus.sample.driver-dir}, as
 * {@code ./verbus sample NAME --driver-dir D} does: over {@code ipc} (the processes share the driver's logs) and over
 * {@code rdma:} on the shm provider (the driver sends and receives for them).
 */
@Timeout(value = 300, unit = TimeUnit.SECONDS)
@Tag("slow") // cross-process: left out of ./verbus test --quick
class SamplesStandaloneDriverTest
{
    @TempDir
    Path tempDir;

    private SampleProcesses processes;
    private Process driver;
    private List<String> attach;

    @BeforeEach
    void startDriver() throws Exception
    {
        processes = new SampleProcesses(tempDir);
        final String driverDir = tempDir.resolve("driver").toString();
        driver = processes.start("io.verbus.MediaDriver", "driver", List.of(),
            "--dir", driverDir, "--idle-strategy", "backoff", "--client-timeout-ms", "5000");
        processes.awaitOutput("driver", "verbus driver: dir " + driverDir);
        attach = List.of("-Dverbus.sample.driver-dir=" + driverDir);
    }

    @AfterEach
    void stopDriver() throws Exception
    {
        driver.destroy(); // SIGTERM, as Ctrl-C
        final boolean stopped = driver.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS);
        stop(driver);
        assertTrue(stopped && processes.output("driver").contains("verbus driver: stopping"),
            processes.output("driver"));
    }

    private static String channel(final String media) throws IOException
    {
        return "ipc".equals(media) ? "ipc" : "rdma:endpoint=127.0.0.1:" + freePort() + "|provider=shm";
    }

    @ParameterizedTest
    @ValueSource(strings = { "ipc", "rdma" })
    void shouldMeasureRoundTripsBetweenPingAndPongProcessesThroughTheDriver(final String media) throws Exception
    {
        final List<String> properties = concat(attach, List.of("-Dverbus.sample.ping-channel=" + channel(media),
            "-Dverbus.sample.pong-channel=" + channel(media)));
        final Process pong = processes.start(Pong.class, "pong", properties);
        Process ping = null;
        try
        {
            ping = processes.start(Ping.class, "ping", concat(properties, List.of("-Dverbus.sample.messages=2000",
                "-Dverbus.sample.warmup-messages=500", "-Dverbus.sample.warmup-iterations=1")));
            assertTrue(ping.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), "ping finished: " + output("ping"));
            final String pingOutput = output("ping");
            assertEquals(0, ping.exitValue(), pingOutput);
            assertTrue(Pattern.compile("Total count\\s+=\\s+2000\\b").matcher(pingOutput).find(), pingOutput);

            pong.destroy();
            assertTrue(pong.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), "pong stopped: " + output("pong"));
            assertTrue(output("pong").contains("Shutting down..."), output("pong"));
        }
        finally
        {
            stop(ping);
            stop(pong);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "ipc", "rdma" })
    void shouldDeliverBasicPublisherMessagesToABasicSubscriberProcessThroughTheDriver(final String media)
        throws Exception
    {
        final List<String> properties = concat(attach, List.of("-Dverbus.sample.channel=" + channel(media)));
        final Process subscriber = processes.start(BasicSubscriber.class, "subscriber", properties);
        Process publisher = null;
        try
        {
            processes.awaitOutput("subscriber", "Subscribing to");
            publisher = processes.start(BasicPublisher.class, "publisher",
                concat(properties, List.of("-Dverbus.sample.messages=4", "-Dverbus.sample.linger-ms=500")));
            assertTrue(publisher.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), output("publisher"));
            assertEquals(0, publisher.exitValue(), output("publisher"));
            assertTrue(output("publisher").contains("Done sending."), output("publisher"));

            final String subscriberOutput = output("subscriber");
            assertTrue(subscriberOutput.contains("Available image on stream 1001"), subscriberOutput);
            assertTrue(subscriberOutput.contains("<<Hello World! 3>>"), subscriberOutput);
            subscriber.destroy();
            assertTrue(subscriber.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), output("subscriber"));
        }
        finally
        {
            stop(publisher);
            stop(subscriber);
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "ipc", "rdma" })
    void shouldFanQuotesOutToTwoSubscriberProcessesThroughTheDriver(final String media) throws Exception
    {
        final List<String> properties = concat(attach, List.of("-Dverbus.sample.channel=" + channel(media)));
        final List<Process> started = new ArrayList<>();
        try
        {
            started.add(processes.start(MarketDataSubscriber.class, "md-subscriber-1", properties));
            started.add(processes.start(MarketDataSubscriber.class, "md-subscriber-2", properties));
            final Process publisher = processes.start(MarketDataPublisher.class, "md-publisher",
                concat(properties, List.of("-Dverbus.sample.messages=50000", "-Dverbus.sample.rate=50000")));
            started.add(publisher);
            processes.awaitOutput("md-subscriber-1", "Available image");
            processes.awaitOutput("md-subscriber-2", "Available image");
            assertTrue(publisher.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), output("md-publisher"));
            assertEquals(0, publisher.exitValue(), output("md-publisher"));
            assertTrue(output("md-publisher").contains("Done: 50,000 quotes sent"), output("md-publisher"));
            for (int i = 0; i < 2; i++)
            {
                final Process subscriber = started.get(i);
                subscriber.destroy();
                assertTrue(subscriber.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS));
                final String subscriberOutput = output("md-subscriber-" + (i + 1));
                assertTrue(subscriberOutput.contains(" quotes, 0 gaps, last sequence 49,999"), subscriberOutput);
            }
        }
        finally
        {
            for (final Process process : started)
            {
                stop(process);
            }
        }
    }

    private String output(final String name) throws IOException
    {
        return processes.output(name);
    }
}
