package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code jvm.flags}: the flags a latency JVM wants. {@code -XX:+AlwaysPreTouch} faults the heap in at start rather
 * than on the first messages; {@code -Xms} equal to {@code -Xmx} stops the heap resizing; {@code -XX:+UseLargePages}
 * backs the heap with the reserved hugepages when there are any.
 */
public final class JvmFlagsCheck implements HostCheck
{
    static final String ITEM = "jvm.flags";
    static final String PRE_TOUCH = "-XX:+AlwaysPreTouch";
    static final String LARGE_PAGES = "-XX:+UseLargePages";

    public List<CheckResult> check(final CheckContext context)
    {
        final List<String> arguments = context.jvmFlags().arguments();
        final List<String> missing = new ArrayList<>();
        final List<String> reasons = new ArrayList<>();
        if (!arguments.contains(PRE_TOUCH))
        {
            missing.add(PRE_TOUCH);
            reasons.add("heap pages fault in on first use");
        }
        if (hugePagesReserved(context.fs()) && !arguments.contains(LARGE_PAGES))
        {
            missing.add(LARGE_PAGES);
            reasons.add("hugepages are reserved but the heap does not use them");
        }
        final Optional<String> xmx = last(arguments, "-Xmx");
        final Optional<String> xms = last(arguments, "-Xms");
        if (xmx.isPresent() && !xmx.equals(xms))
        {
            missing.add("-Xms" + xmx.get());
            reasons.add("-Xms below -Xmx lets the heap resize under load");
        }

        final String found = context.jvmFlags().source() + ": " + summary(arguments);
        if (missing.isEmpty())
        {
            return List.of(CheckResult.ok(ITEM, found));
        }
        final String flags = String.join(" ", missing);
        return List.of(CheckResult.manual(Status.WARN, ITEM,
            found + "; missing " + flags + " (" + String.join("; ", reasons) + ")",
            "add '" + flags + "' to etc/jvm.args, or per run: VERBUS_JAVA_OPTS=\"" + flags + "\" ./verbus <command>"));
    }

    /**
     * The heap and -XX flags in full; the many --add-opens style flags only counted.
     */
    static String summary(final List<String> arguments)
    {
        final List<String> shown = new ArrayList<>();
        int others = 0;
        for (final String argument : arguments)
        {
            if (argument.startsWith("-X"))
            {
                shown.add(argument);
            }
            else
            {
                others++;
            }
        }
        if (shown.isEmpty() && others == 0)
        {
            return "no flags";
        }
        return (shown.isEmpty() ? "no -X/-XX flags" : String.join(" ", shown)) +
            (others == 0 ? "" : " (+" + others + " module/access flags)");
    }

    private static Optional<String> last(final List<String> arguments, final String prefix)
    {
        Optional<String> value = Optional.empty();
        for (final String argument : arguments)
        {
            if (argument.startsWith(prefix) && argument.length() > prefix.length())
            {
                value = Optional.of(argument.substring(prefix.length()));
            }
        }
        return value;
    }

    private static boolean hugePagesReserved(final HostFs fs)
    {
        for (final String dir : List.of(HugePageCheck.DIR_2M, HugePageCheck.DIR_1G))
        {
            if (RdmaInventory.parseIntOrMinusOne(fs.read(dir + "/nr_hugepages").orElse("0")) > 0)
            {
                return true;
            }
        }
        return false;
    }
}
