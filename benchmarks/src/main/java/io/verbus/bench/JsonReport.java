package io.verbus.bench;

import java.util.Locale;

/**
 * The run as JSON: the machine, then one object per contender, part and size, with percentiles in nanoseconds,
 * messages per second, and the reason for anything that did not run. Written by hand to keep the harness free of a
 * JSON library.
 */
public final class JsonReport
{
    private JsonReport()
    {
    }

    /**
     * @param report the run.
     * @return the JSON document.
     */
    public static String render(final BenchReport report)
    {
        final StringBuilder out = new StringBuilder(8192);
        final MachineInfo machine = report.machine();
        out.append("{\n");
        field(out, 1, "tool", "verbus bench").append(",\n");
        field(out, 1, "startedAt", report.startedAt().toString()).append(",\n");
        indent(out, 1).append("\"quick\": ").append(report.quick()).append(",\n");
        indent(out, 1).append("\"machine\": {\n");
        indent(out, 2).append("\"nproc\": ").append(machine.cpus()).append(",\n");
        field(out, 2, "cpuModel", machine.cpuModel()).append(",\n");
        field(out, 2, "jdk", machine.jdk()).append(",\n");
        field(out, 2, "os", machine.os()).append(",\n");
        field(out, 2, "threads", report.pinning()).append(",\n");
        field(out, 2, "plan", report.plan()).append(",\n");
        field(out, 2, "loadAverageAtStart", machine.loadAverage()).append(",\n");
        field(out, 2, "loadAverageAtEnd", report.loadAverageAtEnd()).append('\n');
        indent(out, 1).append("},\n");
        indent(out, 1).append("\"results\": [");
        boolean first = true;
        for (final BenchResult result : report.results())
        {
            out.append(first ? "\n" : ",\n");
            first = false;
            result(out, result);
        }
        out.append('\n');
        indent(out, 1).append("]\n");
        out.append("}\n");
        return out.toString();
    }

    private static void result(final StringBuilder out, final BenchResult result)
    {
        indent(out, 2).append("{ ");
        inline(out, "part", result.part()).append(", ");
        inline(out, "contender", result.contender()).append(", ");
        inline(out, "provider", result.provider()).append(", ");
        out.append("\"sizeBytes\": ").append(result.sizeBytes()).append(", ");
        inline(out, "status", result.status().label());
        if (!result.ok())
        {
            out.append(", ");
            inline(out, "reason", result.reason());
        }
        else
        {
            out.append(", \"messages\": ").append(result.messages());
            out.append(", \"elapsedNs\": ").append(result.elapsedNs());
            if (null != result.histogram())
            {
                out.append(", \"p50Ns\": ").append(result.valueAtPercentileNs(50.0));
                out.append(", \"p90Ns\": ").append(result.valueAtPercentileNs(90.0));
                out.append(", \"p99Ns\": ").append(result.valueAtPercentileNs(99.0));
                out.append(", \"p999Ns\": ").append(result.valueAtPercentileNs(99.9));
                out.append(", \"maxNs\": ").append(result.maxNs());
                out.append(", \"meanNs\": ").append(number(result.histogram().getMean()));
            }
            out.append(", \"messagesPerSecond\": ").append(number(result.messagesPerSecond()));
            out.append(", \"megabytesPerSecond\": ").append(number(result.megabytesPerSecond()));
            if (result.cpuNsPerMessage() >= 0)
            {
                out.append(", \"cpuNsPerMessage\": ").append(number(result.cpuNsPerMessage()));
            }
        }
        out.append(" }");
    }

    private static StringBuilder field(final StringBuilder out, final int depth, final String name, final String value)
    {
        return inline(indent(out, depth), name, value);
    }

    private static StringBuilder inline(final StringBuilder out, final String name, final String value)
    {
        return quote(quote(out, name).append(": "), value);
    }

    private static StringBuilder indent(final StringBuilder out, final int depth)
    {
        return out.append("  ".repeat(depth));
    }

    private static String number(final double value)
    {
        if (Double.isNaN(value) || Double.isInfinite(value))
        {
            return "null";
        }
        return String.format(Locale.ROOT, "%.3f", value);
    }

    /**
     * Appends {@code value} as a JSON string, escaping quotes, backslashes and control characters.
     */
    static StringBuilder quote(final StringBuilder out, final String value)
    {
        out.append('"');
        for (int i = 0; i < value.length(); i++)
        {
            final char c = value.charAt(i);
            switch (c)
            {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                case '\n' -> out.append("\\n");
                case '\r' -> out.append("\\r");
                case '\t' -> out.append("\\t");
                default ->
                {
                    if (c < 0x20)
                    {
                        out.append(String.format(Locale.ROOT, "\\u%04x", (int)c));
                    }
                    else
                    {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"');
    }
}
