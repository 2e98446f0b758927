package io.verbus.tools;

import io.verbus.Verbus;
import io.verbus.counters.CounterTypes;
import io.verbus.counters.CountersFile;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

/**
 * {@code ./verbus stat}: prints the counters of a running Verbus from another process, by mapping its
 * {@code counters.dat} read-only. Refreshes every interval until the driver exits, or prints once with
 * {@code --once}.
 * <p>
 * Without {@code --dir} it reads the default dir; when no Verbus runs there, it shows every running Verbus whose dir
 * sits next to it with the default's name as prefix (the {@code ./verbus demo} processes use
 * {@code <default>-gateway-<role>}), so {@code ./verbus stat} finds a demo with no flag.
 */
public final class VerbusStat
{
    /** Default refresh interval. */
    public static final long INTERVAL_MS_DEFAULT = 1000;

    private static final String USAGE = """
        usage: verbus stat [--dir DIR] [--once] [--interval-ms N]
          --dir DIR         the Verbus dir holding counters.dat (default %s; when no Verbus runs there,
                            every running one in a dir next to it named after it, e.g. ./verbus demo's)
          --once            print the counters once and exit (for scripts and tests)
          --interval-ms N   refresh interval in milliseconds, at least 10 (default %d)
          --help            this text""";

    private VerbusStat()
    {
    }

    /**
     * @param args see {@code --help}.
     */
    public static void main(final String[] args)
    {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs the command; separated from {@link #main} so that tests need not exit the JVM.
     *
     * @return the exit status: 0 done, 1 no live counters file, 2 bad arguments.
     */
    public static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        return run(args, out, err, Path.of(Verbus.Context.defaultDir()));
    }

    /**
     * As {@link #run(String[], PrintStream, PrintStream)} with another default dir (for tests).
     */
    static int run(final String[] args, final PrintStream out, final PrintStream err, final Path defaultDir)
    {
        String dir = null;
        boolean once = false;
        long intervalMs = INTERVAL_MS_DEFAULT;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--dir" ->
                {
                    if (++i >= args.length)
                    {
                        return usageError(err, "--dir needs a value");
                    }
                    dir = args[i];
                }
                case "--once" -> once = true;
                case "--interval-ms" ->
                {
                    if (++i >= args.length)
                    {
                        return usageError(err, "--interval-ms needs a value");
                    }
                    try
                    {
                        intervalMs = Long.parseLong(args[i]);
                    }
                    catch (final NumberFormatException ex)
                    {
                        return usageError(err, "--interval-ms '" + args[i] + "' is not a number");
                    }
                    if (intervalMs < 10)
                    {
                        return usageError(err, "--interval-ms must be at least 10, got " + intervalMs);
                    }
                }
                case "--help", "-h" ->
                {
                    out.println(USAGE.formatted(Verbus.Context.defaultDir(), INTERVAL_MS_DEFAULT));
                    return 0;
                }
                default ->
                {
                    return usageError(err, "unknown argument '" + args[i] + "'");
                }
            }
        }

        final List<Path> dirs;
        if (null != dir)
        {
            dirs = List.of(Path.of(dir));
        }
        else
        {
            dirs = runningDirs(defaultDir);
            if (dirs.isEmpty())
            {
                err.println("verbus stat: no running Verbus in " + defaultDir + " nor in a dir next to it named " +
                    defaultDir.getFileName() + "-*: is one running? Give its dir with --dir DIR");
                return 1;
            }
            if (!dirs.get(0).equals(defaultDir))
            {
                out.println("verbus stat: no Verbus runs in " + defaultDir + "; showing the " +
                    (1 == dirs.size() ? "one" : dirs.size() + " Verbus instances") + " running next to it " +
                    "(choose one with --dir DIR):");
                for (final Path running : dirs)
                {
                    out.println("  ./verbus stat --dir " + running);
                }
            }
        }

