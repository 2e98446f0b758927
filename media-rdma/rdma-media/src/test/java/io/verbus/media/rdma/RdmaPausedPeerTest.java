package io.verbus.media.rdma;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One timeout governs every layer: a subscriber process stopped (SIGSTOP) for 3 s mid-stream on a channel with
 * {@code timeout=10s} over {@code provider=shm} is not dropped by the shm fabric's own 1 s liveness; when it resumes
 * it receives every message, in order, none lost.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RdmaPausedPeerTest
{
    private static final String SECRET = "paused-peer-secret-0123456789abcdef";
    private static final long MESSAGES = 300_000;

    @TempDir
    Path dir;

    private List<String> java(final String... args)
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String argument : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (argument.startsWith("--add-") || argument.startsWith("--enable-native-access") ||
                argument.startsWith("--sun-misc"))
            {
                command.add(argument);
            }
        }
        command.addAll(List.of("-Xmx256m", "-D" + RdmaSecret.SECRET_PROP_NAME + "=" + SECRET,
            "-D" + io.verbus.fabric.FabricContext.SHM_DIR_PROP_NAME + "=" + dir.resolve("fabric"),
            "-cp", System.getProperty("java.class.path"), RdmaPeerMain.class.getName()));
        command.addAll(List.of(args));
        return command;
    }

    @Test
    void shouldLoseNothingWhenASubscriberIsStoppedWithinTheChannelTimeout() throws Exception
    {
        final Process publisher = new ProcessBuilder(java("publish", dir.resolve("pub").toString(),
            "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=256k|timeout=10s", "3101", Long.toString(MESSAGES)))
            .redirectErrorStream(true).start();
        Process subscriber = null;
        try
        {
            final BufferedReader publisherOut =
                new BufferedReader(new InputStreamReader(publisher.getInputStream(), StandardCharsets.UTF_8));
            final int port = Integer.parseInt(readLine(publisherOut, "PORT ").substring(5).trim());

            final Path subscriberLog = dir.resolve("subscriber.log");
            subscriber = new ProcessBuilder(java("subscribe", dir.resolve("sub").toString(),
                "rdma:endpoint=127.0.0.1:" + port + "|provider=shm|timeout=10s", "3101", Long.toString(MESSAGES)))
                .redirectErrorStream(true).redirectOutput(subscriberLog.toFile()).start();

            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!Files.readString(subscriberLog).contains("PROGRESS "))
            {
                assertTrue(System.nanoTime() < deadlineNs && subscriber.isAlive(), Files.readString(subscriberLog));
                Thread.sleep(5);
            }
            signal("STOP", subscriber.pid());
            Thread.sleep(3000);
            signal("CONT", subscriber.pid());

            assertTrue(subscriber.waitFor(120, TimeUnit.SECONDS), "subscriber finished");
            final String output = Files.readString(subscriberLog);
            assertEquals(0, subscriber.exitValue(), output);
            assertTrue(output.contains("RECEIVED " + MESSAGES + " OK first=0"), output);
            publisher.getOutputStream().write("DONE\n".getBytes(StandardCharsets.UTF_8));
            publisher.getOutputStream().flush();
            assertTrue(publisher.waitFor(30, TimeUnit.SECONDS));
        }
        finally
        {
            publisher.destroyForcibly();
            if (null != subscriber)
            {
                signal("CONT", subscriber.pid());
                subscriber.destroyForcibly();
            }
        }
    }

    private static void signal(final String signal, final long pid) throws Exception
    {
        final Process kill = new ProcessBuilder("kill", "-" + signal, Long.toString(pid)).inheritIO().start();
        assertTrue(kill.waitFor(10, TimeUnit.SECONDS));
    }

    private static String readLine(final BufferedReader reader, final String prefix) throws Exception
    {
        String line;
        while (null != (line = reader.readLine()))
        {
            if (line.startsWith(prefix))
            {
                return line;
            }
        }
        throw new AssertionError("no line " + prefix);
    }
}
