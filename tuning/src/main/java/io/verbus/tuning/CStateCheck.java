package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code cpu.cstates}: idle states with a long exit latency (C1E, C6 ...) make a waiting CPU slow to wake.
 * Reads {@code /sys/devices/system/cpu/cpuN/cpuidle/stateK/{name,latency,disable}} and the kernel command line.
 */
public final class CStateCheck implements HostCheck
{
    static final String ITEM = "cpu.cstates";

    /** Exit latency above which an idle state costs a latency-sensitive host (C1 is 1-2 us, C1E already 10 us). */
    static final int MAX_EXIT_LATENCY_US = 2;

    public List<CheckResult> check(final CheckContext context)
    {
        final HostFs fs = context.fs();
        if ("poll".equals(context.cmdline().get("idle").orElse("")))
        {
            return List.of(CheckResult.ok(ITEM, "idle=poll on the kernel command line: CPUs never enter a C-state"));
        }

        final Map<Integer, DeepState> deepStates = new TreeMap<>();
        boolean anyStates = false;
        String deepestAllowed = null;
        int deepestAllowedUs = -1;
        for (final int cpu : CpuGovernorCheck.cpus(context))
        {
            final String cpuIdleDir = CheckContext.CPU_DIR + "/cpu" + cpu + "/cpuidle";
            for (final String stateName : fs.list(cpuIdleDir))
            {
                if (!stateName.matches("state[0-9]+"))
                {
                    continue;
                }
                anyStates = true;
                final String stateDir = cpuIdleDir + "/" + stateName;
                final int index = Integer.parseInt(stateName.substring(5));
                final int latencyUs = RdmaInventory.parseIntOrMinusOne(fs.read(stateDir + "/latency").orElse("-1"));
                final boolean disabled = "1".equals(fs.read(stateDir + "/disable").orElse("0"));
                if (!disabled && latencyUs > MAX_EXIT_LATENCY_US)
                {
                    final String name = fs.read(stateDir + "/name").orElse(stateName);
                    deepStates.computeIfAbsent(index, (i) -> new DeepState(name, latencyUs)).add(cpu);
                }
                else if (!disabled && latencyUs > deepestAllowedUs)
                {
                    deepestAllowedUs = latencyUs;
                    deepestAllowed = fs.read(stateDir + "/name").orElse(stateName);
                }
            }
        }

        if (!anyStates)
        {
            final String driver = fs.read(CheckContext.CPU_DIR + "/cpuidle/current_driver").orElse("none");
            return List.of(CheckResult.absent(ITEM,
                "no cpuidle states (driver: " + driver + "): idle is left to the hypervisor or firmware",
                "none here; on bare metal: " +
                Grub.addKernelParameters("intel_idle.max_cstate=1 processor.max_cstate=1")));
        }

        if (deepStates.isEmpty())
        {
            return List.of(CheckResult.ok(ITEM, null == deepestAllowed ? "every idle state is disabled" :
                "deepest enabled idle state " + deepestAllowed + " exits in " + deepestAllowedUs + " us (limit " +
                MAX_EXIT_LATENCY_US + " us)"));
        }

        final List<String> found = new ArrayList<>();
        final List<String> commands = new ArrayList<>();
        deepStates.forEach((index, state) ->
        {
            found.add(state.name + " (" + state.latencyUs + " us exit) on CPUs " + state.cpus);
            commands.add("for d in /sys/devices/system/cpu/cpu[0-9]*/cpuidle/state" + index +
                "/disable; do echo 1 > \"$d\"; done");
        });
        return List.of(CheckResult.runnable(Status.WARN, ITEM,
            "deep idle states enabled: " + String.join(", ", found) + "; to keep it across reboots add " +
            "intel_idle.max_cstate=1 processor.max_cstate=1 to the kernel command line", commands));
    }

    private static final class DeepState
    {
        private final String name;
        private final int latencyUs;
        private CpuSet cpus = CpuSet.EMPTY;

        private DeepState(final String name, final int latencyUs)
        {
            this.name = name;
            this.latencyUs = latencyUs;
        }

        private DeepState add(final int cpu)
        {
            cpus = cpus.union(CpuSet.of(cpu));
            return this;
        }
    }
}
