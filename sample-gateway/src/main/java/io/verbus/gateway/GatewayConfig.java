package io.verbus.gateway;

import io.verbus.Verbus;
import io.verbus.driver.Affinity;
import io.verbus.driver.IdleStrategies;
import io.verbus.gateway.book.PriceLevelBook;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

/**
 * Everything the gateway demo can be told on its command line, validated as it is parsed: a bad flag fails with an
 * {@link IllegalArgumentException} whose message names the flag, the value and what would be accepted.
 */
public final class GatewayConfig
{
    /** The parts of the gateway; a process runs one or more of them. */
    public enum Part
    {
        /** Market-data feed handler: publishes incremental refreshes. */
        FEED,
        /** Strategy: keeps the books, sends orders, measures tick-to-trade. */
        STRATEGY,
        /** Order gateway: answers every order with an execution report. */
        ORDERS
    }

    /** How the parts' channels are built when not given one by one. */
    public enum Transport
    {
        /** Verbus's native in-process log: {@code ipc}. */
        IPC,
        /** A real embedded Aeron driver's IPC: {@code aeron:ipc}. */
        AERON_IPC,
        /** The rdma media between processes or hosts: {@code rdma:endpoint=...|provider=...}. */
        RDMA
    }

    /** How the parts are spread over processes when no --role is given. */
    public enum Launch
    {
        /** All parts in this process (default transport ipc). */
        SINGLE,
        /** The strategy here, the feed and order gateway in a child process, over rdma (default provider shm). */
        PROCESSES
    }

    /** Stream id of market data (feed -> strategy). */
    public static final int MARKET_DATA_STREAM_ID = 2001;
    /** Stream id of orders (strategy -> order gateway). */
    public static final int ORDER_STREAM_ID = 2002;
    /** Stream id of execution reports (order gateway -> strategy). */
    public static final int REPORT_STREAM_ID = 2003;

    /**
     * Default control ports of the rdma channels, one per stream. Below Linux's default ephemeral range
     * (32768-60999): a port in it can be held by any recently closed outgoing connection on the host (TIME-WAIT,
     * 60 s) and then refuses the publisher's listen, which made the demo fail on 40502 for about a minute right
     * after a test run.
     */
    public static final int MARKET_DATA_PORT_DEFAULT = 20501;
    /** See {@link #MARKET_DATA_PORT_DEFAULT}. */
    public static final int ORDER_PORT_DEFAULT = 20502;
    /** See {@link #MARKET_DATA_PORT_DEFAULT}. */
    public static final int REPORT_PORT_DEFAULT = 20503;

