package io.verbus.tuning;

import java.util.List;
import java.util.Objects;

/**
 * One line of the host report.
 *
 * @param status   the verdict.
 * @param item     stable dotted name of what was checked, e.g. {@code cpu.governor}, {@code rdma.mlx5_0/1}.
 * @param detail   what was found, with numbers and the assumption made where there was one.
 * @param fix      what to do, as concrete commands ({@code none} when nothing is needed).
 * @param commands commands {@code tune apply --yes} may run as root to fix the item now; empty when the fix needs a
 *                 reboot, a re-login, a switch or a decision, which {@code apply} then prints as a manual step.
 */
public record CheckResult(Status status, String item, String detail, String fix, List<String> commands)
{
    public static final String NO_FIX = "none";

    public CheckResult
    {
        Objects.requireNonNull(status, "status");
        Objects.requireNonNull(item, "item");
        Objects.requireNonNull(detail, "detail");
        Objects.requireNonNull(fix, "fix");
        commands = List.copyOf(commands);
        if (!commands.isEmpty() && !status.needsFix())
        {
            throw new IllegalArgumentException("only WARN/FAIL lines carry commands: " + item);
        }
    }

    public static CheckResult ok(final String item, final String detail)
    {
        return new CheckResult(Status.OK, item, detail, NO_FIX, List.of());
    }

    public static CheckResult absent(final String item, final String detail, final String fix)
    {
        return new CheckResult(Status.ABSENT, item, detail, fix, List.of());
    }

    /**
     * A line whose fix can be run now by {@code tune apply --yes}; the fix text is the commands themselves.
     */
    public static CheckResult runnable(final Status status, final String item, final String detail,
        final List<String> commands)
    {
        return new CheckResult(status, item, detail, String.join("; ", commands), commands);
    }

    /**
     * A line whose fix needs a reboot, re-login, or a person's decision; {@code apply} prints it and runs nothing.
     */
    public static CheckResult manual(final Status status, final String item, final String detail, final String fix)
    {
        return new CheckResult(status, item, detail, fix, List.of());
    }

    /**
     * @return the report line: {@code STATUS item  detail -> fix: ...}.
     */
    public String toLine()
    {
        return String.format("%-4s %-22s %s -> fix: %s", status.label(), item, detail, fix);
    }
}
