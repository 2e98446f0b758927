package io.verbus.tools;

import io.verbus.Verbus;
import io.verbus.counters.CounterTypes;
import io.verbus.counters.CountersFile;
import org.agrona.concurrent.status.CountersReader;

import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;

/**
 * {@code ./verbus stat}: prints the counters of a running Verbus from another process, by mapping its
 * {@code counters.dat} read-only. Refreshes every interval until the driver exits, or prints once with
 * {@code --once}.
 */
public final class VerbusStat
{
    /** Default refresh interval. */
    public static final long INTERVAL_MS_DEFAULT = 1000;

    private static final String USAGE = """
        usage: verbus stat [--dir DIR] [--once] [--interval-ms N]
          --dir DIR         the Verbus dir holding counters.dat (default %s)
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
        String dir = Verbus.Context.defaultDir();
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

        final Path dirPath = Path.of(dir);
        final CountersFile countersFile;
        try
        {
            countersFile = CountersFile.openReadOnly(dirPath);
        }
        catch (final RuntimeException ex)
        {
            err.println("verbus stat: " + ex.getMessage());
            return 1;
        }

        try
        {
            final boolean clearScreen = !once && null != System.console();
            while (true)
            {
                final boolean alive = isAlive(countersFile.pid());
                if (clearScreen)
                {
                    out.print("\u001b[H\u001b[2J");
                }
                print(out, dirPath, countersFile, alive);
                out.flush();
                if (once)
                {
                    return 0;
                }
                if (!alive)
                {
                    out.println("driver pid " + countersFile.pid() + " has exited");
                    return 0;
                }
                if (!Files.exists(countersFile.path()))
                {
                    out.println("the Verbus in pid " + countersFile.pid() + " has closed (counters file removed)");
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
            countersFile.close();
        }
    }

    private static void print(
        final PrintStream out, final Path dir, final CountersFile countersFile, final boolean alive)
    {
        out.println("Verbus stat " + Instant.now() + "  dir=" + dir + "  pid=" + countersFile.pid() +
            (alive ? " (running)" : " (exited)") + "  started=" + Instant.ofEpochMilli(countersFile.startTimestampMs()));
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
