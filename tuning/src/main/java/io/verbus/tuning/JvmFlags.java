package io.verbus.tuning;

import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.List;

/**
 * The JVM flags the report judges, and where they came from.
 *
 * @param arguments the flags, one per element.
 * @param source    what they are: this JVM's input arguments, or a target's given with {@code --jvm-flags}.
 */
public record JvmFlags(List<String> arguments, String source)
{
    public JvmFlags
    {
        arguments = List.copyOf(arguments);
    }

    /**
     * @return the flags of the running JVM, as RuntimeMXBean reports them: for {@code ./verbus tune} these are
     *         etc/jvm.args plus $VERBUS_JAVA_OPTS, i.e. what every {@code ./verbus} command runs with.
     */
    public static JvmFlags ofThisJvm()
    {
        return new JvmFlags(ManagementFactory.getRuntimeMXBean().getInputArguments(), "this JVM");
    }

    /**
     * @param commandLine a target JVM's flags separated by spaces, e.g. {@code "-Xmx4g -XX:+AlwaysPreTouch"}.
     */
    public static JvmFlags of(final String commandLine)
    {
        final String trimmed = commandLine.strip();
        return new JvmFlags(trimmed.isEmpty() ? List.of() : Arrays.asList(trimmed.split("\\s+")), "--jvm-flags");
    }
}
