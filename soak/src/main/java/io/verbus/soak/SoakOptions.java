package io.verbus.soak;

import io.verbus.fabric.FabricContext;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./verbus soak}'s options. The defaults are sized for the 30-minute target on a shared 2-core
 * machine: the shm message count comes from lane 0's small messages sent flat out, the other lanes are capped so
 * they take little CPU; tcp is capped as a whole; kill cycles every 6-12 s per provider; 1000 fuzzed handshakes a
 * second in all (16 fuzzing connections at once per provider, well under the port's 64 pending handshakes).
 */
final class SoakOptions
{
    /**
     * A dead subscriber whose sockets stay open (a killed process the kernel has not torn down yet, a stopped one)
     * holds an fc=min publication until the channel timeout drops it: by design a writer may stand still that long.
     * A stall is a standstill beyond that by more than this: the drop's housekeeping, the writers' back-off and the
     * 250 ms STAT cadence on both ends of the measurement.
     */
    static final long STALL_GRACE_MS = 1_000;

    static final String USAGE = String.join("\n",
        "usage: ./verbus soak [--minutes N | --seconds N] [--providers shm,tcp] [options]",
        "Cross-process soak of the rdma media: per provider one publisher process (3 streams: exclusive offer,",
        "exclusive tryClaim, a concurrent publication with two writers, offer of fragmented messages and tryClaim),",
        "long-lived subscriber processes, one subscriber process killed -9 and restarted over and over, and hostile",
        "handshakes against the publisher's control port. Every message is sequence-numbered and CRC32-checked.",
        "  --minutes N | --seconds N     how long (default 30 minutes)",
        "  --providers shm,tcp           which fabric providers (default shm,tcp)",
        "  --subscribers N               long-lived subscriber processes per provider (default 2)",
        "  --commit auto|counter|imm     every channel's commit mode (default auto: counter on shm and tcp; imm is",
        "                                what auto picks on RDMA hardware)",
        "  --kill-interval-ms MIN-MAX    a restarted subscriber lives this long before its kill -9",
        "                                (default 6000-12000; 0 = no kill cycles)",
        "  --fuzz-rate N                 fuzzed handshakes per second over all providers (default 1000; 0 = none)",
        "  --fuzz-threads N              fuzzing connections at once per provider (default 16)",
        "  --rates-shm r0,r1,r2,r3       messages/s per writer on shm (lane0, lane1, lane2 x2; 0 = flat out;",
        "                                default 0,20000,4000,8000)",
        "  --rates-tcp r0,r1,r2,r3       the same on tcp (default 10000,3000,1000,2000)",
        "  --timeout-ms N                the channels' timeout (default 5000); a stall is no progress for longer",
        "                                than this plus " + SoakOptions.STALL_GRACE_MS + " ms",
        "  --shm-liveness-ms N           the shm fabric's liveness timeout in every process (default 1000)",
        "  --dir D                       working directory (default: a new one under java.io.tmpdir, removed after a",
        "                                passing run)",
        "  --inject kind@seq,...         test hook: the first provider's lane 0 skips (lost), repeats (duplicate),",
        "                                swaps (reorder) or corrupts (corrupt) that message; the soak must fail",
        "Exits 0 only when nothing was lost, duplicated, reordered or corrupt, nothing crashed or stalled, no fd or",
        "file leaked, every restarted subscriber rejoined and no forged handshake was accepted.");

    long durationNs = TimeUnit.MINUTES.toNanos(30);
    List<String> providers = List.of("shm", "tcp");
    String commit = "auto";
    int subscribers = 2;
    long killMinMs = 6_000;
    long killMaxMs = 12_000;
    double fuzzRate = 1000;
    int fuzzThreads = 16;
    long[] ratesShm = { 0, 20_000, 4_000, 8_000 };
    long[] ratesTcp = { 10_000, 3_000, 1_000, 2_000 };
    long timeoutMs = 5_000;
    long shmLivenessMs;
    Path dir;
    String inject = "";

    static SoakOptions parse(final String[] args)
    {
        final SoakOptions options = new SoakOptions();
        for (int i = 0; i < args.length; i++)
        {
            final String name = args[i];
            if ("-h".equals(name) || "--help".equals(name) || "help".equals(name))
            {
                throw new UsageException(null);
            }
            if (i + 1 >= args.length)
            {
                throw new UsageException(name + " needs a value");
            }
            final String value = args[++i];
            try
            {
                options.set(name, value);
            }
            catch (final NumberFormatException ex)
            {
                throw new UsageException(name + ": not a number: " + value);
            }
        }
        return options;
    }

    private void set(final String name, final String value)
    {
        switch (name)
        {
            case "--minutes" -> durationNs = TimeUnit.SECONDS.toNanos((long)(Double.parseDouble(value) * 60));
            case "--seconds" -> durationNs = TimeUnit.MILLISECONDS.toNanos((long)(Double.parseDouble(value) * 1000));
            case "--providers" -> providers = providers(value);
            case "--subscribers" -> subscribers = Math.max(1, Integer.parseInt(value));
            case "--commit" -> commit = commit(value);
            case "--kill-interval-ms" ->
            {
                final String[] range = value.split("-");
                killMinMs = Long.parseLong(range[0]);
                killMaxMs = range.length > 1 ? Long.parseLong(range[1]) : killMinMs;
                if (killMaxMs < killMinMs)
                {
                    throw new UsageException("--kill-interval-ms: MIN-MAX with MIN <= MAX, got " + value);
                }
            }
            case "--fuzz-rate" -> fuzzRate = Double.parseDouble(value);
            case "--fuzz-threads" -> fuzzThreads = Math.max(1, Integer.parseInt(value));
            case "--rates-shm" -> ratesShm = parseLongs(value, 4);
            case "--rates-tcp" -> ratesTcp = parseLongs(value, 4);
            case "--timeout-ms" -> timeoutMs = Long.parseLong(value);
            case "--shm-liveness-ms" -> shmLivenessMs = Long.parseLong(value);
            case "--dir" -> dir = Path.of(value);
            case "--inject" -> inject = value;
            default -> throw new UsageException("unknown option " + name);
        }
    }

    private static String commit(final String value)
    {
        final String commit = value.toLowerCase(Locale.ROOT);
        if (!"auto".equals(commit) && !"counter".equals(commit) && !"imm".equals(commit))
        {
            throw new UsageException("--commit: auto, counter or imm, got " + value);
        }
        return commit;
    }

    /** @return the channel keys every process of a provider uses: provider, commit mode unless auto, timeout. */
    String channelKeys(final String provider)
    {
        return "provider=" + provider + ("auto".equals(commit) ? "" : "|commit=" + commit) + "|timeout=" +
            timeoutMs + "ms";
    }

    private static List<String> providers(final String value)
    {
        final List<String> list = new ArrayList<>();
        for (final String provider : value.toLowerCase(Locale.ROOT).split(","))
        {
            if (!"shm".equals(provider) && !"tcp".equals(provider))
            {
                throw new UsageException("--providers: shm and/or tcp, got " + provider);
            }
            if (!list.contains(provider))
            {
                list.add(provider);
            }
        }
        return list;
    }

    long[] rates(final String provider)
    {
        return "shm".equals(provider) ? ratesShm : ratesTcp;
    }

    long shmLivenessNs()
    {
        return shmLivenessMs > 0 ? TimeUnit.MILLISECONDS.toNanos(shmLivenessMs) :
            FabricContext.SHM_LIVENESS_TIMEOUT_DEFAULT_NS;
    }

    boolean killCycles()
    {
        return killMaxMs > 0;
    }

    static long[] parseLongs(final String value, final int count)
    {
        final String[] parts = value.split(",");
        if (parts.length != count)
        {
            throw new UsageException("expected " + count + " comma-separated numbers, got " + value);
        }
        final long[] values = new long[count];
        for (int i = 0; i < count; i++)
        {
            values[i] = Long.parseLong(parts[i].trim());
        }
        return values;
    }

    /** A bad command line: the message (null for --help) and the usage. */
    static final class UsageException extends RuntimeException
    {
        private static final long serialVersionUID = 1L;

        UsageException(final String message)
        {
            super(message);
        }
    }

    /** @return no progress for longer than this is a stall: the channel timeout plus {@link #STALL_GRACE_MS}. */
    long stallThresholdMs()
    {
        return timeoutMs + STALL_GRACE_MS;
    }
}
