package io.verbus.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Facts about the machine a run measured, printed above the table and written into the JSON: figures mean nothing
 * without them.
 *
 * @param cpus        online CPUs seen by the JVM (what {@code nproc} prints).
 * @param cpuModel    the first "model name" of /proc/cpuinfo.
 * @param jdk         vendor, VM and version of the running JDK.
 * @param os          kernel name, version and architecture.
 * @param loadAverage the 1, 5 and 15 minute load averages from /proc/loadavg, or "unknown".
 */
public record MachineInfo(int cpus, String cpuModel, String jdk, String os, String loadAverage)
{
    public static MachineInfo current()
    {
        return new MachineInfo(
            Runtime.getRuntime().availableProcessors(),
            readCpuModel(),
            System.getProperty("java.vm.vendor") + " " + System.getProperty("java.vm.name") + " " +
                System.getProperty("java.runtime.version"),
            System.getProperty("os.name") + " " + System.getProperty("os.version") + " " +
                System.getProperty("os.arch"),
            currentLoadAverage());
    }

    /** @return the load averages now, as "1.23 0.98 0.50", or "unknown". */
    public static String currentLoadAverage()
    {
        try
        {
            final String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return fields.length >= 3 ? fields[0] + " " + fields[1] + " " + fields[2] : "unknown";
        }
        catch (final IOException | RuntimeException ex)
        {
            return "unknown";
        }
    }

    private static String readCpuModel()
    {
        try
        {
            final List<String> lines = Files.readAllLines(Path.of("/proc/cpuinfo"));
            for (final String line : lines)
            {
                if (line.startsWith("model name"))
                {
                    return line.substring(line.indexOf(':') + 1).trim();
                }
            }
            return "unknown";
        }
        catch (final IOException | RuntimeException ex)
        {
            return "unknown";
        }
    }
}
