package io.verbus.samples;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

import static io.verbus.samples.SampleProcesses.concat;
import static io.verbus.samples.SampleProcesses.freePort;
import static io.verbus.samples.SampleProcesses.stop;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The samples as their users run them: two JVMs, each with its own embedded driver, talking over {@code rdma:} on
 * the shm provider (two embedded drivers cannot share an {@code ipc} stream), for a bounded number of messages.
 * {@link SamplesStandaloneDriverTest} runs them through one standalone driver instead.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS)
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class SamplesCrossProcessTest
{
    private static final long PROCESS_TIMEOUT_S = SampleProcesses.PROCESS_TIMEOUT_S;

    @TempDir
    Path tempDir;

    private SampleProcesses processes;

    @BeforeEach
    void createProcesses()
    {
        processes = new SampleProcesses(tempDir);
    }

    @Test
    void shouldMeasureRoundTripsBetweenPingAndPongProcesses() throws Exception
    {
        final String pingChannel = "rdma:endpoint=127.0.0.1:" + freePort() + "|provider=shm";
        final String pongChannel = "rdma:endpoint=127.0.0.1:" + freePort() + "|provider=shm";
        final List<String> channels = List.of("-Dverbus.sample.ping-channel=" + pingChannel,
            "-Dverbus.sample.pong-channel=" + pongChannel);

        final Process pong = start(Pong.class, "pong", channels);
        Process ping = null;
        try
        {
            ping = start(Ping.class, "ping", concat(channels, List.of("-Dverbus.sample.messages=2000",
                "-Dverbus.sample.warmup-messages=500", "-Dverbus.sample.warmup-iterations=1")));
            assertTrue(ping.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), "ping finished: " + output("ping"));
            final String pingOutput = output("ping");
            assertEquals(0, ping.exitValue(), pingOutput);
            assertTrue(pingOutput.contains("Histogram of RTT latencies in microseconds."), pingOutput);
            assertTrue(Pattern.compile("Total count\\s+=\\s+2000\\b").matcher(pingOutput).find(), pingOutput);

            pong.destroy(); // SIGTERM, as Ctrl-C: Pong leaves its loop and closes its Verbus
            assertTrue(pong.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), "pong stopped: " + output("pong"));
            assertTrue(output("pong").contains("Shutting down..."), output("pong"));
        }
        finally
        {
            stop(ping);
            stop(pong);
        }
    }

    @Test
    void shouldDeliverBasicPublisherMessagesToABasicSubscriberProcess() throws Exception
    {
        final String channel = "-Dverbus.sample.channel=rdma:endpoint=127.0.0.1:" + freePort() + "|provider=shm";
        final Process subscriber = start(BasicSubscriber.class, "subscriber", List.of(channel));
        Process publisher = null;
        try
        {
            publisher = start(BasicPublisher.class, "publisher",
                List.of(channel, "-Dverbus.sample.messages=4", "-Dverbus.sample.linger-ms=500"));
            assertTrue(publisher.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), output("publisher"));
            assertEquals(0, publisher.exitValue(), output("publisher"));
            assertTrue(output("publisher").contains("Done sending."), output("publisher"));

            // The subscriber connects while the publisher sends, so it gets the messages sent after it joined.
            final String subscriberOutput = output("subscriber");
            assertTrue(subscriberOutput.contains("<<Hello World! 3>>"), subscriberOutput);
            assertTrue(subscriberOutput.contains("Available image on stream 1001"), subscriberOutput);

            subscriber.destroy();
            assertTrue(subscriber.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), output("subscriber"));
        }
        finally
        {
            stop(publisher);
            stop(subscriber);
        }
    }

    @Test
    void shouldFanQuotesOutToTwoSubscriberProcesses() throws Exception
    {
        final String channel = "-Dverbus.sample.channel=rdma:endpoint=127.0.0.1:" + freePort() + "|provider=shm";
        final List<Process> processes = new ArrayList<>();
        try
        {
            processes.add(start(MarketDataSubscriber.class, "md-subscriber-1", List.of(channel)));
            processes.add(start(MarketDataSubscriber.class, "md-subscriber-2", List.of(channel)));
            final Process publisher = start(MarketDataPublisher.class, "md-publisher",
                List.of(channel, "-Dverbus.sample.messages=50000", "-Dverbus.sample.rate=50000"));
            processes.add(publisher);
            // The publisher starts on its first subscriber; the other may join a few quotes later, at the position
            // then current. Each must have every quote from where it joined to the last, in order.
            awaitOutput("md-subscriber-1", "Available image");
            awaitOutput("md-subscriber-2", "Available image");
            assertTrue(publisher.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS), output("md-publisher"));
            assertEquals(0, publisher.exitValue(), output("md-publisher"));
            assertTrue(output("md-publisher").contains("Done: 50,000 quotes sent"), output("md-publisher"));

            for (int i = 0; i < 2; i++)
            {
                final Process subscriber = processes.get(i);
                subscriber.destroy();
                assertTrue(subscriber.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS));
                final String subscriberOutput = output("md-subscriber-" + (i + 1));
                assertTrue(subscriberOutput.contains(" quotes, 0 gaps, last sequence 49,999"), subscriberOutput);
            }
        }
        finally
        {
            for (final Process process : processes)
            {
                stop(process);
            }
        }
    }

    @Test
    void shouldRunTheEmbeddedSamplesInOneProcessOverIpc() throws Exception
    {
        final Process fanOut = start(MarketDataFanOut.class, "fan-out",
            List.of("-Dverbus.sample.messages=20000", "-Dverbus.sample.rate=0"));
        final Process throughput = start(EmbeddedThroughput.class, "throughput",
            List.of("-Dverbus.sample.messages=200000"));
        final Process pingPong = start(EmbeddedPingPong.class, "ping-pong", List.of("-Dverbus.sample.messages=2000",
            "-Dverbus.sample.warmup-messages=200", "-Dverbus.sample.warmup-iterations=1"));
        try
        {
            for (final Process process : List.of(fanOut, throughput, pingPong))
            {
                assertTrue(process.waitFor(PROCESS_TIMEOUT_S, TimeUnit.SECONDS));
            }
            assertEquals(0, fanOut.exitValue(), output("fan-out"));
            assertTrue(output("fan-out").contains("over ipc within one process"), output("fan-out"));
            assertTrue(output("fan-out").contains("Every subscriber received every quote, in order."),
                output("fan-out"));
            assertEquals(0, throughput.exitValue(), output("throughput"));
            assertTrue(output("throughput").contains("Done: 200,000 sent, 200,000 received in order"),
                output("throughput"));
            assertEquals(0, pingPong.exitValue(), output("ping-pong"));
            assertTrue(Pattern.compile("Total count\\s+=\\s+2000\\b").matcher(output("ping-pong")).find(),
                output("ping-pong"));
        }
        finally
        {
            stop(fanOut);
            stop(throughput);
            stop(pingPong);
        }
    }

    private Process start(final Class<?> sample, final String name, final List<String> properties) throws IOException
    {
        return processes.start(sample, name, properties);
    }

    private String output(final String name) throws IOException
    {
        return processes.output(name);
    }

    private void awaitOutput(final String name, final String text) throws Exception
    {
        processes.awaitOutput(name, text);
    }
}
