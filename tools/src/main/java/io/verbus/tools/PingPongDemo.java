package io.verbus.tools;

import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.HdrHistogram.Histogram;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

/**
 * Ping-pong over the bus: a pinger sends a timestamped message on one stream, a ponger echoes it on another, and
 * the pinger records round-trip times. At most two spinning threads (pinger and ponger, one per core on a 2-core
 * machine, each backing off to yield and park when its wait is long); the driver's agents share one thread with a
 * backoff idle strategy. Every run is bounded by a message count and a time limit, then a percentile summary is
 * printed per channel.
 */
public final class PingPongDemo
{
    private static final int PING_STREAM_ID = 1001;
    private static final int PONG_STREAM_ID = 1002;
    private static final int FRAGMENT_LIMIT = 16;
    private static final int SPINS_BEFORE_YIELD = 1_000;
    private static final int YIELDS_BEFORE_PARK = 1_000;

    private static final String USAGE = """
        usage: verbus demo [--channel C]... [--messages N] [--warmup N] [--seconds S] [--length L] [--dir D]
          --channel C    channel to ping-pong over; repeat for several (default: ipc and aeron:ipc)
          --messages N   measured round trips per channel (default 200000)
          --warmup N     round trips before measuring (default 10000)
          --seconds S    time limit per channel, warm-up included (default 7)
          --length L     message length in bytes, 8 to 1024 (default 32)
          --dir D        Verbus dir (default: a new temporary dir under /dev/shm, removed at the end)""";

    private PingPongDemo()
    {
    }

    /**
     * @param args see {@code --help}.
     */
    public static void main(final String[] args)
    {
        final List<String> channels = new ArrayList<>();
        long messages = 200_000;
        long warmup = 10_000;
        long seconds = 7;
        int length = 32;
        String dir = null;
        try
        {
            for (int i = 0; i < args.length; i++)
            {
                switch (args[i])
                {
                    case "--channel" -> channels.add(value(args, ++i, "--channel"));
                    case "--messages" -> messages = positive(value(args, ++i, "--messages"), "--messages");
                    case "--warmup" -> warmup = positive(value(args, ++i, "--warmup"), "--warmup");
                    case "--seconds" -> seconds = positive(value(args, ++i, "--seconds"), "--seconds");
                    case "--length" -> length = (int)positive(value(args, ++i, "--length"), "--length");
                    case "--dir" -> dir = value(args, ++i, "--dir");
                    case "--help", "-h" ->
                    {
                        System.out.println(USAGE);
                        return;
                    }
                    default -> throw new IllegalArgumentException("unknown argument '" + args[i] + "'");
                }
            }
            if (length < 8 || length > 1024)
            {
                throw new IllegalArgumentException("--length must be from 8 to 1024, got " + length);
            }
        }
        catch (final IllegalArgumentException ex)
        {
            System.err.println("verbus demo: " + ex.getMessage());
            System.err.println(USAGE);
            System.exit(2);
            return;
        }
        if (channels.isEmpty())
        {
            channels.add("ipc");
            channels.add("aeron:ipc");
        }

        final boolean tempDir = null == dir;
        final Path verbusDir = tempDir ? createTempDir() : Path.of(dir);
        System.out.println("Verbus ping-pong: " + messages + " round trips of " + length + " bytes per channel, " +
            warmup + " warm-up, at most " + seconds + " s each; " +
            "pinger+ponger spin then back off, driver SHARED/backoff");
        try (Verbus verbus = Verbus.launch(new Verbus.Context()
            .dir(verbusDir.toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("backoff")))
        {
            for (final String channel : channels)
            {
                final long startNs = System.nanoTime();
                final long[] completed = new long[1];
                final Histogram histogram = run(verbus, channel, messages, warmup, seconds, length, completed);
                print(channel, length, histogram, completed[0], System.nanoTime() - startNs);
            }
        }
        finally
        {
            if (tempDir)
            {
                deleteRecursively(verbusDir);
            }
        }
    }

    private static Histogram run(
        final Verbus verbus, final String channel, final long messages, final long warmup, final long seconds,
        final int length, final long[] completed)
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        final Subscription pingSubscription = verbus.addSubscription(channel, PING_STREAM_ID);
        final Subscription pongSubscription = verbus.addSubscription(channel, PONG_STREAM_ID);
        final ExclusivePublication pingPublication = verbus.addExclusivePublication(channel, PING_STREAM_ID);
        final ExclusivePublication pongPublication = verbus.addExclusivePublication(channel, PONG_STREAM_ID);
        final AtomicBoolean running = new AtomicBoolean(true);
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(seconds);

        final long[] receivedCount = new long[1];
        final Thread ponger = new Thread(() -> pong(pingSubscription, pongPublication, running), "ponger");
        ponger.setDaemon(true);
        ponger.start();
        try
        {
            awaitConnected(pingPublication, deadlineNs);
            awaitConnected(pongPublication, deadlineNs);

            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(length));
            final IdleStrategy idle = newWaitStrategy();
            final long[] received = receivedCount;
            final FragmentHandler onPong = (b, o, l, h) ->
            {
                final long rtt = System.nanoTime() - b.getLong(o);
                received[0]++;
                if (received[0] > warmup)
                {
                    histogram.recordValue(Math.min(rtt, histogram.getHighestTrackableValue()));
                }
            };

            final long total = warmup + messages;
            for (long i = 0; i < total && System.nanoTime() < deadlineNs; i++)
            {
                buffer.putLong(0, System.nanoTime());
                idle.reset();
                while (pingPublication.offer(buffer, 0, length) < 0)
                {
                    if (System.nanoTime() > deadlineNs)
                    {
                        break;
                    }
                    idle.idle();
                }
                final long expected = i + 1;
                idle.reset();
                while (received[0] < expected && System.nanoTime() < deadlineNs)
                {
                    idle.idle(pongSubscription.poll(onPong, FRAGMENT_LIMIT));
                }
            }
        }
        finally
        {
            completed[0] = receivedCount[0];
            running.set(false);
            try
            {
                ponger.join(TimeUnit.SECONDS.toMillis(5));
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
            pingPublication.close();
            pongPublication.close();
            pingSubscription.close();
            pongSubscription.close();
        }
        return histogram;
    }

