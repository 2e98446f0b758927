package io.verbus.tuning;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;

/**
 * The host latency report: every check in a fixed order, one line per item.
 */
public final class HostReport
{
    /** Exit code of {@code tune check} when no line is FAIL. */
    public static final int EXIT_OK = 0;

    /** Exit code of {@code tune check} when at least one line is FAIL. */
    public static final int EXIT_FAIL = 1;

    private static final List<HostCheck> CHECKS = List.of(
        new CpuGovernorCheck(),
        new CpuIsolationCheck(),
        new CStateCheck(),
        new TransparentHugePageCheck(),
        new DamonCheck(),
        new HugePageCheck(),
        new MemlockCheck(),
        new NumaCheck(),
        new IrqAffinityCheck(),
        new RdmaPortCheck(),
        new EeeCheck(),
        new JvmFlagsCheck());

    private final List<CheckResult> results;

    private HostReport(final List<CheckResult> results)
    {
        this.results = List.copyOf(results);
    }

    public static HostReport run(final CheckContext context)
    {
        final List<CheckResult> results = new ArrayList<>();
        for (final HostCheck check : CHECKS)
        {
            results.addAll(check.check(context));
        }
        return new HostReport(results);
    }

    public List<CheckResult> results()
    {
        return results;
    }

    public boolean hasFailures()
    {
        return results.stream().anyMatch((result) -> result.status() == Status.FAIL);
    }

    public long count(final Status status)
    {
        return results.stream().filter((result) -> result.status() == status).count();
    }

    public int exitCode()
    {
        return hasFailures() ? EXIT_FAIL : EXIT_OK;
    }

    public List<String> lines()
    {
        return results.stream().map(CheckResult::toLine).toList();
    }

    public void print(final PrintStream out)
    {
        lines().forEach(out::println);
        out.println(String.format("summary: %d OK, %d WARN, %d FAIL, %d N/A (exit %d)",
            count(Status.OK), count(Status.WARN), count(Status.FAIL), count(Status.ABSENT), exitCode()));
    }
}
