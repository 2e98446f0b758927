package io.verbus.bench;

import java.lang.foreign.Arena;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.StructLayout;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.VarHandle;
import java.util.Optional;

/**
 * Pins the calling thread to one CPU with Linux {@code sched_setaffinity(0, ...)} through the FFM API, so the
 * pinger and the ponger each own a core and never migrate onto each other's.
 */
public final class ThreadAffinity
{
    /** glibc's cpu_set_t: 1024 bits. */
    private static final int CPU_SET_BYTES = 128;
    private static final MethodHandle SCHED_SETAFFINITY;
    private static final StructLayout CAPTURE_LAYOUT = Linker.Option.captureStateLayout();
    private static final VarHandle ERRNO = CAPTURE_LAYOUT.varHandle(
        java.lang.foreign.MemoryLayout.PathElement.groupElement("errno"));

    static
    {
        final Linker linker = Linker.nativeLinker();
        final Optional<MemorySegment> symbol = linker.defaultLookup().find("sched_setaffinity");
        SCHED_SETAFFINITY = symbol.map(address -> linker.downcallHandle(
            address,
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG, ValueLayout.ADDRESS),
            Linker.Option.captureCallState("errno"))).orElse(null);
    }

    private ThreadAffinity()
    {
    }

    /**
     * @return true when this platform offers sched_setaffinity.
     */
    public static boolean isSupported()
    {
        return null != SCHED_SETAFFINITY;
    }

    /**
     * Pins the calling thread to {@code cpu}.
     *
     * @param cpu the CPU number, or -1 to leave the thread where it is.
     * @throws IllegalStateException naming the CPU and errno when the kernel refuses.
     */
    public static void pinCurrentThread(final int cpu)
    {
        if (cpu < 0)
        {
            return;
        }
        if (cpu >= CPU_SET_BYTES * 8)
        {
            throw new IllegalArgumentException("cpu " + cpu + " is beyond a cpu_set_t");
        }
        if (!isSupported())
        {
            throw new IllegalStateException("sched_setaffinity is not available on this platform");
        }
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment mask = arena.allocate(CPU_SET_BYTES, 8);
            final long word = mask.getAtIndex(ValueLayout.JAVA_LONG, cpu / 64);
            mask.setAtIndex(ValueLayout.JAVA_LONG, cpu / 64, word | (1L << (cpu % 64)));
            final MemorySegment capture = arena.allocate(CAPTURE_LAYOUT);
            final int result = (int)SCHED_SETAFFINITY.invokeExact(capture, 0, (long)CPU_SET_BYTES, mask);
            if (0 != result)
            {
                throw new IllegalStateException(
                    "sched_setaffinity(cpu " + cpu + ") failed, errno " + (int)ERRNO.get(capture, 0L));
            }
        }
        catch (final RuntimeException | Error ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("sched_setaffinity(cpu " + cpu + ") failed", ex);
        }
    }
}
