package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code mem.damon}: a running DAMON worker ({@code kdamond}, the kernel's data access monitor, or the DAMON-based
 * reclaim and LRU-sort modules) samples page accesses in slices of milliseconds on whatever CPU it is scheduled on.
 * On the 2-CPU build VM, where something outside Verbus had started one, {@code perf sched} counted 7-9 runs of
 * 1.6-2.5 ms per 4 s beside the demo's two spinning threads: each run is a spinner's core for that long, the
 * millisecond p99.9 of the tick-to-trade. Whoever started it may need it (a VM's memory manager), so the fix is a
 * decision, never run by {@code tune apply}.
 */
public final class DamonCheck implements HostCheck
{
    static final String ITEM = "mem.damon";
    static final String KDAMONDS = "/sys/kernel/mm/damon/admin/kdamonds";
    static final String[] MODULES = { "damon_reclaim", "damon_lru_sort" };

    public List<CheckResult> check(final CheckContext context)
    {
        final HostFs fs = context.fs();
        final boolean sysfs = fs.isDirectory(KDAMONDS);
        final List<String> running = new ArrayList<>();
        final List<String> commands = new ArrayList<>();
        for (final String kdamond : fs.list(KDAMONDS))
        {
            final String state = KDAMONDS + "/" + kdamond + "/state";
            if (fs.read(state).map(String::strip).filter("on"::equals).isPresent())
            {
                running.add("kdamond " + kdamond);
                commands.add("echo off > " + state);
            }
        }
        boolean modules = false;
        for (final String module : MODULES)
        {
            final String enabled = "/sys/module/" + module + "/parameters/enabled";
            final Optional<String> value = fs.read(enabled).map(String::strip);
            modules |= value.isPresent();
            if (value.filter("Y"::equals).isPresent())
            {
                running.add(module);
                commands.add("echo N > " + enabled);
            }
        }

        if (!sysfs && !modules)
        {
            return List.of(CheckResult.absent(ITEM, "no DAMON in this kernel (no " + KDAMONDS + ")",
                CheckResult.NO_FIX));
        }
        if (running.isEmpty())
        {
            return List.of(CheckResult.ok(ITEM, "no DAMON worker running"));
        }
        return List.of(CheckResult.manual(Status.WARN, ITEM, String.join(", ", running) +
            " running: it takes a core for milliseconds at a time (1.6-2.5 ms slices measured), a spinning " +
            "thread's tail on any core it shares", "if nothing on this host needs it: " + String.join("; ", commands) +
            "; else keep the spinning threads on isolated cores"));
    }
}
