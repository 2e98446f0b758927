package io.verbus.tuning;

import java.util.List;

/**
 * {@code cpu.isolcpus}, {@code cpu.nohz_full}, {@code cpu.rcu_nocbs}: the CPUs that run spinning agents should be
 * out of the scheduler's balancing, free of the periodic tick, and free of RCU callbacks, or the kernel steals them
 * for microseconds at a time.
 */
public final class CpuIsolationCheck implements HostCheck
{
    static final String ISOLCPUS = "cpu.isolcpus";
    static final String NOHZ_FULL = "cpu.nohz_full";
    static final String RCU_NOCBS = "cpu.rcu_nocbs";

    public List<CheckResult> check(final CheckContext context)
    {
        if (context.onlineCpus().size() == 1)
        {
            final String detail =
                "only 1 CPU online: nothing can be isolated, the spinning thread shares it with the OS";
            final String fix = "run latency work on a host with at least 2 cores";
            return List.of(
                CheckResult.manual(Status.WARN, ISOLCPUS, detail, fix),
                CheckResult.manual(Status.WARN, NOHZ_FULL, detail, fix),
                CheckResult.manual(Status.WARN, RCU_NOCBS, detail, fix));
        }

        final CpuSet target = target(context);
        return List.of(isolcpus(context, target), nohzFull(context, target), rcuNocbs(context, target));
    }

    /**
     * The CPUs that should be isolated: those already isolated or pinned, else a suggestion.
     */
    static CpuSet target(final CheckContext context)
    {
        final CpuSet latencyCpus = context.latencyCpus();
        return latencyCpus.isEmpty() ? context.suggestedIsolatedCpus() : latencyCpus;
    }

    private static CheckResult isolcpus(final CheckContext context, final CpuSet target)
    {
        final CpuSet isolated = context.isolatedCpus();
        final CpuSet pinned = context.pinnedCpus();
        if (isolated.isEmpty())
        {
            return CheckResult.manual(Status.WARN, ISOLCPUS,
                "no isolated CPUs: spinning agents share CPUs with every other task",
                Grub.addKernelParameters("isolcpus=" + target));
        }
        if (!isolated.containsAll(pinned))
        {
            return CheckResult.manual(Status.WARN, ISOLCPUS,
                "CPUs " + isolated + " isolated but pinned CPUs " + pinned.minus(isolated) + " are not",
                Grub.addKernelParameters("isolcpus=" + isolated.union(pinned)) +
                " (or pin to isolated CPUs: --cpus " + isolated + ")");
        }
        return CheckResult.ok(ISOLCPUS, "CPUs " + isolated + " isolated" +
            (pinned.isEmpty() ? "" : ", covering pinned CPUs " + pinned));
    }

    private static CheckResult nohzFull(final CheckContext context, final CpuSet target)
    {
        final String sysfsPath = CheckContext.CPU_DIR + "/nohz_full";
        final boolean kernelSupports = context.fs().exists(sysfsPath);
        final CpuSet nohzFull = nohzFullCpus(context);
        final String fix = Grub.addKernelParameters("nohz_full=" + target);
        if (nohzFull.isEmpty())
        {
            return CheckResult.manual(Status.WARN, NOHZ_FULL,
                "not set" + (kernelSupports ? "" : " (no " + sysfsPath + ": the kernel may lack CONFIG_NO_HZ_FULL)") +
                ": the scheduler tick interrupts spinning CPUs up to 1000 times a second", fix);
        }
        if (!nohzFull.containsAll(target))
        {
            return CheckResult.manual(Status.WARN, NOHZ_FULL,
                "tickless on CPUs " + nohzFull + " but not on latency CPUs " + target.minus(nohzFull), fix);
        }
        return CheckResult.ok(NOHZ_FULL, "tickless on CPUs " + nohzFull);
    }

    private static CheckResult rcuNocbs(final CheckContext context, final CpuSet target)
    {
        final CpuSet explicit = context.cmdline().cpuList("rcu_nocbs");
        // nohz_full CPUs are also RCU-callback-free: the kernel implies rcu_nocbs for them.
        final CpuSet nohzFull = nohzFullCpus(context);
        final CpuSet covered = explicit.union(nohzFull);
        final String fix = Grub.addKernelParameters("rcu_nocbs=" + target);
        if (covered.isEmpty())
        {
            return CheckResult.manual(Status.WARN, RCU_NOCBS,
                "not set: RCU callbacks run on every CPU, spinning ones included", fix);
        }
        if (!covered.containsAll(target))
        {
            return CheckResult.manual(Status.WARN, RCU_NOCBS,
                "callback-free CPUs " + covered + " miss latency CPUs " + target.minus(covered), fix);
        }
        return CheckResult.ok(RCU_NOCBS, "no RCU callbacks on CPUs " + covered +
            (explicit.containsAll(covered) ? "" : " (" + nohzFull + " implied by nohz_full)"));
    }

    static CpuSet nohzFullCpus(final CheckContext context)
    {
        CpuSet sysfs;
        try
        {
            sysfs = CpuSet.parse(context.fs().read(CheckContext.CPU_DIR + "/nohz_full").orElse(""));
        }
        catch (final IllegalArgumentException ex)
        {
            sysfs = CpuSet.EMPTY;
        }
        return sysfs.union(context.cmdline().cpuList("nohz_full"));
    }
}
