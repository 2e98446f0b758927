package io.verbus.archive;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The options of {@code ./verbus record} and {@code ./verbus replay}: {@code --name value} pairs and flags, checked
 * against what the command accepts, plus the archive options both share.
 */
final class CommandLine
{
    /** Archive options shared by record and replay. */
    static final String ARCHIVE_USAGE = """
          --archive-dir D        embedded archive's files (default ./%s, or -D%s)
          --aeron-dir D          the archive's media driver dir (default %s); a running
                                 one (e.g. a recorder's) is connected to instead of launching an archive
          --control C            UDP control channel: opened by an embedded archive, or the one of an existing
                                 remote archive (with --remote)
          --remote               use an existing archive at --control; set --recording-channel / --replay-channel to
                                 UDP endpoints it can reach
          --recording-channel C  aeron:ipc (default) or aeron:udp?endpoint=archive-host:port
          --replay-channel C     aeron:ipc (default) or aeron:udp?endpoint=this-host:port""".formatted(
        ArchiveConnection.Context.ARCHIVE_DIR_DEFAULT, ArchiveConnection.Context.ARCHIVE_DIR_PROP_NAME,
        ArchiveConnection.Context.defaultAeronDir());

    private static final Set<String> ARCHIVE_VALUE_OPTIONS = Set.of(
        "--archive-dir", "--aeron-dir", "--control", "--recording-channel", "--replay-channel");
    private static final Set<String> ARCHIVE_FLAGS = Set.of("--remote");

    private final Map<String, String> values = new LinkedHashMap<>();
    private final List<String> flags = new ArrayList<>();

    private CommandLine()
    {
    }

    /**
     * @param args         the command's arguments.
     * @param valueOptions options that take a value, besides the archive ones.
     * @param flagOptions  options without a value, besides the archive ones.
     * @return the parsed options.
     * @throws IllegalArgumentException naming an unknown option or a missing value.
     */
    static CommandLine parse(final String[] args, final Set<String> valueOptions, final Set<String> flagOptions)
    {
        final CommandLine commandLine = new CommandLine();
        for (int i = 0; i < args.length; i++)
        {
            final String arg = args[i];
            if (valueOptions.contains(arg) || ARCHIVE_VALUE_OPTIONS.contains(arg))
            {
                if (++i >= args.length)
                {
                    throw new IllegalArgumentException(arg + " needs a value");
                }
                commandLine.values.put(arg, args[i]);
            }
            else if (flagOptions.contains(arg) || ARCHIVE_FLAGS.contains(arg))
            {
                commandLine.flags.add(arg);
            }
            else
            {
                throw new IllegalArgumentException("unknown argument '" + arg + "'");
            }
        }
        return commandLine;
    }

    boolean has(final String option)
    {
        return values.containsKey(option) || flags.contains(option);
    }

    String value(final String option, final String defaultValue)
    {
        return values.getOrDefault(option, defaultValue);
    }

    String required(final String option)
    {
        final String value = values.get(option);
        if (null == value)
        {
            throw new IllegalArgumentException(option + " is required");
        }
        return value;
    }

    long longValue(final String option, final long defaultValue)
    {
        final String value = values.get(option);
        if (null == value)
        {
            return defaultValue;
        }
        try
        {
            return Long.parseLong(value);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(option + " '" + value + "' is not a number", ex);
        }
    }

    /**
     * @return the archive to use: with {@code --remote} the archive at {@code --control}; else the one whose media
     * driver is running in {@code --aeron-dir} (a recorder's), else an embedded one launched on {@code --archive-dir}.
     */
    ArchiveConnection.Context archiveContext()
    {
        final ArchiveConnection.Context context = new ArchiveConnection.Context();
        if (has("--archive-dir"))
        {
            context.archiveDir(values.get("--archive-dir"));
        }
        if (has("--aeron-dir"))
        {
            context.aeronDir(values.get("--aeron-dir"));
        }
        if (has("--control"))
        {
            context.controlChannel(values.get("--control"));
        }
        if (has("--recording-channel"))
        {
            context.recordingChannel(values.get("--recording-channel"));
        }
        if (has("--replay-channel"))
        {
            context.replayChannel(values.get("--replay-channel"));
        }
        if (has("--remote"))
        {
            if (!has("--control"))
            {
                throw new IllegalArgumentException("--remote needs --control, the archive's UDP control channel");
            }
            context.launchArchive(false);
        }
        else
        {
            final String aeronDir = null != context.aeronDir() ?
                context.aeronDir() : ArchiveConnection.Context.defaultAeronDir();
            if (ArchiveConnection.isDriverActive(aeronDir))
            {
                context.aeronDir(aeronDir).launchArchive(false).controlChannel(null);
            }
        }
        return context;
    }

    /**
     * @param context one {@link #archiveContext()} returned.
     * @return true when it joins the driver found running in the Aeron dir (not {@code --remote}): a driver killed
     * less than the activity timeout ago looks running too, so a failure to reach its archive may pass.
     */
    boolean joinsDriverFoundRunning(final ArchiveConnection.Context context)
    {
        return !has("--remote") && !context.launchArchive();
    }
}
