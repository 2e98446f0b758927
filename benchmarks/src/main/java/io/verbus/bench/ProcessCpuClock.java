package io.verbus.bench;

import java.lang.management.ManagementFactory;
import java.lang.management.OperatingSystemMXBean;

/**
 * CPU time of the whole process (all threads, user + system), so work a contender hides in helper threads (a
 * provider's I/O thread, a driver agent, the kernel's TCP stack on the caller's time) is counted too.
 */
public final class ProcessCpuClock
{
    private static final com.sun.management.OperatingSystemMXBean OS_BEAN = bean();

    private ProcessCpuClock()
    {
    }

    /**
     * @return process CPU time in nanoseconds, or -1 when the JVM does not offer it.
     */
    public static long cpuTimeNs()
    {
        return null == OS_BEAN ? -1 : OS_BEAN.getProcessCpuTime();
    }

    private static com.sun.management.OperatingSystemMXBean bean()
    {
        final OperatingSystemMXBean bean = ManagementFactory.getOperatingSystemMXBean();
        return bean instanceof com.sun.management.OperatingSystemMXBean sunBean ? sunBean : null;
    }
}
