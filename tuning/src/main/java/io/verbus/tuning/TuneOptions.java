package io.verbus.tuning;

import org.agrona.SystemUtil;

import java.nio.file.Path;
import java.util.Optional;

/**
 * The parsed command line of {@code ./verbus tune}.
 *
 * @param command    {@code check}, {@code apply}, {@code preset} or {@code help}.
 * @param presetName the preset named after {@code preset}.
 * @param root       the host root ({@code --root}); empty for the live host.
 * @param rings      what the rings need.
 * @param cpus       {@code --cpus}: CPUs for pinned threads.
 * @param jvmFlags   {@code --jvm-flags}: a target JVM's flags; empty to judge this JVM.
 * @param noTools    {@code --no-tools}: never run ethtool, ibv_devinfo or dcb.
 * @param yes        {@code --yes}: apply runs the commands.
 */
public record TuneOptions(
    String command,
    Optional<String> presetName,
    Optional<Path> root,
    RingSizing rings,
    CpuSet cpus,
    Optional<String> jvmFlags,
    boolean noTools,
    boolean yes)
{
    public static final String USAGE = """
        Usage: ./verbus tune <command> [flags]
          check              host latency report, one line per item: OK / WARN / FAIL / N/A and the fix.
                             Exit status: 0 when no line is FAIL, 1 when any is, 2 on a usage error.
          apply [--yes]      the commands that fix each WARN/FAIL line. Dry run by default (nothing changes);
                             --yes runs them, as root only. Exit: 0 ok, 1 a command failed, 2 usage, 3 not root.
          preset <name>      what preset 'low-latency' or 'default' sets, for this host.
        Flags:
          --root DIR         read DIR/sys and DIR/proc instead of /sys and /proc (fake trees; host tools not run)
          --ring-bytes SIZE  memory the rings need on this host, e.g. 96m (default: term length x 3 x subscribers)
          --term-length SIZE term length behind that figure (default 16m)
          --subscribers N    rings expected on this host (default 1)
          --cpus LIST        CPUs the latency threads will be pinned to, e.g. 2-3 or 2,4
          --jvm-flags FLAGS  judge these JVM flags (one quoted argument) instead of this JVM's
          --no-tools         do not run ethtool / ibv_devinfo / dcb for facts sysfs lacks
          --yes              with apply: run the commands (root only)
          --help             this text""";

    /**
     * @param args the arguments after {@code tune}.
     * @return the options.
     * @throws IllegalArgumentException naming the flag when an argument is unknown, missing a value or malformed.
     */
    public static TuneOptions parse(final String[] args)
    {
        String command = null;
        Optional<String> presetName = Optional.empty();
        Optional<Path> root = Optional.empty();
        Long ringBytes = null;
        long termLength = RingSizing.DEFAULT_TERM_LENGTH;
        int subscribers = RingSizing.DEFAULT_SUBSCRIBERS;
        boolean termsGiven = false;
        CpuSet cpus = CpuSet.EMPTY;
        Optional<String> jvmFlags = Optional.empty();
        boolean noTools = false;
        boolean yes = false;

        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            switch (arg)
            {
                case "--help", "-h", "help" -> command = "help";
                case "--root" -> root = Optional.of(Path.of(value(args, ++i, arg)));
                case "--ring-bytes" -> ringBytes = size(arg, value(args, ++i, arg));
                case "--term-length" ->
                {
                    termLength = size(arg, value(args, ++i, arg));
                    termsGiven = true;
                }
                case "--subscribers" ->
                {
                    subscribers = positiveInt(arg, value(args, ++i, arg));
                    termsGiven = true;
                }
                case "--cpus" -> cpus = cpuList(arg, value(args, ++i, arg));
                case "--jvm-flags" ->
                {
                    // the value is itself a list of flags, so it may start with "--"
                    if (++i >= args.length)
                    {
                        throw new IllegalArgumentException("flag '--jvm-flags' needs a value");
                    }
                    jvmFlags = Optional.of(args[i]);
                }
                case "--no-tools" -> noTools = true;
                case "--yes" -> yes = true;
                default ->
                {
                    if (arg.startsWith("-"))
                    {
                        throw new IllegalArgumentException("unknown flag '" + arg + "'");
                    }
                    if (null == command)
                    {
                        command = arg;
                    }
                    else if ("preset".equals(command) && presetName.isEmpty())
                    {
                        presetName = Optional.of(arg);
                    }
                    else
                    {
                        throw new IllegalArgumentException("unexpected argument '" + arg + "'");
                    }
                }
            }
        }

        if (null == command)
        {
            throw new IllegalArgumentException("missing command: check, apply or preset");
        }
        if (!"help".equals(command))
        {
            switch (command)
            {
                case "check", "apply" -> { }
                case "preset" ->
                {
                    if (presetName.isEmpty())
                    {
                        throw new IllegalArgumentException("preset needs a name: " + Preset.names());
                    }
                }
                default -> throw new IllegalArgumentException(
                    "unknown command '" + command + "': expected check, apply or preset");
            }
        }
        if (yes && !"apply".equals(command))
        {
            throw new IllegalArgumentException("--yes only goes with apply");
        }
        if (null != ringBytes && termsGiven)
        {
            throw new IllegalArgumentException("give --ring-bytes or --term-length/--subscribers, not both");
        }

        final RingSizing rings = null != ringBytes ?
            RingSizing.given(ringBytes) : RingSizing.fromTerms(termLength, subscribers);
        return new TuneOptions(command, presetName, root, rings, cpus, jvmFlags, noTools, yes);
    }

    private static String value(final String[] args, final int index, final String flag)
    {
        if (index >= args.length || args[index].startsWith("--"))
        {
            throw new IllegalArgumentException("flag '" + flag + "' needs a value");
        }
        return args[index];
    }

    private static long size(final String flag, final String value)
    {
        final long bytes;
        try
        {
            bytes = SystemUtil.parseSize(flag, value);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(
                "flag '" + flag + "': not a size '" + value + "' (e.g. 64k, 16m, 1g)", ex);
        }
        if (bytes <= 0)
        {
            throw new IllegalArgumentException("flag '" + flag + "' must be positive: " + value);
        }
        return bytes;
    }

    private static int positiveInt(final String flag, final String value)
    {
        try
        {
            final int number = Integer.parseInt(value);
            if (number <= 0)
            {
                throw new IllegalArgumentException("flag '" + flag + "' must be positive: " + value);
            }
            return number;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException("flag '" + flag + "': not a number '" + value + "'", ex);
        }
    }

    private static CpuSet cpuList(final String flag, final String value)
    {
        try
        {
            return CpuSet.parse(value);
        }
        catch (final IllegalArgumentException ex)
        {
            throw new IllegalArgumentException("flag '" + flag + "': " + ex.getMessage(), ex);
        }
    }
}
