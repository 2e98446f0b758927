package io.verbus.archive;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.fail;

/** A JVM running one of the tests' main classes with this JVM's flags and class path; its output read by line. */
final class ChildProcess implements AutoCloseable
{
    private final Process process;
    private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
    private final List<String> transcript = new ArrayList<>();

    private ChildProcess(final Process process)
    {
        this.process = process;
        final Thread reader = new Thread(() ->
        {
            try (BufferedReader in = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = in.readLine()))
                {
                    lines.add(line);
                }
            }
            catch (final IOException ignore)
            {
                // the process ended
            }
        }, "child-output");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * @param mainClass  to run.
     * @param properties {@code -D} settings, e.g. the rdma secret.
     * @param args       of the main class.
     */
    static ChildProcess start(final Class<?> mainClass, final List<String> properties, final String... args)
        throws IOException
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
        command.add("-Xmx512m");
        command.addAll(properties);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(List.of(args));
        return new ChildProcess(new ProcessBuilder(command).redirectErrorStream(true).start());
    }

    /**
     * @return the last line starting with the prefix among those printed so far (consuming them), or null.
     */
    String latestLine(final String prefix)
    {
        String latest = null;
        String line;
        while (null != (line = lines.poll()))
        {
            transcript.add(line);
            if (line.startsWith(prefix))
            {
                latest = line;
            }
        }
        return latest;
    }

    /** @return the first line starting with the prefix; fails on a FAILED line, on exit, or after the timeout. */
    String awaitLine(final String prefix, final long timeoutMs) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadlineNs)
        {
            final String line = lines.poll(100, TimeUnit.MILLISECONDS);
            if (null == line)
            {
                if (!process.isAlive() && lines.isEmpty())
                {
                    fail("child exited (" + process.exitValue() + ") before printing " + prefix + ": " + transcript);
                }
                continue;
            }
            transcript.add(line);
            if (line.startsWith(prefix))
            {
                return line;
            }
            if (line.startsWith("FAILED"))
            {
                fail("child: " + line + " " + transcript);
            }
        }
        fail("child printed no " + prefix + " within " + timeoutMs + " ms: " + transcript);
        return null;
    }

    void send(final String line) throws IOException
    {
        final OutputStream out = process.getOutputStream();
        out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
        out.flush();
    }

    long pid()
    {
        return process.pid();
    }

    /** Sends SIGTERM (an orderly shutdown) and waits for the process to exit; false if it did not in time. */
    boolean terminate(final long timeoutMs) throws InterruptedException
    {
        process.destroy();
        return process.waitFor(timeoutMs, TimeUnit.MILLISECONDS);
    }

    /** @return the lines read so far (those awaited and those skipped over). */
    List<String> transcript()
    {
        return List.copyOf(transcript);
    }

    /** Sends SIGKILL and waits for the process to go. */
    void kill() throws InterruptedException
    {
        process.destroyForcibly();
        process.waitFor(30, TimeUnit.SECONDS);
    }

    boolean waitFor(final long timeoutMs) throws InterruptedException
    {
        return process.waitFor(timeoutMs, TimeUnit.MILLISECONDS);
    }

    public void close()
    {
        process.destroyForcibly();
    }
}
