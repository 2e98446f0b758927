package io.verbus;

import io.verbus.aeron.AeronChannels;
import io.verbus.counters.CountersFile;
import io.verbus.driver.CncFile;
import io.verbus.driver.IdleStrategies;
import org.agrona.CloseHelper;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.ShutdownSignalBarrier;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.errors.DistinctErrorLog;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Instant;
import java.util.concurrent.TimeUnit;

/**
 * A standalone Verbus driver, Aeron's {@code MediaDriver}: one process per host (or per dir) owns the logs, the
 * counters and the agents, and client processes attach to it with {@link Verbus#connect(Verbus.Context)} through the
 * dir. Publications and subscriptions of different clients on the same {@code ipc} channel and stream share the
 * driver's mapped log: the publisher appends into it, the subscriber reads it, and the driver's conductor keeps the
 * publisher limit from the subscribers' position counters, as it does for an embedded driver. A client's media
 * ({@code rdma:}) publication is sent by the driver's sender agent; a client's media subscription is served by one
 * driver-side media subscription per channel and stream, whose images are copied into logs the clients share.
 * <pre>{@code
 * try (ShutdownSignalBarrier barrier = new ShutdownSignalBarrier();
 *     MediaDriver driver = MediaDriver.launch(new Verbus.Context().dir("/dev/shm/verbus-shared")))
 * {
 *     barrier.await();
 * }
 * }</pre>
 * The dir holds {@code cnc.dat} (the command ring, the broadcast buffer, the error log and the heartbeat, see
 * {@link CncFile}), {@code counters.dat} (as for an embedded driver, so {@code ./verbus stat --dir D} reads it) and
 * the {@code ipc} log files, each deleted when its log is retired, and {@code aeron/}, the dir of the Aeron media
 * driver this driver runs for its clients' {@code aeron:} channels (each client connects its own Aeron client to it,
 * Aeron's model); with {@link Verbus.Context#aeronDirectoryName(String)} set, the driver attaches to that running
 * Aeron driver instead and its clients follow it. A client silent for
 * {@link Verbus.Context#clientLivenessTimeoutNs()} is taken for dead: its publications and subscriptions are closed
 * as if it had closed them, so the other clients carry on.
 */
