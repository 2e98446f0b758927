package io.verbus.media.rdma;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * Starting {@link RdmaPeerMain} (or another test main's) JVMs and reading what they print, for the cross-process tests.
 */
final class PeerProcesses
{
    private PeerProcesses()
    {
    }

    /**
     * @param secret   the rdma handshake secret both sides use.
     * @param fabricDir the shm provider's directory, shared by the peers.
     * @param extra    more JVM arguments (system properties).
     * @return {@code java <this JVM's module flags> -Xmx256m <props> -cp <classpath> RdmaPeerMain}: append the
     * main's arguments.
     */
    static List<String> javaCommand(final String secret, final Path fabricDir, final String... extra)
    {
        return javaCommand(RdmaPeerMain.class, secret, fabricDir, extra);
    }

    /** As {@link #javaCommand(String, Path, String...)}, for another main class of these tests. */
    static List<String> javaCommand(
        final Class<?> mainClass, final String secret, final Path fabricDir, final String... extra)
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
        command.add("-Xmx256m");
        command.add("-D" + RdmaSecret.SECRET_PROP_NAME + "=" + secret);
        command.add("-D" + io.verbus.fabric.FabricContext.SHM_DIR_PROP_NAME + "=" + fabricDir);
        command.addAll(List.of(extra));
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        return command;
    }

    /** @return the first line starting with {@code prefix} or FAILED; throws when the process ends first. */
    static String readLine(final BufferedReader reader, final String prefix, final Process process)
        throws IOException
    {
        String line;
        while (null != (line = reader.readLine()))
        {
            if (line.startsWith(prefix) || line.startsWith("FAILED"))
            {
                return line;
            }
        }
        throw new AssertionError("process ended (" + process.isAlive() + ") before printing " + prefix);
    }

    /** @return every line the process prints (stdout and stderr merged), collected by a virtual thread. */
    static BlockingQueue<String> lines(final Process process)
    {
        final BlockingQueue<String> lines = new LinkedBlockingQueue<>();
        Thread.ofVirtual().start(() ->
        {
            try (BufferedReader reader = new BufferedReader(
                new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
            {
                String line;
                while (null != (line = reader.readLine()))
                {
                    lines.add(line);
                }
            }
            catch (final IOException ignore)
            {
                // process gone
            }
        });
        return lines;
    }

    /**
     * Waits for the first line of a process that starts with one of the prefixes.
     *
     * @return the line, or null when none came within the timeout.
     */
    static String awaitLine(final BlockingQueue<String> lines, final List<String> seen, final long timeoutNs,
        final String... prefixes) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (true)
        {
            final long leftNs = deadlineNs - System.nanoTime();
            if (leftNs <= 0)
            {
                return null;
            }
            final String line = lines.poll(leftNs, TimeUnit.NANOSECONDS);
            if (null == line)
            {
                return null;
            }
            seen.add(line);
            for (final String prefix : prefixes)
            {
                if (line.startsWith(prefix))
                {
                    return line;
                }
            }
        }
    }

    /** @return the last lines of a process's output, for a failure message. */
    static String tail(final List<String> seen, final BlockingQueue<String> unread, final int maxLines)
    {
        final List<String> all = new ArrayList<>(seen);
        unread.drainTo(all);
        seen.clear();
        seen.addAll(all);
        final List<String> last = all.subList(Math.max(0, all.size() - maxLines), all.size());
        return String.join("\n    ", last);
    }
}
