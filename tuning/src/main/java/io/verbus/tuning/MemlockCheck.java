package io.verbus.tuning;

import java.util.List;
import java.util.Optional;

/**
 * {@code mem.memlock}: RDMA registration pins the rings, and pinned memory counts against RLIMIT_MEMLOCK
 * ({@code ulimit -l}). Below what the rings need, {@code ibv_reg_mr} fails with ENOMEM at start-up.
 * Read from {@code /proc/self/limits}: the limit this shell hands to Verbus processes it starts.
 */
public final class MemlockCheck implements HostCheck
{
    static final String ITEM = "mem.memlock";
    static final String LIMITS = "/proc/self/limits";
    static final String FIX =
        "echo '* - memlock unlimited' > /etc/security/limits.d/90-verbus-memlock.conf and log in again " +
        "(systemd units: LimitMEMLOCK=infinity; containers: --ulimit memlock=-1)";

    public List<CheckResult> check(final CheckContext context)
    {
        final RingSizing rings = context.rings();
        final Optional<String> softLimit = softLimit(context.fs());
        if (softLimit.isEmpty())
        {
            return List.of(CheckResult.manual(Status.WARN, ITEM,
                "no 'Max locked memory' line in " + LIMITS + ": the memlock limit is unknown", "check: ulimit -l"));
        }

        if ("unlimited".equals(softLimit.get()))
        {
            return List.of(CheckResult.ok(ITEM, "unlimited, rings need " + rings.describe()));
        }

        final long limit;
        try
        {
            limit = Long.parseLong(softLimit.get());
        }
        catch (final NumberFormatException ex)
        {
            return List.of(CheckResult.manual(Status.WARN, ITEM,
                "unreadable memlock limit '" + softLimit.get() + "' in " + LIMITS, "check: ulimit -l"));
        }

        final String found = Bytes.format(limit) + " vs rings' " + rings.describe();
        if (limit >= rings.bytes())
        {
            return List.of(CheckResult.ok(ITEM, found));
        }
        if (context.rdma().isEmpty())
        {
            return List.of(CheckResult.manual(Status.WARN, ITEM,
                found + ": too small to register the rings once an RDMA NIC is used (Verbus's shm and tcp providers " +
                "pin nothing)", FIX));
        }
        return List.of(CheckResult.manual(Status.FAIL, ITEM,
            found + ": registering the rings with the RDMA device will fail (ENOMEM; Soft-RoCE pins too)", FIX));
    }

    /**
     * @return the soft limit column of "Max locked memory": bytes or {@code unlimited}.
     */
    static Optional<String> softLimit(final HostFs fs)
    {
        for (final String line : fs.readLines(LIMITS))
        {
            if (line.startsWith("Max locked memory"))
            {
                final String[] fields = line.substring("Max locked memory".length()).strip().split("\\s+");
                return fields.length > 0 && !fields[0].isEmpty() ? Optional.of(fields[0]) : Optional.empty();
            }
        }
        return Optional.empty();
    }
}
