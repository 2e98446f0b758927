package io.verbus.tuning;

import java.io.PrintStream;
import java.util.List;
import java.util.Objects;

/**
 * {@code tune apply}: for each WARN/FAIL line, the commands that fix it. A dry run (the default) prints them as a
 * shell script and changes nothing; with {@code --yes}, as root, it runs the ones that can take effect now and
 * still only prints those that need a reboot, a re-login or a decision.
 */
public final class TuneApply
{
    /** All commands ran (or dry run). */
    public static final int EXIT_OK = 0;

    /** At least one command failed under --yes. */
    public static final int EXIT_COMMAND_FAILED = 1;

    /** --yes without root: nothing was run. */
    public static final int EXIT_NOT_ROOT = 3;

    /**
     * Runs one shell command on the host; injectable so tests see what would run without running it.
     */
    @FunctionalInterface
    public interface CommandExecutor
    {
        /**
         * @param command a shell command line.
         * @return its exit status.
         */
        int execute(String command);
    }

    private final HostReport report;
    private final CommandExecutor executor;
    private final boolean runAsRoot;

    /**
     * @param report    the report whose WARN/FAIL lines are fixed.
     * @param executor  runs a command under --yes.
     * @param runAsRoot whether this process is root (only root may run the commands).
     */
    public TuneApply(final HostReport report, final CommandExecutor executor, final boolean runAsRoot)
    {
        this.report = Objects.requireNonNull(report, "report");
        this.executor = Objects.requireNonNull(executor, "executor");
        this.runAsRoot = runAsRoot;
    }

    /**
     * @param yes true to run the commands, false for a dry run.
     * @param out where the plan and the outcome are printed.
     * @return an exit code: {@link #EXIT_OK}, {@link #EXIT_COMMAND_FAILED} or {@link #EXIT_NOT_ROOT}.
     */
    public int run(final boolean yes, final PrintStream out)
    {
        if (yes && !runAsRoot)
        {
            out.println("# apply --yes needs root: nothing was run. Re-run as root, or drop --yes for a dry run.");
            return EXIT_NOT_ROOT;
        }

        out.println(yes ?
            "# verbus tune apply --yes: running the fixes that take effect now; manual steps are listed, not run." :
            "# verbus tune apply: dry run, nothing is changed. Run as root with --yes to execute the uncommented " +
            "commands (or pipe this to sh).");

        int failed = 0;
        int toRun = 0;
        for (final CheckResult result : report.results())
        {
            if (!result.status().needsFix())
            {
                continue;
            }
            out.println();
            out.println("# " + result.status().label() + " " + result.item() + ": " + result.detail());
            if (result.commands().isEmpty())
            {
                out.println("# manual: " + result.fix());
                continue;
            }
            for (final String command : result.commands())
            {
                toRun++;
                out.println(command);
                if (yes)
                {
                    final int status = executor.execute(command);
                    out.println("# -> " + (status == 0 ? "done" : "FAILED with exit status " + status));
                    if (status != 0)
                    {
                        failed++;
                    }
                }
            }
        }

        out.println();
        if (toRun == 0)
        {
            out.println("# nothing to run: no WARN/FAIL line has a fix that takes effect now.");
        }
        else if (yes)
        {
            out.println("# ran " + toRun + " command(s), " + failed + " failed. Run 'tune check' to see the result.");
        }
        else
        {
            out.println("# " + toRun + " command(s) would run with --yes; nothing was changed.");
        }
        return failed == 0 ? EXIT_OK : EXIT_COMMAND_FAILED;
    }

    /**
     * @return the commands --yes would run, in order.
     */
    public List<String> plannedCommands()
    {
        return report.results().stream()
            .filter((result) -> result.status().needsFix())
            .flatMap((result) -> result.commands().stream())
            .toList();
    }
}
