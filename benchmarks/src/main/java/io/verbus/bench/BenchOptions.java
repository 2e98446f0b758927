package io.verbus.bench;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import java.util.regex.PatternSyntaxException;

/**
 * The command line of {@code ./verbus bench}, parsed and validated. Every bad flag fails with a message that names
 * the flag and the value, so a typo never silently turns into a default.
 */
public final class BenchOptions
{
    /** Latency sizes of the issue: round trips of 32, 256 and 1024 bytes. */
    public static final int[] DEFAULT_LATENCY_SIZES = { 32, 256, 1024 };
    /** Throughput sizes of the issue: 32 B to 4 KiB. */
    public static final int[] DEFAULT_THROUGHPUT_SIZES = { 32, 256, 1024, 4096 };
    /** Every message carries its 8-byte sequence number, so nothing shorter can be checked on echo. */
    public static final int MIN_MESSAGE_LENGTH = 16;
    public static final int MAX_MESSAGE_LENGTH = 64 * 1024;

    /** The parts of a run that {@code --only} can select. */
    public enum Part
    {
        LATENCY, THROUGHPUT, SEED, BURST
    }

    /** Most rounds a run takes: a quick run of every contender is about 4 minutes a round. */
    static final int MAX_ROUNDS = 15;

    private static final String USAGE = """
        Usage: ./verbus bench [flags]
          Runs every contender on this machine in one process: round-trip latency (HdrHistogram percentiles),
          one-publisher-one-subscriber throughput, and the seed comparison (TCP vs SEND/RECV vs RDMA WRITE).

          --quick                  short measurement, 3 s JIT warm-up per contender (about 4 minutes)
          --json FILE              write one JSON object per contender, part and size to FILE
          --svg FILE               write the latency percentile plot to FILE
                                   (default: next to --json with .svg, else verbus-bench-latency.svg)
          --only PARTS             comma list of latency, throughput, seed, burst (default: the first three;
                                   burst: how late the end of a 5,000-message burst arrives, at the latency sizes)
          --contenders REGEX       run only contenders whose name matches REGEX (others appear as "not run")
          --sizes LIST             latency sizes in bytes (default 32,256,1024)
          --throughput-sizes LIST  throughput sizes in bytes (default 32,256,1024,4096)
          --warmup-ms N            latency warm-up per size (default 2000, quick 250)
          --measure-ms N           latency measurement per size (default 5000, quick 500)
          --max-round-trips N      latency measurement cap per size (default 2000000, quick 200000)
          --throughput-ms N        throughput measurement per size (default 2000, quick 300)
          --rounds N               run the latency and throughput parts N times over, every contender once per
                                   round, and report each contender's median round (default 1): this VM's
                                   speed drifts between minutes, so compare contenders within rounds
          --cpus A,B               pin pinger/publisher to CPU A and ponger/subscriber to CPU B (default 0,1)
          --no-pin                 do not pin threads
          --jmh [REGEX] [JMH...]   run the JMH suite instead (JMH's own flags follow, e.g. -prof gc)
          --help                   this text
        """;

    private final boolean help;
    private final boolean quick;
    private final Path jsonFile;
    private final Path svgFile;
    private final Set<Part> parts;
    private final Pattern contenderFilter;
    private final int[] latencySizes;
    private final int[] throughputSizes;
    private final long warmupNs;
    private final long measureNs;
    private final long maxRoundTrips;
    private final long throughputNs;
    private final int rounds;
    private final int pingerCpu;
    private final int pongerCpu;
    private final boolean jmh;
    private final List<String> jmhArgs;

