package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code cpu.governor}: every CPU's cpufreq governor should be {@code performance}; any other ramps the clock down
 * when idle and back up after the message has already waited.
 */
public final class CpuGovernorCheck implements HostCheck
{
    static final String ITEM = "cpu.governor";
    static final String FIX_COMMAND =
        "for g in /sys/devices/system/cpu/cpu[0-9]*/cpufreq/scaling_governor; do echo performance > \"$g\"; done";

    public List<CheckResult> check(final CheckContext context)
    {
        final Map<String, CpuSet> cpusByGovernor = new TreeMap<>();
        for (final int cpu : cpus(context))
        {
            context.fs().read(CheckContext.CPU_DIR + "/cpu" + cpu + "/cpufreq/scaling_governor").ifPresent(
                (governor) -> cpusByGovernor.merge(governor, CpuSet.of(cpu), CpuSet::union));
        }

        if (cpusByGovernor.isEmpty())
        {
            return List.of(CheckResult.absent(ITEM,
                "no cpufreq under /sys/devices/system/cpu/cpu*/cpufreq: the firmware or hypervisor sets the clock",
                "none here; on bare metal set the BIOS power profile to maximum performance"));
        }

        final List<String> parts = new ArrayList<>();
        cpusByGovernor.forEach((governor, cpus) -> parts.add(governor + " on CPUs " + cpus));
        final String found = String.join(", ", parts);
        if (cpusByGovernor.size() == 1 && cpusByGovernor.containsKey("performance"))
        {
            return List.of(CheckResult.ok(ITEM, found));
        }

        return List.of(CheckResult.runnable(Status.WARN, ITEM,
            found + ": a governor other than performance lowers the clock when idle, the next message pays to raise it",
            List.of(FIX_COMMAND)));
    }

    static int[] cpus(final CheckContext context)
    {
        if (!context.onlineCpus().isEmpty())
        {
            return context.onlineCpus().toArray();
        }
        final List<Integer> cpus = new ArrayList<>();
        for (final String name : context.fs().list(CheckContext.CPU_DIR))
        {
            if (name.matches("cpu[0-9]+"))
            {
                cpus.add(Integer.parseInt(name.substring(3)));
            }
        }
        return cpus.stream().mapToInt(Integer::intValue).toArray();
    }
}
