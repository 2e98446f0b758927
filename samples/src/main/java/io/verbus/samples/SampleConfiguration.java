package io.verbus.samples;

import io.verbus.Verbus;
import io.verbus.driver.IdleStrategies;
import org.agrona.concurrent.IdleStrategy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Stream;

/**
 * What every sample reads its settings from: system properties {@code verbus.sample.<key>}, which
 * {@code ./verbus sample NAME --key value} sets. Read once, when the first sample touches this class.
 * <p>
 * Each sample process embeds its own driver unless {@code driver-dir} names a standalone driver to attach to, and two
 * embedded drivers cannot share an {@code ipc} stream, so the samples that run as two processes default to
 * {@code rdma:} over the {@code shm} provider on 127.0.0.1 (through a standalone driver {@code ipc} works as well),
 * and the embedded ones, which keep both ends in one process, default to {@code ipc}.
 */
public final class SampleConfiguration
{
    /** Prefix of every sample property. */
    public static final String PROPERTY_PREFIX = "verbus.sample.";

    /** Channel of BasicPublisher/BasicSubscriber, StreamingPublisher/RateSubscriber and the market-data pair. */
    public static final String CHANNEL =
        property("channel", "rdma:endpoint=127.0.0.1:40123|provider=shm");

    /** Stream id on {@link #CHANNEL}. */
    public static final int STREAM_ID = Integer.parseInt(property("stream-id", "1001"));

    /** Channel Ping publishes on and Pong subscribes to. */
    public static final String PING_CHANNEL =
        property("ping-channel", "rdma:endpoint=127.0.0.1:40124|provider=shm");

    /** Channel Pong publishes on and Ping subscribes to. */
    public static final String PONG_CHANNEL =
        property("pong-channel", "rdma:endpoint=127.0.0.1:40125|provider=shm");

    /** Stream id of the pings. */
    public static final int PING_STREAM_ID = Integer.parseInt(property("ping-stream-id", "1002"));

    /** Stream id of the pongs. */
    public static final int PONG_STREAM_ID = Integer.parseInt(property("pong-stream-id", "1003"));

    /** Channel of the samples that keep both ends in one process. */
    public static final String EMBEDDED_CHANNEL = property("embedded-channel", "ipc");

    /** Messages to send. */
    public static final long NUMBER_OF_MESSAGES = Long.parseLong(property("messages", "10"));

    /** Length of each message in bytes (Ping, the throughput samples). */
    public static final int MESSAGE_LENGTH = Integer.parseInt(property("message-length", "32"));

    /** How long a publisher stays up after its last message, so subscribers can read it. */
    public static final long LINGER_TIMEOUT_MS = Long.parseLong(property("linger-ms", "1000"));

    /** Fragments read per poll. */
    public static final int FRAGMENT_COUNT_LIMIT = Integer.parseInt(property("fragment-limit", "10"));

    /** Warm-up messages per warm-up iteration of Ping. */
    public static final long WARMUP_NUMBER_OF_MESSAGES = Long.parseLong(property("warmup-messages", "10000"));

    /** Warm-up iterations of Ping. */
    public static final int WARMUP_NUMBER_OF_ITERATIONS = Integer.parseInt(property("warmup-iterations", "5"));

    /** True to publish with an exclusive publication. */
    public static final boolean EXCLUSIVE_PUBLICATIONS = Boolean.parseBoolean(property("exclusive", "true"));

    /**
     * Idle strategy of the samples' own loops: {@code backoff} by default so that a 2-core machine can run both
     * ends and their drivers; {@code busy-spin} for latency on a machine with cores to spare.
     */
    public static final String IDLE_STRATEGY = property("idle-strategy", IdleStrategies.BACKOFF);

    /** Instruments the market-data samples quote. */
    public static final int INSTRUMENTS = Integer.parseInt(property("instruments", "16"));

    /** Quotes per second the market-data publisher sends (0: as fast as it can). */
    public static final long QUOTES_PER_SECOND = Long.parseLong(property("rate", "100000"));

    /** Subscribers MarketDataFanOut runs in its process. */
    public static final int SUBSCRIBERS = Integer.parseInt(property("subscribers", "3"));

    /** The Verbus dir, or empty for one per process next to the default dir (embedded driver only). */
    public static final String DIR = property("dir", "");

    /**
     * The dir of a standalone driver ({@code ./verbus driver --dir D}) for the samples that run as separate processes
     * to attach to, or empty (the default) for each to embed its own driver.
     */
    public static final String DRIVER_DIR = property("driver-dir", "");

    /**
     * True when the samples embed their driver ({@code Verbus.launch}), false when they attach to the standalone
     * driver in {@link #DRIVER_DIR} ({@code Verbus.connect}): Aeron's {@code EMBEDDED_MEDIA_DRIVER}, the other way
     * round by default, because a Verbus process embeds its driver unless told otherwise.
     */
    public static final boolean EMBEDDED_MEDIA_DRIVER = DRIVER_DIR.isEmpty();

    /** The property keys above, which {@code ./verbus sample} accepts as {@code --key value}. */
    public static final List<String> KEYS = List.of("channel", "stream-id", "ping-channel", "pong-channel",
        "ping-stream-id", "pong-stream-id", "embedded-channel", "messages", "message-length", "linger-ms",
        "fragment-limit", "warmup-messages", "warmup-iterations", "exclusive", "idle-strategy", "instruments", "rate",
        "subscribers", "dir", "driver-dir");

    private SampleConfiguration()
    {
    }

    /**
     * The context of a sample's Verbus: the standalone driver's dir when {@link #DRIVER_DIR} is set, or else its own
     * dir (every process that embeds a driver needs one), named after the default dir so that {@code ./verbus stat}
     * finds it, and removed when the process exits.
     *
     * @return a new context.
     */
    public static Verbus.Context context()
    {
        final Verbus.Context context = new Verbus.Context();
        if (!EMBEDDED_MEDIA_DRIVER)
        {
            context.dir(DRIVER_DIR);
        }
        else if (DIR.isEmpty())
        {
            final Path dir = Path.of(Verbus.Context.defaultDir() + "-sample-" + ProcessHandle.current().pid());
            context.dir(dir.toString());
            Runtime.getRuntime().addShutdownHook(new Thread(() -> deleteIfUnused(dir), "sample-dir-cleanup"));
        }
        else
        {
            context.dir(DIR);
        }
        return context;
    }

    /** @return a new instance of {@link #IDLE_STRATEGY}. */
    public static IdleStrategy newIdleStrategy()
    {
        return IdleStrategies.newIdleStrategy(IDLE_STRATEGY);
    }

    private static String property(final String key, final String defaultValue)
    {
        return System.getProperty(PROPERTY_PREFIX + key, defaultValue);
    }

    private static void deleteIfUnused(final Path dir)
    {
        // A Verbus that closed removed its counters file. On Ctrl-C the sample closes its Verbus in another shutdown
        // hook (ShutdownSignal), so give it a moment; one that is still open after that keeps its dir.
        final long deadlineNs = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(3);
        while (Files.exists(dir.resolve("counters.dat")))
        {
            if (System.nanoTime() > deadlineNs)
            {
                return;
            }
            try
            {
                Thread.sleep(10);
            }
            catch (final InterruptedException ex)
            {
                return;
            }
        }
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach((path) -> path.toFile().delete());
        }
        catch (final IOException ignore)
        {
            // Best effort: an empty dir left in /dev/shm costs nothing.
        }
    }
}
