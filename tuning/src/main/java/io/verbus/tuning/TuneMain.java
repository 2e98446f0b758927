package io.verbus.tuning;

import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./verbus tune check|apply|preset}: the host latency report, the commands that fix it, and the presets.
 */
public final class TuneMain
{
    /** Exit status for a bad command line. */
    public static final int EXIT_USAGE = 2;

    private static final long COMMAND_TIMEOUT_S = 120;

    /**
     * What {@link TuneMain} takes from the machine; tests give their own.
     *
     * @param liveHost     the host when no {@code --root} is given.
     * @param liveTools    host tools for the live host.
     * @param executor     runs apply's commands.
     * @param root         whether this process runs as root.
     */
    public record Environment(HostFs liveHost, HostTools liveTools, TuneApply.CommandExecutor executor, boolean root)
    {
        public static Environment system()
        {
            return new Environment(HostFs.live(), HostTools.system(), TuneMain::executeShell, isRoot());
        }
    }

    private TuneMain()
    {
    }

    public static void main(final String[] args)
    {
        System.exit(run(args, System.out, System.err, Environment.system()));
    }

    /**
     * @return the process exit status.
     */
    public static int run(final String[] args, final PrintStream out, final PrintStream err, final Environment env)
    {
        final TuneOptions options;
        try
        {
            options = TuneOptions.parse(args);
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("verbus tune: " + ex.getMessage());
            err.println(TuneOptions.USAGE);
            return EXIT_USAGE;
        }

        if ("help".equals(options.command()))
        {
            out.println(TuneOptions.USAGE);
            return 0;
        }

        final HostFs fs;
        try
        {
            fs = options.root().map(HostFs::new).orElse(env.liveHost());
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("verbus tune: --root: " + ex.getMessage());
            return EXIT_USAGE;
        }
        // A tool such as ethtool describes the machine it runs on: never mix its answer into a fake tree.
        final boolean fakeTree = options.root().isPresent();
        final HostTools tools = options.noTools() || fakeTree ? HostTools.NONE : env.liveTools();
        final JvmFlags jvmFlags = options.jvmFlags().map(JvmFlags::of).orElseGet(JvmFlags::ofThisJvm);
        final CheckContext context = new CheckContext(fs, tools, options.rings(), options.cpus(), jvmFlags);

        return switch (options.command())
        {
            case "check" -> check(context, fakeTree, out);
            case "apply" -> new TuneApply(HostReport.run(context), env.executor(), env.root()).run(options.yes(), out);
            case "preset" -> preset(options, context, out, err);
            default -> throw new IllegalStateException("unhandled command " + options.command());
        };
    }

    private static int check(final CheckContext context, final boolean fakeTree, final PrintStream out)
    {
        final HostReport report = HostReport.run(context);
        out.println("# verbus tune check: host " + context.fs().root() + (fakeTree ? " (fake tree)" : "") +
            ", rings " + context.rings().describe() +
            (context.pinnedCpus().isEmpty() ? "" : ", pinned CPUs " + context.pinnedCpus()));
        report.print(out);
        return report.exitCode();
    }

    private static int preset(
        final TuneOptions options, final CheckContext context, final PrintStream out, final PrintStream err)
    {
        final Preset preset;
        try
        {
            preset = Preset.byName(options.presetName().orElseThrow());
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("verbus tune: " + ex.getMessage());
            return EXIT_USAGE;
        }
        preset.describe(options.cpus(), context.rdma()).forEach(out::println);
        return 0;
    }

    /**
     * @return true when the effective user id is 0, from the real /proc (never a fake root).
     */
    static boolean isRoot()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("Uid:"))
                {
                    final String[] ids = line.substring(4).strip().split("\\s+");
                    return ids.length > 1 && "0".equals(ids[1]);
                }
            }
        }
        catch (final IOException ignore)
        {
            // not Linux, or /proc not mounted: not known to be root
        }
        return false;
    }

    private static int executeShell(final String command)
    {
        try
        {
            final Process process = new ProcessBuilder(List.of("/bin/sh", "-c", command)).inheritIO().start();
            if (!process.waitFor(COMMAND_TIMEOUT_S, TimeUnit.SECONDS))
            {
                process.destroyForcibly();
                return 124;
            }
            return process.exitValue();
        }
        catch (final IOException ex)
        {
            return 127;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return 130;
        }
    }
}
