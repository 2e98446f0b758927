package io.verbus.driver;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemoryLayout;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.BitSet;

/**
 * Pins the calling thread to one CPU with Linux's {@code sched_setaffinity}, called through java.lang.foreign
 * (no JNA, no native library of our own).
 */
public final class Affinity
{
    /** Value meaning "do not pin". */
    public static final int NO_CPU = -1;

    /** Bytes of the CPU mask passed to the kernel: 1024 CPUs, glibc's cpu_set_t. */
    private static final int CPU_SET_BYTES = 128;

    private static final Path POSSIBLE_CPUS_PATH = Path.of("/sys/devices/system/cpu/possible");
    private static final Path ONLINE_CPUS_PATH = Path.of("/sys/devices/system/cpu/online");
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO_HANDLE =
        CAPTURE_LAYOUT.varHandle(MemoryLayout.PathElement.groupElement("errno"));

    private Affinity()
    {
    }

    /**
     * Checks a configured CPU exists before any thread is started.
     *
     * @param cpu     a CPU number or {@link #NO_CPU}.
     * @param setting the name of the setting, for the error.
     * @throws IllegalArgumentException when the CPU is not online on this machine.
     */
    public static void checkCpu(final int cpu, final String setting)
    {
        if (NO_CPU == cpu)
        {
            return;
        }
        final BitSet online = onlineCpus();
        if (cpu < 0 || cpu >= CPU_SET_BYTES * 8 || !online.get(cpu))
        {
            throw new IllegalArgumentException(
                setting + "=" + cpu + ": CPU " + cpu + " does not exist or is offline; " +
                "this machine's online CPUs are " + format(online) + " (use -1 for no pinning)");
        }
    }

    /**
     * Pins the calling thread to one CPU.
     *
     * @param cpu a CPU number.
     * @throws IllegalArgumentException when the CPU does not exist.
     * @throws IllegalStateException    when the kernel refuses (e.g. the CPU is outside this process's cpuset).
     */
    public static void pinCurrentThread(final int cpu)
    {
        checkCpu(cpu, "cpu");
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            mask.set(ValueLayout.JAVA_BYTE, cpu / 8, (byte)(1 << (cpu % 8)));
            final MemorySegment capture = arena.allocate(CAPTURE_LAYOUT);
            final int result = (int)Native.SCHED_SETAFFINITY.invokeExact(capture, 0, (long)CPU_SET_BYTES, mask);
            if (0 != result)
            {
                final int errno = (int)ERRNO_HANDLE.get(capture, 0L);
                throw new IllegalStateException(
                    "sched_setaffinity to CPU " + cpu + " failed with errno " + errno +
                    (22 == errno ? " (EINVAL: the CPU is not in this process's allowed set " +
                        format(allowedCpus()) + ")" : ""));
            }
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("sched_setaffinity call failed", ex);
        }
    }

    /** @return the CPUs the calling thread may run on, from {@code sched_getaffinity}. */
    public static BitSet allowedCpus()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            final MemorySegment capture = arena.allocate(CAPTURE_LAYOUT);
            final int result = (int)Native.SCHED_GETAFFINITY.invokeExact(capture, 0, (long)CPU_SET_BYTES, mask);
            if (0 != result)
            {
                throw new IllegalStateException(
                    "sched_getaffinity failed with errno " + (int)ERRNO_HANDLE.get(capture, 0L));
            }
            return BitSet.valueOf(mask.toArray(ValueLayout.JAVA_BYTE));
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("sched_getaffinity call failed", ex);
        }
    }

    /** @return the online CPUs from sysfs, or 0..availableProcessors-1 where sysfs is missing. */
    public static BitSet onlineCpus()
    {
        for (final Path path : new Path[]{ ONLINE_CPUS_PATH, POSSIBLE_CPUS_PATH })
        {
            try
            {
                return parseCpuList(Files.readString(path).trim());
            }
            catch (final IOException | RuntimeException ignore)
            {
                // Try the next source.
            }
        }
        final BitSet cpus = new BitSet();
        cpus.set(0, Runtime.getRuntime().availableProcessors());
        return cpus;
    }

    /**
     * @param list in the kernel's format, e.g. {@code 0-3,8,10-11}.
     * @return the CPUs listed.
     */
    public static BitSet parseCpuList(final String list)
    {
        final BitSet cpus = new BitSet();
        for (final String part : list.split(","))
        {
            final String range = part.trim();
            if (range.isEmpty())
            {
                continue;
            }
            final int dash = range.indexOf('-');
            if (dash < 0)
            {
                cpus.set(Integer.parseInt(range));
            }
            else
            {
                cpus.set(Integer.parseInt(range.substring(0, dash)), Integer.parseInt(range.substring(dash + 1)) + 1);
            }
        }
        return cpus;
    }

    private static String format(final BitSet cpus)
    {
        return cpus.toString().replace("{", "[").replace("}", "]");
    }

    /** Lazily bound so that merely validating a setting never touches the linker. */
    private static final class Native
    {
        static final MethodHandle SCHED_SETAFFINITY = bind("sched_setaffinity");
        static final MethodHandle SCHED_GETAFFINITY = bind("sched_getaffinity");

        @SuppressWarnings("restricted")
        private static MethodHandle bind(final String name)
        {
            final Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(
                linker.defaultLookup().find(name).orElseThrow(() -> new IllegalStateException(name + " not found")),
                FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG,
                    ValueLayout.ADDRESS),
                Linker.Option.captureCallState("errno"));
        }
    }
}
