package io.verbus.tuning;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The booted kernel's parameters from {@code /proc/cmdline}: what isolcpus, rcu_nocbs and C-state limits were set to.
 */
public final class KernelCommandLine
{
    private final Map<String, String> parameters = new LinkedHashMap<>();

    public KernelCommandLine(final String cmdline)
    {
        for (final String token : cmdline.strip().split("\\s+"))
        {
            if ("--".equals(token))
            {
                break; // what follows is for init, not the kernel
            }
            if (!token.isEmpty())
            {
                final int equals = token.indexOf('=');
                if (equals < 0)
                {
                    parameters.put(token, "");
                }
                else
                {
                    parameters.put(token.substring(0, equals), token.substring(equals + 1));
                }
            }
        }
    }

    public static KernelCommandLine read(final HostFs fs)
    {
        return new KernelCommandLine(fs.read("/proc/cmdline").orElse(""));
    }

    public Optional<String> get(final String name)
    {
        return Optional.ofNullable(parameters.get(name));
    }

    /**
     * @param name a CPU-list parameter such as {@code isolcpus=managed_irq,domain,2-5} or {@code rcu_nocbs=2-5}.
     * @return the CPUs it names, skipping isolcpus's leading flags; empty when unset or unparsable.
     */
    public CpuSet cpuList(final String name)
    {
        final String value = parameters.get(name);
        if (null == value)
        {
            return CpuSet.EMPTY;
        }

        final StringBuilder cpus = new StringBuilder();
        for (final String part : value.split(","))
        {
            if (!part.isEmpty() && Character.isDigit(part.charAt(0)))
            {
                if (!cpus.isEmpty())
                {
                    cpus.append(',');
                }
                cpus.append(part);
            }
        }

        try
        {
            return CpuSet.parse(cpus.toString());
        }
        catch (final IllegalArgumentException ex)
        {
            return CpuSet.EMPTY;
        }
    }
}