    private static void pong(
        final Subscription pingSubscription, final ExclusivePublication pongPublication, final AtomicBoolean running)
    {
        final BufferClaim claim = new BufferClaim();
        final IdleStrategy claimIdle = newWaitStrategy();
        final FragmentHandler echo = (buffer, offset, length, header) ->
        {
            claimIdle.reset();
            while (pongPublication.tryClaim(length, claim) < 0)
            {
                if (!running.get())
                {
                    return;
                }
                claimIdle.idle();
            }
            claim.putBytes(buffer, offset, length).commit();
        };
        final IdleStrategy pollIdle = newWaitStrategy();
        while (running.get())
        {
            pollIdle.idle(pingSubscription.poll(echo, FRAGMENT_LIMIT));
        }
    }

    /**
     * Spins first (a reply on a free core arrives within microseconds), then yields and parks briefly, so that on
     * a loaded machine the two demo threads do not starve the driver thread.
     */
    private static IdleStrategy newWaitStrategy()
    {
        return new BackoffIdleStrategy(
            SPINS_BEFORE_YIELD,
            YIELDS_BEFORE_PARK,
            TimeUnit.MICROSECONDS.toNanos(1),
            TimeUnit.MICROSECONDS.toNanos(50));
    }

    private static void awaitConnected(final Publication publication, final long deadlineNs)
    {
        while (!publication.isConnected())
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("publication on " + publication.channel() + " never connected");
            }
            Thread.onSpinWait();
            Thread.yield();
        }
    }

    private static void print(
        final String channel, final int length, final Histogram histogram, final long completed, final long elapsedNs)
    {
        final long count = histogram.getTotalCount();
        if (0 == count)
        {
            System.out.printf("channel=%-12s length=%d only %d round trips in %.1f s, fewer than the warm-up: the " +
                "machine is too busy to measure (load average %s)%n",
                channel, length, completed, elapsedNs / 1e9, loadAverage());
            return;
        }
        System.out.printf(
            "channel=%-12s length=%d round-trips=%d  RTT us: p50=%.2f p90=%.2f p99=%.2f p99.9=%.2f max=%.2f" +
            "  (load average %s)%n",
            channel, length, count,
            histogram.getValueAtPercentile(50) / 1000.0,
            histogram.getValueAtPercentile(90) / 1000.0,
            histogram.getValueAtPercentile(99) / 1000.0,
            histogram.getValueAtPercentile(99.9) / 1000.0,
            histogram.getMaxValue() / 1000.0,
            loadAverage());
    }

    private static String loadAverage()
    {
        try
        {
            final String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split(" ");
            return fields[0];
        }
        catch (final IOException | RuntimeException ex)
        {
            return "unknown";
        }
    }

    private static String value(final String[] args, final int index, final String flag)
    {
        if (index >= args.length)
        {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return args[index];
    }

    private static long positive(final String text, final String flag)
    {
        final long value;
        try
        {
            value = Long.parseLong(text);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(flag + " '" + text + "' is not a number");
        }
        if (value <= 0)
        {
            throw new IllegalArgumentException(flag + " must be positive, got " + value);
        }
        return value;
    }

    private static Path createTempDir()
    {
        try
        {
            final Path shm = Path.of("/dev/shm");
            return Files.isDirectory(shm) ?
                Files.createTempDirectory(shm, "verbus-demo-") : Files.createTempDirectory("verbus-demo-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static void deleteRecursively(final Path dir)
    {
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
        }
        catch (final IOException ignore)
        {
            // Best effort: a temporary dir under /dev/shm.
        }
    }
}
