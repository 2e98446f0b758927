package io.verbus.soak;

import java.io.BufferedReader;
import java.io.BufferedWriter;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One child JVM of the soak: its output goes to a log file and is read line by line, the last {@code STAT} line
 * kept, every other line queued for whoever waits for it; commands go to its stdin.
 */
final class Child
{
    /** Exit code of a JVM ended by SIGKILL (128 + 9). */
    static final int SIGKILL_EXIT = 137;
    private static final int TAIL_LINES = 40;

    final String name;
    final Process process;
    final Path dir;
    final AtomicLong errors = new AtomicLong();
    final AtomicLong unavailable = new AtomicLong();
    private final BlockingQueue<String> events = new LinkedBlockingQueue<>();
    private final Deque<String> tail = new ArrayDeque<>();
    private final Writer stdin;
    private volatile String lastStat;
    private volatile boolean killed;

    private Child(final String name, final Process process, final Path dir)
    {
        this.name = name;
        this.process = process;
        this.dir = dir;
        this.stdin = new BufferedWriter(new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8));
    }

    /**
     * @param workDir the soak's directory: the JVM's error file goes there.
     * @param extraJvmArgs system properties.
     * @param mainClass and its {@code args}.
     */
    static Child start(
        final String name,
        final Path workDir,
        final Path dir,
        final List<String> extraJvmArgs,
        final Class<?> mainClass,
        final List<String> args) throws IOException
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
        command.add("-Xmx192m");
        command.add("-XX:+UseSerialGC");
        command.add("-XX:-UsePerfData"); // no hsperfdata file a kill -9 would leave behind
        command.add("-XX:ErrorFile=" + workDir.resolve("hs_err_pid%p.log"));
        // Milliseconds in every log line: a kill, the publisher's drop of the connection and a stall are compared.
        command.add("-Djava.util.logging.SimpleFormatter.format=%1$tF %1$tT.%1$tL %4$s %2$s: %5$s%6$s%n");
        command.addAll(extraJvmArgs);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(args);
        final Path log = workDir.resolve("logs").resolve(name + ".log");
        Files.createDirectories(log.getParent());
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final Child child = new Child(name, process, dir);
        Thread.ofPlatform().name("soak-read-" + name).daemon().start(() -> child.read(log));
        return child;
    }

    private void read(final Path log)
    {
        try (BufferedReader reader = new BufferedReader(
            new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            BufferedWriter out = Files.newBufferedWriter(log, StandardCharsets.UTF_8))
        {
            String line;
            while (null != (line = reader.readLine()))
            {
                out.write(line);
                out.newLine();
                if (line.startsWith("STAT"))
                {
                    lastStat = line;
                    continue;
                }
                out.flush();
                if (line.startsWith("ERROR") || line.startsWith("DRIVER-ERROR"))
                {
                    errors.incrementAndGet();
                }
                else if (line.startsWith("UNAVAILABLE"))
                {
                    unavailable.incrementAndGet();
                }
                synchronized (tail)
                {
                    tail.addLast(line);
                    if (tail.size() > TAIL_LINES)
                    {
                        tail.removeFirst();
                    }
                }
                events.add(line);
            }
        }
        catch (final IOException ignore)
        {
            // the process is gone
        }
    }

    /** @return the first queued line starting with {@code prefix} within the timeout, or null. */
    String await(final String prefix, final long timeoutMs) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (true)
        {
            final long leftNs = deadlineNs - System.nanoTime();
            final String line = leftNs > 0 ? events.poll(Math.min(leftNs, 50_000_000L), TimeUnit.NANOSECONDS) : null;
            if (null != line && line.startsWith(prefix))
            {
                return line;
            }
            if (null == line && (leftNs <= 0 || (!process.isAlive() && events.isEmpty())))
            {
                return null;
            }
        }
    }

    void send(final String line)
    {
        try
        {
            stdin.write(line);
            stdin.write('\n');
            stdin.flush();
        }
        catch (final IOException ex)
        {
            // the process is gone: its exit code says why
        }
    }

    String lastStat()
    {
        return lastStat;
    }

    /** @return how long the process took to be gone after its SIGKILL, in ms. */
    long killHard() throws InterruptedException
    {
        killed = true;
        final long startNs = System.nanoTime();
        process.destroyForcibly(); // SIGKILL on Linux
        process.waitFor(30, TimeUnit.SECONDS);
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
    }

    boolean wasKilled()
    {
        return killed;
    }

    long pid()
    {
        return process.pid();
    }

    String tail()
    {
        synchronized (tail)
        {
            return String.join("\n      ", tail);
        }
    }

    /** @return the last STAT line's fields after the word, split at spaces. */
    String[] statFields()
    {
        final String stat = lastStat;
        return null == stat ? new String[0] : stat.substring(4).trim().split(" ");
    }
}