        final List<CountersFile> countersFiles = new ArrayList<>();
        try
        {
            for (final Path dirPath : dirs)
            {
                countersFiles.add(CountersFile.openReadOnly(dirPath));
            }
        }
        catch (final RuntimeException ex)
        {
            countersFiles.forEach(CountersFile::close);
            err.println("verbus stat: " + ex.getMessage());
            return 1;
        }
        return watch(out, dirs, countersFiles, once, intervalMs);
    }

    /**
     * Print the counters of each dir, once or every {@code intervalMs} until none of the drivers runs; closes the
     * counters files.
     *
     * @return the exit code, 0.
     */
    private static int watch(
        final PrintStream out,
        final List<Path> dirs,
        final List<CountersFile> countersFiles,
        final boolean once,
        final long intervalMs)
    {
        try
        {
            final boolean clearScreen = !once && null != System.console();
            while (true)
            {
                if (clearScreen)
                {
                    out.print("\u001b[H\u001b[2J");
                }
                boolean anyRunning = false;
                for (int i = 0; i < countersFiles.size(); i++)
                {
                    final CountersFile countersFile = countersFiles.get(i);
                    final boolean alive = isAlive(countersFile.pid());
                    print(out, dirs.get(i), countersFile, alive);
                    if (once)
                    {
                        continue;
                    }
                    if (!alive)
                    {
                        out.println("driver pid " + countersFile.pid() + " has exited");
                    }
                    else if (!Files.exists(countersFile.path()))
                    {
                        out.println("the Verbus in pid " + countersFile.pid() + " has closed (counters file removed)");
                    }
                    else
                    {
                        anyRunning = true;
                    }
                }
                out.flush();
                if (once || !anyRunning)
                {
                    return 0;
                }
                Thread.sleep(intervalMs);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return 0;
        }
        finally
        {
            countersFiles.forEach(CountersFile::close);
        }
    }

    /**
     * @return the default dir when a live Verbus uses it, else the live dirs next to it whose names start with its
     * name, sorted; empty when there are none.
     */
    static List<Path> runningDirs(final Path defaultDir)
    {
        if (isRunningIn(defaultDir))
        {
            return List.of(defaultDir);
        }
        final Path parent = defaultDir.toAbsolutePath().getParent();
        final String prefix = defaultDir.getFileName() + "-";
        final List<Path> running = new ArrayList<>();
        if (null != parent && Files.isDirectory(parent))
        {
            try (Stream<Path> siblings = Files.list(parent))
            {
                siblings.filter((p) -> p.getFileName().toString().startsWith(prefix) && isRunningIn(p))
                    .sorted()
                    .forEach(running::add);
            }
            catch (final IOException | SecurityException ex)
            {
                // An unreadable parent: nothing to show besides the default dir's error.
            }
        }
        return running;
    }

    private static boolean isRunningIn(final Path dir)
    {
        if (!Files.isRegularFile(dir.resolve(CountersFile.FILE_NAME)))
        {
            return false;
        }
        try (CountersFile countersFile = CountersFile.openReadOnly(dir))
        {
            return isAlive(countersFile.pid());
        }
        catch (final RuntimeException ex)
        {
            return false;
        }
    }

    private static void print(
        final PrintStream out, final Path dir, final CountersFile countersFile, final boolean alive)
    {
        out.println("Verbus stat " + Instant.now() + "  dir=" + dir + "  pid=" + countersFile.pid() +
            (alive ? " (running)" : " (exited)") +
            "  started=" + Instant.ofEpochMilli(countersFile.startTimestampMs()));
        out.printf("%5s  %-13s  %20s  %s%n", "id", "type", "value", "label");
        final CountersReader reader = countersFile.countersReader();
        reader.forEach((counterId, typeId, keyBuffer, label) -> out.printf("%5d  %-13s  %20d  %s%n",
            counterId, CounterTypes.typeName(typeId), reader.getCounterValue(counterId), label));
    }

    private static boolean isAlive(final long pid)
    {
        return ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
    }

    private static int usageError(final PrintStream err, final String message)
    {
        err.println("verbus stat: " + message);
        err.println(USAGE.formatted(Verbus.Context.defaultDir(), INTERVAL_MS_DEFAULT));
        return 2;
    }
}
