package io.verbus.media.rdma;

import io.verbus.test.MessageStream;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Method;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Publisher and subscriber in separate JVMs ({@link RdmaPeerMain}): on shm and tcp on this host, and on tcp
 * between two network namespaces joined by a veth pair (root only; built with the fabric tests' namespace
 * helper). The same main runs unchanged in the Soft-RoCE guest with {@code provider=verbs}.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RdmaCrossProcessTest
{
    private static final String SECRET = "cross-process-secret-0123456789";
    private static final long MESSAGES = 100_000;

    @TempDir
    Path dir;

    private List<String> java(final String... extra)
    {
        return PeerProcesses.javaCommand(SECRET, dir.resolve("fabric"), extra);
    }

    private static String readLine(final BufferedReader reader, final String prefix, final Process process)
        throws IOException
    {
        return PeerProcesses.readLine(reader, prefix, process);
    }

    private void runPair(final List<String> publisherPrefix, final List<String> subscriberPrefix,
        final String provider, final String publisherHost, final String subscriberTarget,
        final List<String> publisherProps, final List<String> subscriberProps) throws Exception
    {
        runPair(publisherPrefix, subscriberPrefix, provider, publisherHost, subscriberTarget, publisherProps,
            subscriberProps, List.of(), "");
    }

    /** @return the subscriber's output. */
    private String runPair(final List<String> publisherPrefix, final List<String> subscriberPrefix,
        final String provider, final String publisherHost, final String subscriberTarget,
        final List<String> publisherProps, final List<String> subscriberProps, final List<String> publisherOptions,
        final String subscriberChannelKeys) throws Exception
    {
        final List<String> publisherCommand = new ArrayList<>(publisherPrefix);
        publisherCommand.addAll(java(publisherProps.toArray(new String[0])));
        publisherCommand.addAll(List.of("publish", dir.resolve("pub").toString(),
            "rdma:endpoint=" + publisherHost + ":0|provider=" + provider + "|term-length=256k", "3001",
            Long.toString(MESSAGES)));
        publisherCommand.addAll(publisherOptions);
        final Process publisher = new ProcessBuilder(publisherCommand).redirectErrorStream(true)
            .redirectOutput(ProcessBuilder.Redirect.PIPE).start();
        Process subscriber = null;
        try
        {
            final BufferedReader publisherOut = new BufferedReader(
                new InputStreamReader(publisher.getInputStream(), StandardCharsets.UTF_8));
            final String portLine = readLine(publisherOut, "PORT ", publisher);
            final int port = Integer.parseInt(portLine.substring(5).trim());
            assertTrue(port > 0, portLine);

            final List<String> subscriberCommand = new ArrayList<>(subscriberPrefix);
            subscriberCommand.addAll(java(subscriberProps.toArray(new String[0])));
            subscriberCommand.addAll(List.of("subscribe", dir.resolve("sub").toString(),
                "rdma:endpoint=" + subscriberTarget + ":" + port + "|provider=" + provider + subscriberChannelKeys,
                "3001", Long.toString(MESSAGES)));
            final Path subscriberLog = dir.resolve("subscriber.log");
            subscriber = new ProcessBuilder(subscriberCommand).redirectErrorStream(true)
                .redirectOutput(subscriberLog.toFile()).start();
            assertTrue(subscriber.waitFor(150, TimeUnit.SECONDS), "subscriber finished");
            final String output = Files.readString(subscriberLog);
            assertEquals(0, subscriber.exitValue(), output);
            assertTrue(output.contains("RECEIVED " + MESSAGES + " OK first=0"), output);

            final OutputStream publisherIn = publisher.getOutputStream();
            publisherIn.write("DONE\n".getBytes(StandardCharsets.UTF_8));
            publisherIn.flush();
            assertEquals("PUBLISHED " + MESSAGES, readLine(publisherOut, "PUBLISHED", publisher));
            assertTrue(publisher.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, publisher.exitValue());
            return output;
        }
        finally
        {
            publisher.destroyForcibly();
            if (null != subscriber)
            {
                subscriber.destroyForcibly();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldDeliverBetweenProcesses(final String provider) throws Exception
    {
        runPair(List.of(), List.of(), provider, "127.0.0.1", "127.0.0.1", List.of(), List.of());
    }

    /**
     * The subscriber's own loop waits in {@link io.verbus.EventIdleStrategy} between empty polls (idle=event, so
     * commit=imm), blocking on its connection's completion channel while the publisher pauses (200 ms every 20,000
     * messages, longer than draining a window takes even on a loaded host): every message still arrives in order and
     * intact, and the wake-ups counter shows it did block and was woken.
     */
    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldDeliverBetweenProcessesToASubscriberThatBlocksInEventIdle(final String provider) throws Exception
    {
        final String output = runPair(List.of(), List.of(), provider, "127.0.0.1", "127.0.0.1", List.of(), List.of(),
            List.of("--pause-every=20000", "--pause-ms=200"), "|idle=event");
        final Matcher wakeUps = Pattern.compile("WAKE-UPS (\\d+)").matcher(output);
        assertTrue(wakeUps.find(), output);
        assertTrue(Long.parseLong(wakeUps.group(1)) > 0, output);
    }

    @Test
    void shouldDeliverOverTcpBetweenNetworkNamespaces() throws Exception
    {
        betweenNetworkNamespaces((namespaceA, namespaceB, addressA, addressB) ->
            runPair(List.of("ip", "netns", "exec", namespaceA), List.of("ip", "netns", "exec", namespaceB), "tcp",
                addressA, addressA,
                List.of("-D" + io.verbus.fabric.FabricContext.TCP_ADDRESS_PROP_NAME + "=" + addressA),
                List.of("-D" + io.verbus.fabric.FabricContext.TCP_ADDRESS_PROP_NAME + "=" + addressB)));
    }

    /**
     * The README's two-host sample on hosts without RDMA, as a user runs it: the publication on {@code 0.0.0.0}, the
     * subscription on the publisher's address, and no {@code verbus.fabric.tcp.address} on either side. Each tcp NIC
     * follows its control connection (before 2026-12-04 both advertised 127.0.0.1 and every handshake was refused).
     */
    @Test
    void shouldDeliverOverTcpBetweenNetworkNamespacesWithoutConfiguringTheNicAddress() throws Exception
    {
        betweenNetworkNamespaces((namespaceA, namespaceB, addressA, addressB) ->
            runPair(List.of("ip", "netns", "exec", namespaceA), List.of("ip", "netns", "exec", namespaceB), "tcp",
                "0.0.0.0", addressA, List.of(), List.of()));
    }

    @FunctionalInterface
    private interface NamespaceRun
    {
        void run(String namespaceA, String namespaceB, String addressA, String addressB) throws Exception;
    }

    /** Runs {@code run} with two fresh network namespaces joined by a veth pair (fabric-soft's test helper). */
    private static void betweenNetworkNamespaces(final NamespaceRun run) throws Exception
    {
        final Class<?> pairClass = Class.forName("io.verbus.fabric.tcp.NetworkNamespacePair");
        final Method unavailable = pairClass.getDeclaredMethod("unavailableReason");
        unavailable.setAccessible(true);
        final String reason = (String)unavailable.invoke(null);
        Assumptions.assumeTrue(null == reason, "network namespaces unavailable: " + reason);

        final Method create = pairClass.getDeclaredMethod("create");
        create.setAccessible(true);
        final AutoCloseable pair = (AutoCloseable)create.invoke(null);
        try (pair)
        {
            run.run((String)field(pairClass, "namespaceA").get(pair), (String)field(pairClass, "namespaceB").get(pair),
                (String)field(pairClass, "addressA").get(pair), (String)field(pairClass, "addressB").get(pair));
        }
    }

    @Test
    void shouldReleaseEverythingWhenASubscriberProcessIsKilledAndServeItsSuccessor() throws Exception
    {
        try (RdmaRig rig = new RdmaRig(dir, "shm", 256 * 1024, null, "heartbeat", "20ms", "timeout", "1s"))
        {
            final String secret = new String(RdmaRig.SECRET, StandardCharsets.US_ASCII);
            final java.util.function.Supplier<List<String>> subscriberCommand = () ->
            {
                final List<String> command = java("-D" + RdmaSecret.SECRET_PROP_NAME + "=" + secret);
                command.addAll(List.of("subscribe", dir.resolve("sub-" + System.nanoTime()).toString(),
                    "rdma:endpoint=127.0.0.1:" + rig.sender.controlPort() + "|provider=shm",
                    Integer.toString(RdmaRig.STREAM_ID), "30000"));
                return command;
            };
            final org.agrona.ExpandableArrayBuffer message = new org.agrona.ExpandableArrayBuffer(2048);
            final long[] sequence = { 0 };
            final Runnable publishSome = () ->
            {
                for (int i = 0; i < 64; i++)
                {
                    final int length = MessageStream.encode(message, sequence[0]);
                    if (rig.appender.offer(message, 0, length) > 0)
                    {
                        sequence[0]++;
                    }
                }
                if (0 == rig.dutyCycle())
                {
                    RdmaRig.sleepMicros(200);
                }
            };

            // First subscriber process: killed with SIGKILL mid-stream.
            final Process victim = new ProcessBuilder(subscriberCommand.get()).redirectErrorStream(true).start();
            final java.util.concurrent.BlockingQueue<String> victimLines = lines(victim);
            try
            {
                rig.awaitCondition("victim connected", 60_000, () -> rig.sender.subscriberCount() == 1);
                rig.awaitCondition("victim mid-stream", 60_000, () ->
                {
                    publishSome.run();
                    return victimLines.stream().anyMatch(line -> line.startsWith("PROGRESS"));
                });
                victim.destroyForcibly();
                assertTrue(victim.waitFor(30, TimeUnit.SECONDS));
            }
            finally
            {
                victim.destroyForcibly();
            }
            rig.awaitCondition("publisher drops the dead subscriber", 20_000, () ->
            {
                publishSome.run();
                return rig.sender.subscriberCount() == 0;
            });
            rig.awaitCondition("publisher released its QP and slot", 20_000,
                () -> rig.sender.queuePairCount() == 0 && rig.sender.registeredRegionCount() == 0 &&
                    rig.sender.protectionDomainCount() == 0);
            assertTrue(!rig.log.isConnected(), "NOT_CONNECTED with no subscriber left");

            // Its successor joins at the current position and gets an intact stream from there.
            final long publishedBefore = sequence[0];
            final Process successor = new ProcessBuilder(subscriberCommand.get()).redirectErrorStream(true).start();
            final java.util.concurrent.BlockingQueue<String> successorLines = lines(successor);
            try
            {
                rig.awaitCondition("successor done", 90_000, () ->
                {
                    publishSome.run();
                    return successorLines.stream().anyMatch(l -> l.startsWith("RECEIVED") || l.startsWith("FAILED"));
                });
                final String result = successorLines.stream()
                    .filter(l -> l.startsWith("RECEIVED") || l.startsWith("FAILED")).findFirst().orElseThrow();
                assertTrue(result.startsWith("RECEIVED ") && result.contains(" OK first="), result);
                assertTrue(Long.parseLong(result.split(" ")[1]) >= 30_000, result);
                final long first = Long.parseLong(result.substring(result.indexOf("first=") + 6).split(" ")[0]);
                assertTrue(first >= publishedBefore, "the successor joined at the current position: " + first);
                assertTrue(successor.waitFor(30, TimeUnit.SECONDS));
                assertEquals(0, successor.exitValue());
            }
            finally
            {
                successor.destroyForcibly();
            }
        }
    }

    private static java.util.concurrent.BlockingQueue<String> lines(final Process process)
    {
        return PeerProcesses.lines(process);
    }

    private static Field field(final Class<?> type, final String name) throws NoSuchFieldException
    {
        final Field field = type.getDeclaredField(name);
        field.setAccessible(true);
        return field;
    }
}
