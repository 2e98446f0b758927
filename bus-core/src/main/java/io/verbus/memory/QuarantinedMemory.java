package io.verbus.memory;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;

/**
 * Retires a shared mapping without unmapping it: {@code mmap(MAP_FIXED)} puts private, anonymous, zero memory at
 * exactly the same addresses. The shared file's pages are released (the file is unlinked, so its memory goes back
 * to the system) while a stale reference that the application still holds (a {@code BufferClaim}'s buffer, a
 * {@code CountersReader}, a {@code Header}) reads zeros and writes into private memory instead of faulting the JVM.
 * <p>
 * Why this and not a delayed unmap: no delay is long enough for a reference the application may keep for ever, and
 * tracking every outstanding claim would put bookkeeping on the hot path. The price is address space (the range
 * stays reserved, using physical memory only for pages written after the close) and one kernel mapping per region,
 * so Verbus does it only at {@code Verbus.close()}; logs retired while Verbus runs are unmapped after the linger, as
 * in Aeron.
 */
public final class QuarantinedMemory
{
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_FIXED = 0x10;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MAP_NORESERVE = 0x4000;

    /**
     * Regions a process quarantines while it runs (logs retired after their linger, see
     * {@link #reserveRuntimeQuarantine()}): each keeps its address range and one kernel mapping, so past this many,
     * well below Linux's default of 65,530 mappings per process, they are unmapped as in Aeron.
     */
    public static final int MAX_RUNTIME_QUARANTINES = 4096;

    private static final java.util.concurrent.atomic.AtomicInteger RUNTIME_QUARANTINES =
        new java.util.concurrent.atomic.AtomicInteger();

    private QuarantinedMemory()
    {
    }

    /**
     * Takes one of the process's {@link #MAX_RUNTIME_QUARANTINES}: a log retired while Verbus runs is quarantined
     * rather than unmapped while there are any left, so a {@code BufferClaim} or {@code Header} the application still
     * holds writes into private memory instead of killing the JVM with SIGSEGV.
     *
     * @return true when the caller may quarantine one more region.
     */
    public static boolean reserveRuntimeQuarantine()
    {
        int used;
        do
        {
            used = RUNTIME_QUARANTINES.get();
            if (used >= MAX_RUNTIME_QUARANTINES)
            {
                return false;
            }
        }
        while (!RUNTIME_QUARANTINES.compareAndSet(used, used + 1));
        return true;
    }

    /**
     * Replaces the mapping under {@code segment} with anonymous zero memory at the same addresses.
     *
     * @param segment a whole mapping, page aligned.
     * @return true when replaced; false when the kernel refused (the caller should then leave the mapping in place
     * rather than unmap it).
     */
    public static boolean replace(final MemorySegment segment)
    {
        if (0 == segment.byteSize())
        {
            return true;
        }
        try
        {
            final MemorySegment result = (MemorySegment)Native.MMAP.invokeExact(
                MemorySegment.ofAddress(segment.address()), segment.byteSize(), PROT_READ_WRITE,
                MAP_PRIVATE | MAP_FIXED | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0L);
            return result.address() == segment.address();
        }
        catch (final Throwable ex)
        {
            return false;
        }
    }

    /** Bound on first use, so that code that never closes a Verbus never touches the linker. */
    private static final class Native
    {
        static final MethodHandle MMAP = bind();

        @SuppressWarnings("restricted")
        private static MethodHandle bind()
        {
            final Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(
                linker.defaultLookup().find("mmap").orElseThrow(() -> new IllegalStateException("mmap not found")),
                FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS, ValueLayout.JAVA_LONG,
                    ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_LONG));
        }
    }
}
