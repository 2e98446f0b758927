package io.verbus.gateway;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HexFormat;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The default demo: the strategy runs in this process, and the feed handler and order gateway in a child JVM that this
 * process starts with the same flags, so market data, orders and execution reports cross process boundaries over
 * {@code rdma:} channels (provider shm on one host). The child outlives this run by a margin and is stopped with
 * SIGTERM when the strategy's report is done (its shutdown hook closes it cleanly); its output goes to a log file
 * whose report is echoed here.
 */
public final class SeparateProcesses
{
    /** Name of the child's log in the output directory. */
    public static final String CHILD_LOG_FILE = "feed-orders.log";

    /** Name of the per-run rdma secret in the output directory. */
    public static final String SECRET_FILE = "rdma.secret";
    private static final int SECRET_BYTES = 32;
    private static final int SIGTERM_EXIT_CODE = 128 + 15;
    private static final long CHILD_EXTRA_LIFETIME_NS = TimeUnit.SECONDS.toNanos(30);
    private static final long CHILD_EXIT_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(15);

    private SeparateProcesses()
    {
    }

    /**
     * Start the child, run the strategy here, stop the child, report.
     *
     * @param config        parsed from the user's flags ({@link GatewayConfig#launchesProcesses()} is true).
     * @param out           for everything printed.
     * @param stopRequested set to end the run early.
     * @param gatewayHolder receives this process's gateway.
     * @return this process's run result.
     * @throws IOException          when the child cannot be started or the files cannot be written.
     * @throws InterruptedException when interrupted.
     */
    public static GatewayRun.Result run(
        final GatewayConfig userConfig,
        final PrintStream out,
        final AtomicBoolean stopRequested,
        final AtomicReference<Gateway> gatewayHolder) throws IOException, InterruptedException
    {
        GatewayConfig config = userConfig;
        if (null == config.secretFile())
        {
            // Both processes authenticate the rdma handshake with a secret made for this run, readable by us only.
            final Path secret = newSecretFile(config.outputDir());
            config = GatewayConfig.parse(append(config.args(), "--secret-file", secret.toAbsolutePath().toString()));
        }
        final GatewayConfig strategyConfig = GatewayConfig.parse(
            append(config.args(), "--role", "strategy", "--launch", "single", "--transport", "rdma"));
        final long childDurationNs = config.durationNs() + CHILD_EXTRA_LIFETIME_NS;
        String[] childArgs = append(config.args(), "--role", "feed,orders", "--launch", "single",
            "--transport", "rdma", "--duration", TimeUnit.NANOSECONDS.toMillis(childDurationNs) + "ms",
            "--progress", "0");
        if (config.hasExplicitVerbusDir())
        {
            // Two embedded drivers never share a dir: the child gets its own next to the given one.
            childArgs = append(childArgs, "--dir", config.verbusDir() + "-feed-orders");
        }
        final GatewayConfig childConfig = GatewayConfig.parse(childArgs); // fail here, not in the child

        Files.createDirectories(config.outputDir());
        final Path childLog = config.outputDir().resolve(CHILD_LOG_FILE);
        final Process child = start(childArgs, childLog);
        out.printf(Locale.ROOT, "Started the feed handler and order gateway in process %d (log %s)%n",
            child.pid(), childLog.toAbsolutePath());
        out.printf(Locale.ROOT, "  its live counters, from another shell: ./verbus stat --dir %s%n",
            childConfig.verbusDir());

        GatewayRun.Result result;
        boolean childEndedEarly = false;
        try
        {
            result = GatewayRun.run(strategyConfig, out, stopRequested, gatewayHolder);
            childEndedEarly = !child.isAlive();
        }
        finally
        {
            stop(child);
        }
        if (childEndedEarly)
        {
            out.printf(Locale.ROOT, "gateway: the feed handler and order gateway process ended before it was " +
                "stopped (exit code %d): see %s%n", child.exitValue(), childLog.toAbsolutePath());
        }

        out.println();
        final int exitValue = child.exitValue();
        out.printf(Locale.ROOT, "Feed handler and order gateway process %d %s; its report:%n", child.pid(),
            exitValue == SIGTERM_EXIT_CODE ? "stopped (SIGTERM, as planned)" : "exited with " + exitValue);
        for (final String line : childReport(childLog))
        {
            out.println("  | " + line);
        }
        return result;
    }

    private static Path newSecretFile(final Path directory) throws IOException
    {
        Files.createDirectories(directory);
        final Path file = directory.resolve(SECRET_FILE);
        Files.deleteIfExists(file);
        final byte[] bytes = new byte[SECRET_BYTES];
        new SecureRandom().nextBytes(bytes);
        try
        {
            Files.createFile(file, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        }
        catch (final UnsupportedOperationException notPosix)
        {
            Files.createFile(file);
        }
        Files.writeString(file, HexFormat.of().formatHex(bytes) + "\n", StandardCharsets.US_ASCII);
        return file;
    }

    private static Process start(final String[] args, final Path log) throws IOException
    {
        final String java = ProcessHandle.current().info().command()
            .orElse(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        final List<String> command = new ArrayList<>();
        command.add(java);
        for (final String jvmArg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            // The same JVM flags (module exports, native access, heap), but no debugger or agent of this process.
            if (!jvmArg.startsWith("-agentlib") && !jvmArg.startsWith("-javaagent") &&
                !jvmArg.startsWith("-XX:StartFlightRecording"))
            {
                command.add(jvmArg);
            }
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(GatewayDemo.class.getName());
        command.addAll(Arrays.asList(args));
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    }

    private static void stop(final Process child) throws InterruptedException
    {
        if (child.isAlive())
        {
            child.destroy();
            if (!child.waitFor(CHILD_EXIT_TIMEOUT_MS, TimeUnit.MILLISECONDS))
            {
                child.destroyForcibly();
                child.waitFor(CHILD_EXIT_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }
    }

    /** The child's report: its lines from "Run complete." or "Stopped early" on, without log noise. */
    static List<String> childReport(final Path log) throws IOException
    {
        final List<String> report = new ArrayList<>();
        boolean inReport = false;
        for (final String line : Files.readAllLines(log, StandardCharsets.UTF_8))
        {
            inReport |= line.startsWith("Run complete.") || line.startsWith("Stopped early");
            if (inReport && line.startsWith("  ") || line.startsWith("gateway:"))
            {
                report.add(line.trim());
            }
        }
        if (report.isEmpty())
        {
            report.add("(no report in " + log.toAbsolutePath() + ")");
        }
        return report;
    }

    private static String[] append(final String[] args, final String... more)
    {
        final String[] all = Arrays.copyOf(args, args.length + more.length);
        System.arraycopy(more, 0, all, args.length, more.length);
        return all;
    }
}
