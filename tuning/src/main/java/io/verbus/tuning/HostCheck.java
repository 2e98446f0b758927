package io.verbus.tuning;

import java.util.List;

/**
 * One family of report lines (CPU frequency, hugepages, RDMA ports ...).
 */
@FunctionalInterface
public interface HostCheck
{
    /**
     * @param context the host and the user's assumptions.
     * @return the lines for this family, in a stable order; never empty.
     */
    List<CheckResult> check(CheckContext context);
}