    static final long DURATION_NS_DEFAULT = TimeUnit.SECONDS.toNanos(40);
    /**
     * The JIT still compiles 10-30 methods a second 5-10 s into a run (PrintCompilation, strategy process) and a few
     * a second 15-35 s in (LogCompilation: 45 in 10-15 s, 29 in 20-25 s), and on a 2-CPU host each compile takes a
     * spinning part's CPU for up to a few milliseconds: the tail of the histogram. Measured on the quiet 2-CPU host
     * (2026-12-01): p99 117-255 us after a 10 s warm-up, 50 us after 20 s or 30 s.
     */
    static final long WARMUP_NS_DEFAULT = TimeUnit.SECONDS.toNanos(20);
    static final long PROGRESS_INTERVAL_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);
    static final int RATE_DEFAULT = 10_000;
    static final int RATE_MAX = 5_000_000;
    static final int INSTRUMENTS_DEFAULT = 8;
    static final int INSTRUMENTS_MAX = 4096;
    static final int DEPTH_DEFAULT = 10;
    static final int BURST_DEFAULT = 16;
    static final int BURST_MAX = 1024;
    static final int IMBALANCE_PERCENT_DEFAULT = 80;
    static final int MAX_ORDER_QTY_DEFAULT = 50;
    static final int POSITION_LIMIT_DEFAULT = 400;
    static final int FILL_PERCENT_DEFAULT = 70;
    static final String OUTPUT_DIR_DEFAULT = "build/demo";

    private final EnumSet<Part> parts = EnumSet.allOf(Part.class);
    private long durationNs = DURATION_NS_DEFAULT;
    private long warmupNs = WARMUP_NS_DEFAULT;
    private long progressIntervalNs = PROGRESS_INTERVAL_NS_DEFAULT;
    private int ratePerSecond = RATE_DEFAULT;
    private int instruments = INSTRUMENTS_DEFAULT;
    private int depth = DEPTH_DEFAULT;
    private int maxBurst = BURST_DEFAULT;
    private int imbalancePercent = IMBALANCE_PERCENT_DEFAULT;
    private int maxOrderQty = MAX_ORDER_QTY_DEFAULT;
    private int positionLimit = POSITION_LIMIT_DEFAULT;
    private int fillPercent = FILL_PERCENT_DEFAULT;
    private long seed = 20261129L;
    /** Null until --idle or --busy-spin: then {@link #idleStrategy()} chooses for the host. */
    private String idleStrategy;
    private String driverIdleStrategy;
    /** CPUs the host needs before the demo spins by default: one per process (strategy; feed + orders). */
    static final int AUTO_SPIN_MIN_CPUS = 2;
    /** Spin by default where the host has the CPUs: see {@link #idleStrategy()}. */
    static final boolean AUTO_SPIN_ENABLED = true;
    private boolean dedicatedThreads;
    private int partsCpu = Affinity.NO_CPU;
    private int feedCpu = Affinity.NO_CPU;
    private int strategyCpu = Affinity.NO_CPU;
    private int ordersCpu = Affinity.NO_CPU;
    private int driverCpu = Affinity.NO_CPU;
    private Transport transport;
    private Launch launch;
    private boolean roleGiven;
    private String[] args = new String[0];
    private String provider = "shm";
    private String marketDataEndpoint = "127.0.0.1:" + MARKET_DATA_PORT_DEFAULT;
    private String orderEndpoint = "127.0.0.1:" + ORDER_PORT_DEFAULT;
    private String reportEndpoint = "127.0.0.1:" + REPORT_PORT_DEFAULT;
    private String marketDataChannel;
    private String orderChannel;
    private String reportChannel;
    private String secretFile;
    private Path outputDir = Path.of(OUTPUT_DIR_DEFAULT);
    private String verbusDir;
    private boolean help;

    /**
     * Parse command line flags ({@code --flag value} or {@code --flag=value}).
     *
     * @param args from main.
     * @return the validated configuration.
     * @throws IllegalArgumentException naming the flag at fault.
     */
    public static GatewayConfig parse(final String... args)
    {
        final GatewayConfig config = new GatewayConfig();
        config.args = args.clone();
        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            if (!arg.startsWith("--"))
            {
                throw new IllegalArgumentException("unexpected argument '" + arg + "': flags start with --");
            }
            final int equals = arg.indexOf('=');
            final String flag = equals > 0 ? arg.substring(0, equals) : arg;
            if (flag.equals("--help") || flag.equals("--busy-spin"))
            {
                config.apply(flag, null);
                continue;
            }
            final String value;
            if (equals > 0)
            {
                value = arg.substring(equals + 1);
            }
            else if (i + 1 < args.length)
            {
                value = args[++i];
            }
            else
            {
                throw new IllegalArgumentException(flag + " needs a value");
            }
            config.apply(flag, value);
        }
        config.validate();
        return config;
    }

    private void apply(final String flag, final String value)
    {
        switch (flag)
        {
            case "--help" -> help = true;
            case "--busy-spin" -> idleStrategy = IdleStrategies.BUSY_SPIN;
            case "--duration" -> durationNs = parseDuration(flag, value, TimeUnit.MILLISECONDS.toNanos(100));
            case "--warmup" -> warmupNs = parseDuration(flag, value, 0);
            case "--progress" -> progressIntervalNs = parseDuration(flag, value, 0);
            case "--rate" -> ratePerSecond = (int)parseCount(flag, value, 1, RATE_MAX);
            case "--instruments" -> instruments = (int)parseCount(flag, value, 1, INSTRUMENTS_MAX);
            case "--depth" -> depth = (int)parseCount(flag, value, 2, PriceLevelBook.MAX_DEPTH);
            case "--burst" -> maxBurst = (int)parseCount(flag, value, 1, BURST_MAX);
            case "--imbalance" -> imbalancePercent = (int)parseCount(flag, value, 51, 100);
            case "--max-order-qty" -> maxOrderQty = (int)parseCount(flag, value, 1, 1_000_000);
            case "--position-limit" -> positionLimit = (int)parseCount(flag, value, 1, 1_000_000_000);
            case "--fill-percent" -> fillPercent = (int)parseCount(flag, value, 0, 100);
            case "--seed" -> seed = parseLong(flag, value);
            case "--idle" -> idleStrategy = parseIdle(flag, value);
            case "--driver-idle" -> driverIdleStrategy = parseIdle(flag, value);
            case "--threads" -> dedicatedThreads = parseThreads(flag, value);
            case "--parts-cpu" -> partsCpu = parseCpu(flag, value);
            case "--feed-cpu" -> feedCpu = parseCpu(flag, value);
            case "--strategy-cpu" -> strategyCpu = parseCpu(flag, value);
            case "--orders-cpu" -> ordersCpu = parseCpu(flag, value);
            case "--driver-cpu" -> driverCpu = parseCpu(flag, value);
            case "--role" -> parseRole(flag, value);
            case "--launch" -> launch = parseLaunch(flag, value);
            case "--transport" -> transport = parseTransport(flag, value);
            case "--provider" -> provider = parseProvider(flag, value);
            case "--md-endpoint" -> marketDataEndpoint = parseEndpoint(flag, value);
            case "--order-endpoint" -> orderEndpoint = parseEndpoint(flag, value);
            case "--report-endpoint" -> reportEndpoint = parseEndpoint(flag, value);
            case "--md-channel" -> marketDataChannel = parseChannel(flag, value);
            case "--order-channel" -> orderChannel = parseChannel(flag, value);
            case "--report-channel" -> reportChannel = parseChannel(flag, value);
            case "--secret-file" -> secretFile = requireNonBlank(flag, value);
            case "--out" -> outputDir = Path.of(requireNonBlank(flag, value));
            case "--dir" -> verbusDir = requireNonBlank(flag, value);
            default -> throw new IllegalArgumentException("unknown flag '" + flag + "' (see --help)");
        }
    }

    private void validate()
    {
        if (roleGiven && launch == Launch.PROCESSES)
        {
            throw new IllegalArgumentException("--role runs the named parts in this process (start the others " +
                "yourself); --launch processes starts them for you: give one or the other");
        }
        if (launchesProcesses() && null != transport && transport != Transport.RDMA)
        {
            throw new IllegalArgumentException("--launch processes puts the parts in separate processes, which " +
                "needs --transport rdma; for --transport " +
                transport.name().toLowerCase(Locale.ROOT).replace('_', '-') + " use --launch single");
        }
        if (warmupNs >= durationNs)
        {
            throw new IllegalArgumentException("--warmup (" + formatSeconds(warmupNs) +
                ") must be shorter than --duration (" + formatSeconds(durationNs) + ")");
        }
        if (dedicatedThreads && partsCpu != Affinity.NO_CPU)
        {
            throw new IllegalArgumentException(
                "--parts-cpu pins the one shared parts thread: with --threads dedicated use --feed-cpu, " +
                "--strategy-cpu and --orders-cpu");
        }
        if (!dedicatedThreads && (feedCpu != Affinity.NO_CPU || strategyCpu != Affinity.NO_CPU ||
            ordersCpu != Affinity.NO_CPU))
        {
            throw new IllegalArgumentException(
                "--feed-cpu, --strategy-cpu and --orders-cpu need --threads dedicated (with shared threads use " +
                "--parts-cpu)");
        }
        final int cores = Runtime.getRuntime().availableProcessors();
        final int spinning = spinningThreads();
        if (spinning > cores)
        {
            throw new IllegalArgumentException("--idle " + idleStrategy() + " with --threads " +
                (dedicatedThreads ? "dedicated" : "shared") + " would busy-spin " + spinning +
                " threads on " + cores + " cores, which starves them all: use --threads shared, " +
                "--driver-idle backoff or --idle backoff");
        }
        if (transport() != Transport.RDMA && parts.size() != Part.values().length &&
            (null == marketDataChannel || null == orderChannel || null == reportChannel))
        {
            throw new IllegalArgumentException("--role " + roleName() + " runs only some parts in this process, " +
                "so the others are in another process: that needs --transport rdma (or explicit --md-channel, " +
                "--order-channel and --report-channel that reach across processes)");
        }
    }

    /** @return how many threads would busy-spin: parts threads and driver threads with a spinning idle strategy. */
    int spinningThreads()
    {
        // With --launch processes the child runs the feed and order gateway on its own thread(s) and driver.
        final int processes = launchesProcesses() ? 2 : 1;
        final int partThreads = dedicatedThreads ? parts.size() : processes;
        final int partsSpinning = isSpinning(idleStrategy()) ? partThreads : 0;
        final int driverSpinning = !driverInvoked() && isSpinning(driverIdleStrategy()) ? processes : 0;
        return partsSpinning + driverSpinning;
    }

    private static boolean isSpinning(final String idle)
    {
        return IdleStrategies.BUSY_SPIN.equals(idle) || IdleStrategies.NOOP.equals(idle);
    }

    private static long parseDuration(final String flag, final String value, final long minNs)
    {
        final String text = value.trim().toLowerCase(Locale.ROOT);
        final long multiplierNs;
        final String digits;
        if (text.endsWith("ms"))
        {
            multiplierNs = TimeUnit.MILLISECONDS.toNanos(1);
            digits = text.substring(0, text.length() - 2);
        }
        else if (text.endsWith("s"))
        {
            multiplierNs = TimeUnit.SECONDS.toNanos(1);
            digits = text.substring(0, text.length() - 1);
        }
        else if (text.endsWith("m"))
        {
            multiplierNs = TimeUnit.MINUTES.toNanos(1);
            digits = text.substring(0, text.length() - 1);
        }
        else
        {
            multiplierNs = TimeUnit.SECONDS.toNanos(1);
            digits = text;
        }
        final long amount;
        try
        {
            amount = Long.parseLong(digits);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(flag + ": '" + value +
                "' is not a duration (seconds, or with a unit: 500ms, 20s, 2m)");
        }
        if (amount < 0 || amount > TimeUnit.DAYS.toNanos(1) / multiplierNs)
        {
            throw new IllegalArgumentException(flag + ": '" + value + "' is out of range (0 to 1 day)");
        }
        final long ns = amount * multiplierNs;
        if (ns < minNs)
        {
            throw new IllegalArgumentException(flag + ": '" + value + "' is shorter than the minimum of " +
                TimeUnit.NANOSECONDS.toMillis(minNs) + "ms");
        }
        return ns;
    }

    private static long parseCount(final String flag, final String value, final long min, final long max)
    {
        final String text = value.trim().toLowerCase(Locale.ROOT);
        long multiplier = 1;
        String digits = text;
        if (text.endsWith("k"))
        {
            multiplier = 1_000;
            digits = text.substring(0, text.length() - 1);
        }
        else if (text.endsWith("m"))
        {
            multiplier = 1_000_000;
            digits = text.substring(0, text.length() - 1);
        }
        final long number;
        try
        {
            number = Math.multiplyExact(Long.parseLong(digits), multiplier);
        }
        catch (final NumberFormatException | ArithmeticException ex)
        {
            throw new IllegalArgumentException(flag + ": '" + value + "' is not a whole number (e.g. 20000 or 20k)");
        }
        if (number < min || number > max)
        {
            throw new IllegalArgumentException(flag + ": " + number + " is out of range " + min + " to " + max);
        }
        return number;
    }

    private static long parseLong(final String flag, final String value)
    {
        try
        {
            return Long.parseLong(value.trim());
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(flag + ": '" + value + "' is not a whole number");
        }
    }

    private static String parseIdle(final String flag, final String value)
    {
        if (!IdleStrategies.NAMES.contains(value))
        {
            throw new IllegalArgumentException(flag + ": unknown idle strategy '" + value + "', known ones are " +
                String.join(", ", IdleStrategies.NAMES));
        }
        return value;
    }

    private static boolean parseThreads(final String flag, final String value)
    {
        return switch (value)
        {
            case "shared" -> false;
            case "dedicated" -> true;
            default -> throw new IllegalArgumentException(flag + ": '" + value + "' must be shared or dedicated");
        };
    }

    private static int parseCpu(final String flag, final String value)
    {
        final int cpu = (int)parseCount(flag, value, -1, 4095);
        try
        {
            Affinity.checkCpu(cpu, flag);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException(flag + ": " + ex.getMessage());
        }
        return cpu;
    }

    private static Launch parseLaunch(final String flag, final String value)
    {
        return switch (value)
        {
            case "single" -> Launch.SINGLE;
            case "processes" -> Launch.PROCESSES;
            default -> throw new IllegalArgumentException(flag + ": '" + value + "' must be single or processes");
        };
    }

    private void parseRole(final String flag, final String value)
    {
        roleGiven = true;
        parts.clear();
        if (value.equals("all"))
        {
            parts.addAll(EnumSet.allOf(Part.class));
            return;
        }
        for (final String name : value.split(","))
        {
            switch (name.trim())
            {
                case "feed" -> parts.add(Part.FEED);
                case "strategy" -> parts.add(Part.STRATEGY);
                case "orders" -> parts.add(Part.ORDERS);
                default -> throw new IllegalArgumentException(flag + ": unknown part '" + name +
                    "': use all, or a comma list of feed, strategy, orders");
            }
        }
    }

    private static Transport parseTransport(final String flag, final String value)
    {
        return switch (value)
        {
            case "ipc" -> Transport.IPC;
            case "aeron-ipc", "aeron:ipc" -> Transport.AERON_IPC;
            case "rdma" -> Transport.RDMA;
            default -> throw new IllegalArgumentException(flag + ": '" + value + "' must be ipc, aeron-ipc or rdma");
        };
    }

    private static String parseProvider(final String flag, final String value)
    {
        return switch (value)
        {
            case "shm", "tcp", "verbs", "auto" -> value;
            default -> throw new IllegalArgumentException(flag + ": '" + value +
                "' must be shm (one host), tcp or verbs (across hosts), or auto");
        };
    }

    private static String parseEndpoint(final String flag, final String value)
    {
        final int colon = value.lastIndexOf(':');
        if (colon <= 0 || colon == value.length() - 1)
        {
            throw new IllegalArgumentException(flag + ": '" + value + "' must be host:port");
        }
        parseCount(flag + " port", value.substring(colon + 1), 1, 65535);
        return value;
    }

    private static String parseChannel(final String flag, final String value)
    {
        final String channel = requireNonBlank(flag, value);
        if (!channel.equals("ipc") && channel.indexOf(':') <= 0)
        {
            throw new IllegalArgumentException(flag + ": '" + value +
                "' is not a channel (e.g. ipc, aeron:ipc, rdma:endpoint=host:port|provider=shm)");
        }
        return channel;
    }

    private static String requireNonBlank(final String flag, final String value)
    {
        if (null == value || value.isBlank())
        {
            throw new IllegalArgumentException(flag + " needs a non-empty value");
        }
        return value;
    }

    static String formatSeconds(final long ns)
    {
        return String.format(Locale.ROOT, "%.1fs", ns / 1e9);
    }

    /**
     * @param stream         one of the stream ids.
     * @param forPublication true for the publishing side (an rdma publication listens on its endpoint's port).
     * @return the channel to add for that stream and side.
     */
    public String channel(final int stream, final boolean forPublication)
    {
        final String explicit = switch (stream)
        {
            case MARKET_DATA_STREAM_ID -> marketDataChannel;
            case ORDER_STREAM_ID -> orderChannel;
            case REPORT_STREAM_ID -> reportChannel;
            default -> throw new IllegalArgumentException("unknown stream " + stream);
        };
        if (null != explicit)
        {
            return explicit;
        }
        return switch (transport())
        {
            case IPC -> "ipc";
            case AERON_IPC -> "aeron:ipc";
            case RDMA ->
            {
                final String endpoint = switch (stream)
                {
                    case MARKET_DATA_STREAM_ID -> marketDataEndpoint;
                    case ORDER_STREAM_ID -> orderEndpoint;
                    default -> reportEndpoint;
                };
                final String address = forPublication ?
                    "0.0.0.0" + endpoint.substring(endpoint.lastIndexOf(':')) : endpoint;
                yield "rdma:endpoint=" + address + "|provider=" + provider +
                    (null == secretFile ? "" : "|secret-file=" + secretFile);
            }
        };
    }

    /** @return a one-line description of the three streams' channels (secret file left out), for reports. */
    public String describeChannels()
    {
        return "market data " + withoutSecret(channel(MARKET_DATA_STREAM_ID, false)) +
            ", orders " + withoutSecret(channel(ORDER_STREAM_ID, false)) +
            ", reports " + withoutSecret(channel(REPORT_STREAM_ID, false));
    }

    private static String withoutSecret(final String channel)
    {
        return channel.replaceAll("\\|secret-file=[^|]*", "");
    }

    /** @return the role as given on the command line. */
    public String roleName()
    {
        if (parts.size() == Part.values().length)
        {
            return "all";
        }
        final List<String> names = new ArrayList<>();
        for (final Part part : parts)
        {
            names.add(part.name().toLowerCase(Locale.ROOT));
        }
        return String.join(",", names);
    }

    /** @return the usage text printed by --help. */
    public static String usage()
    {
        return """
            Usage: ./verbus demo [flags]        (main class io.verbus.gateway.GatewayDemo)
            A trading gateway on Verbus: a market-data feed handler, a strategy and an order gateway. Measures
            tick-to-trade (feed publish -> execution report received) and writes a percentile table, an .hgrm file,
            an HdrHistogram log and an SVG percentile plot.

            Run:
              --duration D         total run time, e.g. 20s, 500ms, 2m (default 40s)
              --warmup D           leading time excluded from the histogram (default 20s)
              --progress D         interval of the progress line; 0 turns it off (default 5s)
              --out DIR            where report files go (default build/demo)
            Market:
              --rate N             market-data messages per second, e.g. 20000 or 20k (default 10000)
              --instruments N      instruments in the synthetic market (default 8)
              --depth N            book levels per side (default 10)
              --burst N            longest burst of back-to-back messages (default 16; 1 = evenly paced)
              --seed N             random seed of the market and the fill model
            Strategy and order gateway:
              --imbalance PCT      top-of-book size imbalance that triggers an order, 51-100 (default 80)
              --max-order-qty N    largest order the strategy sends and the gateway accepts (default 50)
              --position-limit N   gateway rejects orders that would take |position| beyond this (default 400)
              --fill-percent P     share of accepted orders the gateway fills; the rest are acked (default 70)
            Threads:
              --idle NAME          idle strategy of the parts: backoff (default), sleeping, yielding, busy-spin, noop
              --busy-spin          same as --idle busy-spin (the low-latency preset; needs a free core per spinner)
                                   With shared threads and a spinning idle strategy the driver runs on the parts'
                                   thread (invoker mode): one spinning thread per process, no driver thread.
              --driver-idle NAME   idle strategy of the Verbus driver threads when not invoked (default: backoff)
              --threads MODE       shared: the parts take turns on one thread (default); dedicated: one each
              --parts-cpu N        pin the shared parts thread to CPU N
              --feed-cpu N, --strategy-cpu N, --orders-cpu N   pin dedicated part threads
              --driver-cpu N       pin the Verbus driver threads
            Channels and processes:
              --launch L           processes (default): the strategy runs here, the feed and order gateway in a
                                   child process it starts and stops, over rdma; single: all parts in this process
              --role R             run only these parts here and start the others yourself (e.g. on another host):
                                   all, or a comma list of feed, strategy, orders
              --transport T        rdma (default with --launch processes), ipc (default with --launch single:
                                   Verbus's in-process log), aeron-ipc (an embedded Aeron driver's IPC)
              --provider P         rdma provider: shm (default, one host), tcp or verbs (across hosts), auto
              --md-endpoint H:P, --order-endpoint H:P, --report-endpoint H:P
                                   rdma control endpoints: the publisher listens on the port, subscribers
                                   connect to H:P (defaults 127.0.0.1:20501, :20502, :20503)
              --md-channel C, --order-channel C, --report-channel C   use channel C as given for that stream
              --secret-file F      rdma handshake secret (the same file on every host; --launch processes makes
                                   one in the output dir when not given)
              --dir DIR            Verbus dir (counters and logs; ./verbus stat --dir DIR shows them live)
              --help               this text
            """;
    }

    /** @return true when --help was given. */
    public boolean help()
    {
        return help;
    }

    /**
     * @param part of the gateway.
     * @return true when this process runs it.
     */
    public boolean runs(final Part part)
    {
        return parts.contains(part);
    }

    /** @return total run time. */
    public long durationNs()
    {
        return durationNs;
    }

    /** @return leading time excluded from the histogram. */
    public long warmupNs()
    {
        return warmupNs;
    }

    /** @return interval of the progress line, 0 for none. */
    public long progressIntervalNs()
    {
        return progressIntervalNs;
    }

    /** @return market-data messages per second. */
    public int ratePerSecond()
    {
        return ratePerSecond;
    }

    /** @return instruments in the market. */
    public int instruments()
    {
        return instruments;
    }

    /** @return book levels per side. */
    public int depth()
    {
        return depth;
    }

    /** @return longest burst. */
    public int maxBurst()
    {
        return maxBurst;
    }

    /** @return imbalance threshold in percent. */
    public int imbalancePercent()
    {
        return imbalancePercent;
    }

    /** @return largest order quantity. */
    public int maxOrderQty()
    {
        return maxOrderQty;
    }

    /** @return absolute position limit per instrument. */
    public int positionLimit()
    {
        return positionLimit;
    }

    /** @return percentage of accepted orders that are filled. */
    public int fillPercent()
    {
        return fillPercent;
    }

    /** @return random seed. */
    public long seed()
    {
        return seed;
    }

    /**
     * @return idle strategy name of the parts: the flag, else busy-spin where the host has a CPU for each of the
     * demo's two processes ({@link #AUTO_SPIN_MIN_CPUS}), else backoff.
     */
    public String idleStrategy()
    {
        if (null != idleStrategy)
        {
            return idleStrategy;
        }
        // On the idle 2-CPU build machine (2026-11-30): busy-spin with the driver invoked on the parts' thread gave
        // tick-to-trade p50 8.9 us, backoff 40.8 us, in back-to-back runs. A 10 ms p50 seen once in an earlier round
        // did not reproduce (a leftover spinning process is the likely cause).
        return AUTO_SPIN_ENABLED && Runtime.getRuntime().availableProcessors() >= AUTO_SPIN_MIN_CPUS ?
            IdleStrategies.BUSY_SPIN : IdleStrategies.BACKOFF;
    }

    /** @return true when neither --idle nor --busy-spin was given, so the idle strategy follows the host. */
    public boolean isIdleChosenForTheHost()
    {
        return null == idleStrategy;
    }

    /**
     * @return true when the parts share one spinning thread per process: the driver's agents then run on that same
     * thread ({@code ThreadingMode.INVOKER}), so each process has exactly one spinning thread and no driver thread
     * competes with it for a core.
     */
    public boolean driverInvoked()
    {
        return !dedicatedThreads && isSpinning(idleStrategy());
    }

    /** @return idle strategy name of the driver agents: the flag, else backoff. */
    public String driverIdleStrategy()
    {
        return null != driverIdleStrategy ? driverIdleStrategy : IdleStrategies.BACKOFF;
    }

    /** @return true for one thread per part. */
    public boolean dedicatedThreads()
    {
        return dedicatedThreads;
    }

    /** @return CPU of the shared parts thread or -1. */
    public int partsCpu()
    {
        return partsCpu;
    }

    /**
     * @param part of the gateway.
     * @return CPU of that part's dedicated thread or -1.
     */
    public int cpu(final Part part)
    {
        return switch (part)
        {
            case FEED -> feedCpu;
            case STRATEGY -> strategyCpu;
            case ORDERS -> ordersCpu;
        };
    }

    /** @return CPU of the driver threads or -1. */
    public int driverCpu()
    {
        return driverCpu;
    }

    /** @return the transport: the flag, else rdma when this run launches processes, else ipc. */
    public Transport transport()
    {
        if (null != transport)
        {
            return transport;
        }
        return launchesProcesses() ? Transport.RDMA : Transport.IPC;
    }

    /**
     * @return true when this process should start the feed and order gateway in a child process and run the
     * strategy itself: no --role given and --launch is processes (the default).
     */
    public boolean launchesProcesses()
    {
        return !roleGiven && (null == launch || launch == Launch.PROCESSES);
    }

    /** @return the flags this configuration was parsed from. */
    public String[] args()
    {
        return args.clone();
    }

    /** @return where report files go. */
    public Path outputDir()
    {
        return outputDir;
    }

    /** @return the rdma secret file, or null when not given. */
    public String secretFile()
    {
        return secretFile;
    }

    /** @return true when --dir was given. */
    public boolean hasExplicitVerbusDir()
    {
        return null != verbusDir;
    }

    /** @return the Verbus dir: the flag, else the default dir with a suffix naming this process's role. */
    public String verbusDir()
    {
        if (null != verbusDir)
        {
            return verbusDir;
        }
        return Verbus.Context.defaultDir() + "-gateway-" + roleName().replace(',', '-');
    }
}
