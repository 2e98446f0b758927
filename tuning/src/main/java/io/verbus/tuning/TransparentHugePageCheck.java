package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * {@code mem.thp}: transparent hugepages set to {@code always} let khugepaged and direct compaction stall any thread
 * that touches memory. {@code madvise} (only where asked) or {@code never} keeps them out of the hot path; Verbus's
 * rings use explicit hugetlbfs pages instead.
 */
public final class TransparentHugePageCheck implements HostCheck
{
    static final String ITEM = "mem.thp";
    static final String DIR = "/sys/kernel/mm/transparent_hugepage";

    public List<CheckResult> check(final CheckContext context)
    {
        final Optional<String> enabled = context.fs().read(DIR + "/enabled").map(TransparentHugePageCheck::selected);
        final Optional<String> defrag = context.fs().read(DIR + "/defrag").map(TransparentHugePageCheck::selected);
        if (enabled.isEmpty())
        {
            return List.of(CheckResult.absent(ITEM,
                "no " + DIR + ": the kernel has no transparent hugepages, nothing can stall on them",
                CheckResult.NO_FIX));
        }

        final String found = "enabled=" + enabled.get() + ", defrag=" + defrag.orElse("unknown");
        final List<String> commands = new ArrayList<>();
        if ("always".equals(enabled.get()))
        {
            commands.add("echo madvise > " + DIR + "/enabled");
        }
        if (defrag.isPresent() && "always".equals(defrag.get()))
        {
            commands.add("echo madvise > " + DIR + "/defrag");
        }
        if (commands.isEmpty())
        {
            return List.of(CheckResult.ok(ITEM, found));
        }
        return List.of(CheckResult.runnable(Status.WARN, ITEM,
            found + ": 'always' lets page collapse and compaction stall threads at random", commands));
    }

    /**
     * sysfs prints every choice with the selected one in brackets: {@code always [madvise] never}.
     */
    static String selected(final String choices)
    {
        final int open = choices.indexOf('[');
        final int close = choices.indexOf(']', open + 1);
        return open >= 0 && close > open ? choices.substring(open + 1, close) : choices.strip();
    }
}
