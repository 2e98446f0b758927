package io.verbus.samples;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Sample JVMs started as a user starts them (the flags of {@code etc/jvm.args}, {@code verbus.sample.*} properties),
 * each writing its output to {@code <dir>/<name>.log}; shared by the samples' cross-process tests.
 */
final class SampleProcesses
{
    static final long PROCESS_TIMEOUT_S = 120;

    private final Path dir;

    SampleProcesses(final Path dir)
    {
        this.dir = dir;
    }

    /**
     * @param mainClass  a sample, or any main on the test class path (such as {@code io.verbus.MediaDriver}).
     * @param name       names the log file.
     * @param properties JVM arguments, such as {@code -Dverbus.sample.channel=ipc}.
     * @param args       the main's arguments.
     * @return the started process.
     * @throws IOException if it cannot be started.
     */
    Process start(final String mainClass, final String name, final List<String> properties, final String... args)
        throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("@" + findJvmArgs());
        command.add("-Dverbus.rdma.secret=samples-cross-process-test-secret-0123456789");
        command.add("-Dverbus.fabric.shm.dir=" + dir.resolve("fabric"));
        command.add("-Dverbus.sample.dir=" + dir.resolve("verbus-" + name));
        command.add("-Dverbus.sample.idle-strategy=backoff");
        command.addAll(properties);
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass);
        command.addAll(List.of(args));
        return new ProcessBuilder(command).redirectErrorStream(true)
            .redirectOutput(dir.resolve(name + ".log").toFile()).start();
    }

    Process start(final Class<?> sample, final String name, final List<String> properties) throws IOException
    {
        return start(sample.getName(), name, properties);
    }

    String output(final String name) throws IOException
    {
        return Files.readString(dir.resolve(name + ".log"), StandardCharsets.UTF_8);
    }

    void awaitOutput(final String name, final String text) throws Exception
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(PROCESS_TIMEOUT_S);
        while (!output(name).contains(text))
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("no '" + text + "' from " + name + ":\n" + output(name));
            }
            Thread.sleep(20);
        }
    }

    static void stop(final Process process) throws InterruptedException
    {
        if (null != process && process.isAlive())
        {
            process.destroyForcibly();
            process.waitFor(30, TimeUnit.SECONDS);
        }
    }

    static List<String> concat(final List<String> one, final List<String> two)
    {
        final List<String> both = new ArrayList<>(one);
        both.addAll(two);
        return both;
    }

    static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
    }

    private static Path findJvmArgs()
    {
        Path current = Path.of("").toAbsolutePath();
        for (int i = 0; i < 5 && null != current; i++)
        {
            final Path candidate = current.resolve("etc").resolve("jvm.args");
            if (Files.isRegularFile(candidate))
            {
                return candidate;
            }
            current = current.getParent();
        }
        throw new IllegalStateException("etc/jvm.args not found above " + Path.of("").toAbsolutePath());
    }
}
