package io.verbus.tools;

import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class VerbusStatTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldPrintCountersOfALiveVerbusFromAChildProcess() throws Exception
    {
        final Verbus.Context context = TestSupport.context(tempDir);
        try (Verbus verbus = Verbus.launch(context))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 5150);
            final Publication publication = verbus.addPublication("ipc:term-length=64k", 5150);
            TestSupport.await("connected", publication::isConnected);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[100]);
            for (int i = 0; i < 10; i++)
            {
                TestSupport.await("offer", () -> publication.offer(buffer, 0, 100) > 0);
            }
            final int[] received = {0};
            TestSupport.await("received", () -> received[0] == 10,
                () -> received[0] += subscription.poll((b, o, l, h) -> {}, 10));
            final long position = publication.position();
            TestSupport.await("position counter", () -> hasCounterValue(verbus, position));

            final List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            command.add("@" + findJvmArgs());
            command.add("-cp");
            command.add(System.getProperty("java.class.path"));
            command.add(VerbusStat.class.getName());
            command.add("--dir");
            command.add(context.dir());
            command.add("--once");
            final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
            final String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, process.exitValue(), output);

            assertTrue(output.contains("pid=" + ProcessHandle.current().pid() + " (running)"), output);
            final String pubPosLine = line(output, "pub-pos: ipc stream=5150");
            assertTrue(pubPosLine.contains(" " + position + " "), pubPosLine);
            final String subPosLine = line(output, "sub-pos: ipc stream=5150");
            assertTrue(subPosLine.contains(" " + position + " "), subPosLine);
            assertTrue(output.contains("pub-lmt: ipc stream=5150"), output);
            assertTrue(output.contains("back-pressure: ipc stream=5150"), output);
            assertTrue(line(output, "errors").contains("errors"), output);
        }
    }

    @Test
    void shouldRefreshLiveUntilTheDriverCloses() throws Exception
    {
        final Verbus.Context context = TestSupport.context(tempDir);
        final Process process;
        final Verbus verbus = Verbus.launch(context);
        try
        {
            verbus.addPublication("ipc", 77);
            process = new ProcessBuilder(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(), "@" + findJvmArgs(),
                "-cp", System.getProperty("java.class.path"), VerbusStat.class.getName(),
                "--dir", context.dir(), "--interval-ms", "50")
                .redirectErrorStream(true).start();
            final java.io.BufferedReader reader = new java.io.BufferedReader(
                new java.io.InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            int headers = 0;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            String line;
            while (headers < 3 && System.nanoTime() < deadlineNs && null != (line = reader.readLine()))
            {
                if (line.contains("Verbus stat") && line.contains("(running)"))
                {
                    headers++;
                }
            }
            assertEquals(3, headers, "three live refreshes");
            verbus.close();
            final String rest = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
            assertTrue(process.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, process.exitValue());
            assertTrue(rest.contains("has closed (counters file removed)"), rest);
        }
        finally
        {
            verbus.close();
        }
    }

    @Test
    void shouldFindTheRunningVerbusNextToTheDefaultDirWithoutADirFlag()
    {
        // As ./verbus demo does: no Verbus in the default dir, two in dirs named after it.
        final Path defaultDir = tempDir.resolve("verbus-me");
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
        final PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);

        assertEquals(1, VerbusStat.run(new String[]{"--once"}, outStream, errStream, defaultDir));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("no running Verbus in " + defaultDir +
            " nor in a dir next to it named verbus-me-*"), err.toString(StandardCharsets.UTF_8));

        try (Verbus strategy = Verbus.launch(TestSupport.context(tempDir).dir(defaultDir + "-gateway-strategy"));
            Verbus feed = Verbus.launch(TestSupport.context(tempDir).dir(defaultDir + "-gateway-feed-orders")))
        {
            strategy.addPublication("ipc", 501);
            feed.addPublication("ipc", 502);
            assertEquals(0, VerbusStat.run(new String[]{"--once"}, outStream, errStream, defaultDir));
            final String output = out.toString(StandardCharsets.UTF_8);
            assertTrue(output.contains("showing the 2 Verbus instances running next to it"), output);
            assertTrue(output.contains("./verbus stat --dir " + defaultDir + "-gateway-strategy"), output);
            assertTrue(output.contains("dir=" + defaultDir + "-gateway-feed-orders"), output);
            assertTrue(output.contains("pub-pos: ipc stream=501"), output);
            assertTrue(output.contains("pub-pos: ipc stream=502"), output);
        }
    }

    @Test
    void shouldRejectBadArgumentsAndAMissingDirClearly()
    {
        final ByteArrayOutputStream out = new ByteArrayOutputStream();
        final ByteArrayOutputStream err = new ByteArrayOutputStream();
        final PrintStream outStream = new PrintStream(out, true, StandardCharsets.UTF_8);
        final PrintStream errStream = new PrintStream(err, true, StandardCharsets.UTF_8);

        assertEquals(2, VerbusStat.run(new String[]{"--bogus"}, outStream, errStream));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("unknown argument '--bogus'"));
        assertEquals(2, VerbusStat.run(new String[]{"--interval-ms", "x"}, outStream, errStream));
        assertEquals(2, VerbusStat.run(new String[]{"--interval-ms", "1"}, outStream, errStream));
        assertEquals(2, VerbusStat.run(new String[]{"--dir"}, outStream, errStream));
        assertEquals(1, VerbusStat.run(
            new String[]{"--dir", tempDir.resolve("nothing").toString(), "--once"}, outStream, errStream));
        assertTrue(err.toString(StandardCharsets.UTF_8).contains("no counters file at"));
        assertEquals(0, VerbusStat.run(new String[]{"--help"}, outStream, errStream));
        assertTrue(out.toString(StandardCharsets.UTF_8).contains("--interval-ms"));
    }

    private static boolean hasCounterValue(final Verbus verbus, final long value)
    {
        final boolean[] found = {false};
        verbus.countersReader().forEach((id, type, key, label) ->
        {
            if (label.startsWith("pub-pos") && verbus.countersReader().getCounterValue(id) == value)
            {
                found[0] = true;
            }
        });
        return found[0];
    }

    private static String line(final String output, final String fragment)
    {
        return output.lines().filter(l -> l.contains(fragment)).findFirst()
            .orElseThrow(() -> new AssertionError("no line with '" + fragment + "' in:\n" + output));
    }

    private static Path findJvmArgs()
    {
        Path dir = Path.of("").toAbsolutePath();
        for (int i = 0; i < 5 && null != dir; i++)
        {
            final Path candidate = dir.resolve("etc").resolve("jvm.args");
            if (Files.isRegularFile(candidate))
            {
                return candidate;
            }
            dir = dir.getParent();
        }
        throw new IllegalStateException("etc/jvm.args not found above " + Path.of("").toAbsolutePath());
    }
}
