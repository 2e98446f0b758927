package io.verbus.soak;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.media.rdma.RdmaSecret;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * {@code ./verbus soak}: runs {@link ProviderSoak}s side by side for the given time, then prints the summary and
 * exits non-zero on any failure ({@link SoakOptions#USAGE}). Not part of the test suite; {@code SoakMainTest} runs a
 * short one.
 */
public final class SoakMain
{
    private static final long WATCH_PERIOD_MS = 250;
    private static final int STREAM_BASE = 7100;
    private static final int STALE_LIVENESS_TIMEOUTS = 10;

    private final SoakOptions options;
    private final PrintStream out;

    SoakMain(final SoakOptions options, final PrintStream out)
    {
        this.options = options;
        this.out = out;
    }

    public static void main(final String[] args)
    {
        final SoakOptions options;
        try
        {
            options = SoakOptions.parse(args);
        }
        catch (final SoakOptions.UsageException ex)
        {
            System.err.println(null == ex.getMessage() ? SoakOptions.USAGE : "verbus soak: " + ex.getMessage() +
                "\n" + SoakOptions.USAGE);
            System.exit(null == ex.getMessage() ? 0 : 2);
            return;
        }
        final SoakSummary summary = new SoakMain(options, System.out).run();
        System.exit(summary.exitCode());
    }

    /** Runs the soak and prints its summary; never throws (a failure to set up is a failed soak). */
    SoakSummary run()
    {
        final SoakSummary summary = new SoakSummary(options);
        summary.loadAtStart = loadAverage();
        final List<ProviderSoak> soaks = new ArrayList<>();
        Path workDir = null;
        try
        {
            workDir = null != options.dir ? Files.createDirectories(options.dir) :
                Files.createTempDirectory("verbus-soak-");
            summary.workDir = workDir;
            out.println("verbus soak: " + describe(workDir));
            final List<String> jvmArgs = prepare(workDir, options.shmLivenessNs());
            int streamBase = STREAM_BASE;
            for (final String provider : options.providers)
            {
                final ProviderSoak soak = new ProviderSoak(provider, options, workDir, jvmArgs, streamBase);
                soaks.add(soak);
                soak.start(soaks.size() == 1 ? options.inject : "");
                out.println("verbus soak: " + provider + " up: publisher control port " + soak.controlPort() + ", " +
                    options.subscribers + " long-lived subscribers" + (options.killCycles() ? " + 1 restarted" : "") +
                    ", publisher fds " + soak.fdStart);
                streamBase += 100;
            }
            runFor(soaks, summary);
            for (final ProviderSoak soak : soaks)
            {
                soak.stopChurn();
            }
            for (final ProviderSoak soak : soaks)
            {
                soak.measureFdEnd();
            }
            for (final ProviderSoak soak : soaks)
            {
                soak.finish();
            }
            summary.sweptDevices = sweepKilledDevices(workDir.resolve("fabric"), soaks, options.shmLivenessNs());
            summary.leftFiles = leftFiles(workDir, soaks);
            summary.hsErrFiles = hsErrFiles(workDir);
        }
        catch (final Exception ex)
        {
            summary.setUpFailure = ex.toString();
            if (ex instanceof InterruptedException)
            {
                Thread.currentThread().interrupt();
            }
        }
        finally
        {
            for (final ProviderSoak soak : soaks)
            {
                for (final long pid : soak.pids())
                {
                    ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                }
            }
        }
        summary.providers = soaks;
        summary.loadAtEnd = loadAverage();
        summary.print(out);
        if (null != workDir && 0 == summary.exitCode() && null == options.dir)
        {
            ProviderSoak.deleteRecursively(workDir);
        }
        return summary;
    }

    private void runFor(final List<ProviderSoak> soaks, final SoakSummary summary) throws InterruptedException
    {
        final double fuzzRatePerProvider = options.fuzzRate / soaks.size();
        final long startNs = System.nanoTime();
        for (final ProviderSoak soak : soaks)
        {
            soak.startChurn(fuzzRatePerProvider);
        }
        long nextReportNs = startNs + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() - startNs < options.durationNs)
        {
            TimeUnit.MILLISECONDS.sleep(WATCH_PERIOD_MS);
            final long nowNs = System.nanoTime();
            for (final ProviderSoak soak : soaks)
            {
                soak.watchStalls(nowNs);
            }
            if (nowNs - nextReportNs > 0)
            {
                nextReportNs += TimeUnit.SECONDS.toNanos(60);
                out.println("verbus soak: " + TimeUnit.NANOSECONDS.toSeconds(nowNs - startNs) + " s, " +
                    SoakSummary.progress(soaks) + ", load " + loadAverage());
            }
        }
        summary.elapsedNs = System.nanoTime() - startNs;
    }

    /** The secret file (0600), the shm fabric directory and the JVM arguments every child gets. */
    private static List<String> prepare(final Path workDir, final long shmLivenessNs) throws IOException
    {
        final Path secret = workDir.resolve("secret");
        Files.deleteIfExists(secret);
        Files.createFile(secret, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
        final byte[] random = new byte[24];
        new SecureRandom().nextBytes(random);
        Files.writeString(secret, "soak-" + HexFormat.of().formatHex(random), StandardCharsets.US_ASCII);
        final Path fabric = Files.createDirectories(workDir.resolve("fabric"));
        Files.createDirectories(workDir.resolve("verbus"));
        return List.of(
            "-D" + RdmaSecret.SECRET_FILE_PROP_NAME + "=" + secret,
            "-D" + FabricContext.SHM_DIR_PROP_NAME + "=" + fabric,
            "-D" + FabricContext.SHM_LIVENESS_TIMEOUT_PROP_NAME + "=" + shmLivenessNs);
    }

    private String describe(final Path workDir)
    {
        return TimeUnit.NANOSECONDS.toSeconds(options.durationNs) + " s on " + String.join(",", options.providers) +
            ", commit=" + options.commit + ", " + options.subscribers +
            " long-lived subscriber processes per provider, kill cycles " +
            (options.killCycles() ? "every " + options.killMinMs + "-" + options.killMaxMs + " ms" : "off") +
            ", fuzzing " + options.fuzzRate + "/s, timeout " + options.timeoutMs + " ms, in " + workDir +
            (options.inject.isBlank() ? "" : ", INJECTING " + options.inject);
    }

    /**
     * A process killed -9 cannot remove its shm device; the fabric removes such a device when a later one opens, once
     * the dead one's heartbeat is {@value #STALE_LIVENESS_TIMEOUTS} liveness timeouts old (ShmStaleDevices). Waits for
     * that after the last kill and opens one device, as the next shm user would.
     *
     * @return how many device directories the sweep removed.
     */
    private static int sweepKilledDevices(final Path fabricDir, final List<ProviderSoak> soaks, final long livenessNs)
        throws IOException, InterruptedException
    {
        final long staleNs = (STALE_LIVENESS_TIMEOUTS + 1) * livenessNs;
        for (final ProviderSoak soak : soaks)
        {
            final long waitNs = soak.lastKillNs + staleNs - System.nanoTime();
            if (0 != soak.lastKillNs && waitNs > 0)
            {
                TimeUnit.NANOSECONDS.sleep(waitNs);
            }
        }
        final int before = deviceDirs(fabricDir);
        try (Fabric fabric = Fabrics.open("shm",
            new FabricContext().shmDirectory(fabricDir).shmLivenessTimeoutNs(livenessNs)))
        {
            fabric.openDevice().close(); // opening it ran the stale sweep
        }
        return before - deviceDirs(fabricDir);
    }

    private static int deviceDirs(final Path fabricDir) throws IOException
    {
        try (Stream<Path> paths = Files.list(fabricDir))
        {
            return (int)paths.filter((path) -> path.getFileName().toString().startsWith("dev-")).count();
        }
    }

    /** Files left in the fabric directory and in the Verbus dirs of the processes that closed normally. */
    private static List<String> leftFiles(final Path workDir, final List<ProviderSoak> soaks) throws IOException
    {
        final List<Path> roots = new ArrayList<>();
        roots.add(workDir.resolve("fabric"));
        for (final ProviderSoak soak : soaks)
        {
            roots.addAll(soak.verbusDirs());
        }
        final List<String> left = new ArrayList<>();
        for (final Path root : roots)
        {
            if (Files.isDirectory(root))
            {
                try (Stream<Path> paths = Files.walk(root))
                {
                    paths.filter((path) -> !path.equals(root)).forEach((path) -> left.add(workDir.relativize(path) +
                        (Files.isDirectory(path) ? "/" : "")));
                }
            }
        }
        return left;
    }

    private static List<String> hsErrFiles(final Path workDir) throws IOException
    {
        try (Stream<Path> paths = Files.list(workDir))
        {
            return paths.map((path) -> path.getFileName().toString()).filter((name) -> name.startsWith("hs_err"))
                .toList();
        }
    }

    static String loadAverage()
    {
        try
        {
            final String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0] + " " + fields[1] + " " + fields[2];
        }
        catch (final IOException ex)
        {
            return "unknown";
        }
    }
}