public final class MediaDriver implements AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(MediaDriver.class.getName());

    private final Verbus.Context context;
    private final VerbusDriver driver;
    private final CncFile cncFile;
    private final DriverClients clients;
    private final AgentRunner clientsRunner;
    /** The Aeron media driver for clients' aeron: channels, or null when attached to one already running. */
    private final io.aeron.driver.MediaDriver aeronDriver;
    private volatile DistinctErrorLog errorLog;
    private volatile boolean isClosed;

    private MediaDriver(final Verbus.Context context)
    {
        this.context = context;
        final Path dir = Path.of(context.dir());
        refuseLiveDriver(dir);
        final org.agrona.ErrorHandler userHandler = context.errorHandler();
        context.errorHandler((throwable) ->
        {
            final DistinctErrorLog log = errorLog;
            if (null != log)
            {
                synchronized (log)
                {
                    log.record(throwable);
                }
            }
            if (null != userHandler)
            {
                userHandler.onError(throwable);
            }
            else
            {
                LOGGER.log(System.Logger.Level.ERROR, "Verbus driver error at " + Instant.now(), throwable);
            }
        });
        this.driver = new VerbusDriver(context, true);
        sweepStaleLogFiles(dir);
        if (context.useHugePages())
        {
            final Path hugetlbfs = null != context.hugetlbfsDir() ?
                Path.of(context.hugetlbfsDir()) : io.verbus.memory.MemoryMapper.findHugetlbfsMount();
            if (null != hugetlbfs)
            {
                sweepStaleLogFiles(hugetlbfs);
            }
        }
        CncFile cnc = null;
        io.aeron.driver.MediaDriver launchedAeronDriver = null;
        try
        {
            // Clients' aeron: channels are Aeron clients of this Aeron driver: launched now (or checked alive, when the
            // context names a running one) so that its dir can go into the cnc file for them to find.
            final String aeronDir;
            if (null != context.aeronDirectoryName())
            {
                aeronDir = context.aeronDirectoryName();
                AeronChannels.connect(aeronDir, ThreadingMode.SHARED, context.idleStrategy(),
                    context.driverTimeoutMs(), context.errorHandler()).close();
            }
            else
            {
                // One SHARED thread on backoff whatever the Verbus driver's own settings: aeron:ipc between clients
                // never waits for the Aeron driver (the clients share its log), and a busy-spin Verbus driver must not
                // bring a second spinning thread onto a small host. Busy-spin Aeron: run one and name it instead.
                launchedAeronDriver = AeronChannels.launchDriver(
                    dir, ThreadingMode.SHARED, IdleStrategies.BACKOFF, context.termLength(), context.errorHandler());
                aeronDir = launchedAeronDriver.aeronDirectoryName();
            }
            this.aeronDriver = launchedAeronDriver;
            cnc = CncFile.create(dir, context.clientLivenessTimeoutNs(), aeronDir);
            this.cncFile = cnc;
            this.errorLog = new DistinctErrorLog(cnc.errorLogBuffer(), SystemEpochClock.INSTANCE);
            this.clients = new DriverClients(driver, cnc, context);
            // The context's idle strategy: this agent also copies media images into bridge logs for clients.
            this.clientsRunner = new AgentRunner(
                IdleStrategies.newIdleStrategy(context.idleStrategy()), context.errorHandler(), null, clients);
            AgentRunner.startOnThread(clientsRunner);
            cnc.signalReady();
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(cnc);
            CloseHelper.quietClose(launchedAeronDriver);
            driver.close();
            throw ex;
        }
    }

    /**
     * Deletes the log files a driver killed before it could retire them left in the dir (named
     * {@code verbus-<pid>-...map} by the memory mapper): those of processes that no longer run.
     */
    private static void sweepStaleLogFiles(final Path dir)
    {
        try (java.util.stream.Stream<Path> files = Files.list(dir))
        {
            files.forEach((file) ->
            {
                final String name = file.getFileName().toString();
                final String[] parts = name.split("-", 3);
                if (name.endsWith(".map") && parts.length == 3 && "verbus".equals(parts[0]))
                {
                    try
                    {
                        final long pid = Long.parseLong(parts[1]);
                        if (!ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                        {
                            Files.deleteIfExists(file);
                        }
                    }
                    catch (final NumberFormatException | java.io.IOException ignore)
                    {
                        // Not one of ours, or gone already.
                    }
                }
            });
        }
        catch (final java.io.IOException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "cannot sweep stale log files in " + dir + ": " + ex);
        }
    }

    private static void refuseLiveDriver(final Path dir)
    {
        final Path cnc = dir.resolve(CncFile.FILE_NAME);
        if (Files.isRegularFile(cnc))
        {
            try
            {
                final CncFile existing = CncFile.open(dir);
                final long pid = existing.pid();
                existing.close();
                if (pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                {
                    throw new IllegalStateException(
                        "Verbus dir " + dir + " is in use by a running Verbus driver (pid " + pid + "): use " +
                        "another dir");
                }
            }
            catch (final IllegalStateException ex)
            {
                if (ex.getMessage().contains("in use"))
                {
                    throw ex;
                }
                // An incomplete or stale file from a dead driver: replaced below.
            }
        }
    }

    /**
     * Starts a standalone driver in the context's dir.
     *
     * @param context the dir, threading mode, idle strategy, term length, MTU, and
     *                {@link Verbus.Context#clientLivenessTimeoutNs()}; concluded by this call.
     * @return the running driver.
     * @throws IllegalStateException when a live driver or embedded Verbus already uses the dir.
     */
    public static MediaDriver launch(final Verbus.Context context)
    {
        io.verbus.log.OfferArguments.checkNotNull(context, "launch: context");
        context.conclude();
        return io.verbus.common.InterruptImmuneIo.withInterruptCleared(() -> new MediaDriver(context));
    }

    /** @return the concluded context. */
    public Verbus.Context context()
    {
        return context;
    }

    /** @return the dir clients attach to. */
    public String dir()
    {
        return context.dir();
    }

    /** @return the dir of the Aeron media driver that serves the clients' {@code aeron:} channels. */
    public String aeronDirectoryName()
    {
        return cncFile.aeronDirectoryName();
    }

    /** @return how many clients are attached (they sent a command or keepalive within the liveness timeout). */
    public int clientCount()
    {
        return clients.clientCount();
    }

    /** @return true once closed. */
    public boolean isClosed()
    {
        return isClosed;
    }

    /** Stops answering clients, closes everything (as an embedded Verbus closes) and deletes the cnc file. */
    public void close()
    {
        if (isClosed)
        {
            return;
        }
        isClosed = true;
        // Waits for its threads to finish with what it frees: not to be cut short by the closing thread's interrupt.
        io.verbus.common.InterruptImmuneIo.runWithInterruptCleared(() ->
        {
            CloseHelper.quietClose(clientsRunner);
            driver.close();
            CloseHelper.quietClose(aeronDriver);
            cncFile.close();
        });
    }

    /**
     * {@code ./verbus driver [--dir D] [--threading-mode M] [--idle-strategy S] [--client-timeout-ms N]
     * [--aeron-dir A]}: runs until SIGINT or SIGTERM.
     *
     * @param args as above.
     */
    public static void main(final String[] args)
    {
        final Verbus.Context context = new Verbus.Context();
        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            if ("--help".equals(arg) || "-h".equals(arg))
            {
                System.out.println("usage: ./verbus driver [--dir D] [--threading-mode SHARED|DEDICATED] " +
                    "[--idle-strategy backoff|sleeping|yielding|busy-spin] [--client-timeout-ms N] [--aeron-dir A]");
                System.out.println("  --aeron-dir A  serve clients' aeron: channels through the Aeron media driver " +
                    "already running in A (default: one this driver launches in D/aeron)");
                return;
            }
            if (i + 1 >= args.length)
            {
                throw new IllegalArgumentException(arg + " needs a value");
            }
            final String value = args[++i];
            switch (arg)
            {
                case "--dir" -> context.dir(value);
                case "--threading-mode" -> context.threadingMode(ThreadingMode.valueOf(value.toUpperCase()));
                case "--idle-strategy" -> context.idleStrategy(value);
                case "--aeron-dir" -> context.aeronDirectoryName(value);
                case "--client-timeout-ms" ->
                    context.clientLivenessTimeoutNs(TimeUnit.MILLISECONDS.toNanos(Long.parseLong(value)));
                default -> throw new IllegalArgumentException("unknown option " + arg + " (--help lists them)");
            }
        }
        if (ThreadingMode.INVOKER == context.threadingMode())
        {
            throw new IllegalArgumentException("a standalone driver runs its own threads: SHARED or DEDICATED");
        }
        // The barrier is closed last: Agrona's shutdown hook waits for it, so the driver closes before the JVM exits.
        try (ShutdownSignalBarrier barrier = new ShutdownSignalBarrier();
            MediaDriver driver = launch(context))
        {
            System.out.println("verbus driver: dir " + driver.dir() + ", pid " + ProcessHandle.current().pid() +
                ", counters " + Path.of(driver.dir()).resolve(CountersFile.FILE_NAME) + ", aeron: channels through " +
                "the Aeron driver at " + driver.aeronDirectoryName() + "; Ctrl-C to stop");
            System.out.flush();
            barrier.await();
            System.out.println("verbus driver: stopping");
        }
    }
}