    private BenchOptions(final Builder b)
    {
        help = b.help;
        quick = b.quick;
        jsonFile = b.jsonFile;
        svgFile = null != b.svgFile ? b.svgFile : defaultSvgFile(b.jsonFile);
        parts = Set.copyOf(b.parts);
        contenderFilter = b.contenderFilter;
        latencySizes = b.latencySizes.clone();
        throughputSizes = b.throughputSizes.clone();
        warmupNs = TimeUnit.MILLISECONDS.toNanos(null != b.warmupMs ? b.warmupMs : (quick ? 250 : 2000));
        measureNs = TimeUnit.MILLISECONDS.toNanos(null != b.measureMs ? b.measureMs : (quick ? 500 : 5000));
        maxRoundTrips = null != b.maxRoundTrips ? b.maxRoundTrips : (quick ? 200_000 : 2_000_000);
        throughputNs = TimeUnit.MILLISECONDS.toNanos(null != b.throughputMs ? b.throughputMs : (quick ? 300 : 2000));
        rounds = b.rounds;
        pingerCpu = b.pingerCpu;
        pongerCpu = b.pongerCpu;
        jmh = b.jmh;
        jmhArgs = List.copyOf(b.jmhArgs);
    }

    /**
     * Parses the command line.
     *
     * @param args as given to main.
     * @return the options.
     * @throws IllegalArgumentException naming the flag and value when a flag is unknown, lacks its value or the
     *                                  value is out of range.
     */
    public static BenchOptions parse(final String... args)
    {
        final Builder b = new Builder();
        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            switch (arg)
            {
                case "--help", "-h" -> b.help = true;
                case "--quick" -> b.quick = true;
                case "--json" -> b.jsonFile = Path.of(value(args, ++i, arg));
                case "--svg" -> b.svgFile = Path.of(value(args, ++i, arg));
                case "--only" -> b.parts = parseParts(value(args, ++i, arg));
                case "--contenders" -> b.contenderFilter = parseRegex(value(args, ++i, arg), arg);
                case "--sizes" -> b.latencySizes = parseSizes(value(args, ++i, arg), arg);
                case "--throughput-sizes" -> b.throughputSizes = parseSizes(value(args, ++i, arg), arg);
                case "--warmup-ms" -> b.warmupMs = parseLong(value(args, ++i, arg), arg, 0, 600_000);
                case "--measure-ms" -> b.measureMs = parseLong(value(args, ++i, arg), arg, 1, 600_000);
                case "--max-round-trips" -> b.maxRoundTrips = parseLong(value(args, ++i, arg), arg, 1, 1L << 40);
                case "--throughput-ms" -> b.throughputMs = parseLong(value(args, ++i, arg), arg, 1, 600_000);
                case "--rounds" -> b.rounds = (int)parseLong(value(args, ++i, arg), arg, 1, MAX_ROUNDS);
                case "--cpus" -> parseCpus(value(args, ++i, arg), b);
                case "--no-pin" -> b.pingerCpu = b.pongerCpu = -1;
                case "--jmh" ->
                {
                    b.jmh = true;
                    b.jmhArgs.addAll(Arrays.asList(args).subList(i + 1, args.length));
                    i = args.length;
                }
                default -> throw new IllegalArgumentException("unknown flag '" + arg + "' (try --help)");
            }
        }
        return new BenchOptions(b);
    }

    public static String usage()
    {
        return USAGE;
    }

    public boolean help()
    {
        return help;
    }

    public boolean quick()
    {
        return quick;
    }

    /** @return where to write the JSON, or null for none. */
    public Path jsonFile()
    {
        return jsonFile;
    }

    public Path svgFile()
    {
        return svgFile;
    }

    public boolean runs(final Part part)
    {
        return parts.contains(part);
    }

    /**
     * @param contenderName the contender's name.
     * @return true when --contenders selects it (or was not given).
     */
    public boolean selects(final String contenderName)
    {
        return null == contenderFilter || contenderFilter.matcher(contenderName).find();
    }

    public int[] latencySizes()
    {
        return latencySizes.clone();
    }

    public int[] throughputSizes()
    {
        return throughputSizes.clone();
    }

    public long warmupNs()
    {
        return warmupNs;
    }

    public long measureNs()
    {
        return measureNs;
    }

    public long maxRoundTrips()
    {
        return maxRoundTrips;
    }

    public long throughputNs()
    {
        return throughputNs;
    }

    /**
     * @return how many times the latency and throughput parts run, each contender once per round.
     */
    public int rounds()
    {
        return rounds;
    }

    /** @return the CPU for the pinger / publisher thread, or -1 for no pinning. */
    public int pingerCpu()
    {
        return pingerCpu;
    }

    /** @return the CPU for the ponger / subscriber thread, or -1 for no pinning. */
    public int pongerCpu()
    {
        return pongerCpu;
    }

    public boolean jmh()
    {
        return jmh;
    }

    public List<String> jmhArgs()
    {
        return jmhArgs;
    }

    private static Path defaultSvgFile(final Path jsonFile)
    {
        if (null == jsonFile)
        {
            return Path.of("verbus-bench-latency.svg");
        }
        final String name = jsonFile.getFileName().toString();
        final String stem = name.toLowerCase(Locale.ROOT).endsWith(".json") ?
            name.substring(0, name.length() - 5) : name;
        return jsonFile.resolveSibling(stem + ".svg");
    }

    private static String value(final String[] args, final int index, final String flag)
    {
        if (index >= args.length || args[index].startsWith("--"))
        {
            throw new IllegalArgumentException("flag " + flag + " needs a value");
        }
        return args[index];
    }

    private static Set<Part> parseParts(final String list)
    {
        final List<Part> parts = new ArrayList<>();
        for (final String name : list.split(","))
        {
            try
            {
                parts.add(Part.valueOf(name.trim().toUpperCase(Locale.ROOT)));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException(
                    "--only: unknown part '" + name + "' (expected latency, throughput or seed)", ex);
            }
        }
        return Set.copyOf(parts);
    }

    private static Pattern parseRegex(final String regex, final String flag)
    {
        try
        {
            return Pattern.compile(regex);
        }
        catch (final PatternSyntaxException ex)
        {
            throw new IllegalArgumentException(flag + ": bad regular expression '" + regex + "': " +
                ex.getDescription(), ex);
        }
    }

    private static int[] parseSizes(final String list, final String flag)
    {
        final String[] items = list.split(",");
        final int[] sizes = new int[items.length];
        for (int i = 0; i < items.length; i++)
        {
            sizes[i] = (int)parseLong(items[i].trim(), flag, MIN_MESSAGE_LENGTH, MAX_MESSAGE_LENGTH);
        }
        return sizes;
    }

    private static void parseCpus(final String list, final Builder b)
    {
        final String[] items = list.split(",");
        if (2 != items.length)
        {
            throw new IllegalArgumentException("--cpus: expected two CPU numbers A,B but got '" + list + "'");
        }
        final int limit = Runtime.getRuntime().availableProcessors() - 1;
        b.pingerCpu = (int)parseLong(items[0].trim(), "--cpus", 0, Math.max(limit, 0));
        b.pongerCpu = (int)parseLong(items[1].trim(), "--cpus", 0, Math.max(limit, 0));
        if (b.pingerCpu == b.pongerCpu)
        {
            throw new IllegalArgumentException("--cpus: the two threads need two different CPUs, got '" + list + "'");
        }
    }

    private static long parseLong(final String text, final String flag, final long min, final long max)
    {
        final long value;
        try
        {
            value = Long.parseLong(text);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(flag + ": '" + text + "' is not a whole number", ex);
        }
        if (value < min || value > max)
        {
            throw new IllegalArgumentException(flag + ": " + value + " is out of range [" + min + ", " + max + "]");
        }
        return value;
    }

    private static final class Builder
    {
        boolean help;
        boolean quick;
        Path jsonFile;
        Path svgFile;
        Set<Part> parts = Set.of(Part.LATENCY, Part.THROUGHPUT, Part.SEED);
        Pattern contenderFilter;
        int[] latencySizes = DEFAULT_LATENCY_SIZES;
        int[] throughputSizes = DEFAULT_THROUGHPUT_SIZES;
        Long warmupMs;
        Long measureMs;
        Long maxRoundTrips;
        Long throughputMs;
        int rounds = 1;
        int pingerCpu = 0;
        int pongerCpu = 1;
        boolean jmh;
        final List<String> jmhArgs = new ArrayList<>();
    }
}
