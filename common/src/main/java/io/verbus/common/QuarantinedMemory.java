package io.verbus.common;

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
 * so regions retired while the process runs (logs after their linger, a closed rdma subscription's rings) take one
 * of at most {@link #MAX_RUNTIME_QUARANTINES} quarantines and are unmapped, as in Aeron, past that.
 * <p>
 * Memory that must be retired this way but is not a file mapping (a fabric device's rings) comes from
 * {@link #mapAnonymous(long)}: its own page-aligned mapping, never shared with the heap, so replacing it touches
 * nothing else.
 */
public final class QuarantinedMemory
{
    private static final int PROT_READ_WRITE = 0x1 | 0x2;
    private static final int MAP_PRIVATE = 0x02;
    private static final int MAP_FIXED = 0x10;
    private static final int MAP_ANONYMOUS = 0x20;
    private static final int MAP_NORESERVE = 0x4000;
    private static final long MAP_FAILED = -1L;
    private static final int MAP_HUGETLB = 0x40000;
    /** Linux's base page on x86-64 (and aarch64's default kernels). */
    private static final long PAGE_BYTES = 4096;

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
        return AtomicBudget.tryTake(RUNTIME_QUARANTINES, MAX_RUNTIME_QUARANTINES);
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

    /**
     * Maps {@code length} bytes (rounded up to whole pages) of private, anonymous, zero memory: a mapping of its own,
     * which {@link #replace(MemorySegment)} can retire or {@link #unmap(MemorySegment)} free.
     *
     * @param length bytes, more than 0.
     * @return the whole mapping, page aligned.
     * @throws OutOfMemoryError when the kernel refuses the mapping.
     */
    public static MemorySegment mapAnonymous(final long length)
    {
        final MemorySegment mapping = map(length, PAGE_BYTES, 0);
        if (null == mapping)
        {
            throw new OutOfMemoryError("cannot map " + length + " bytes of anonymous memory");
        }
        return mapping;
    }

    /**
     * As {@link #mapAnonymous(long)} on huge pages ({@code MAP_HUGETLB}: the system's default size,
     * {@link HugePages#defaultPageBytes()}), the length rounded up to whole huge pages. The kernel reserves the pages
     * when it maps them, so a system without enough free ones ({@code vm.nr_hugepages}) refuses here, not at first
     * touch.
     *
     * @param length bytes, more than 0.
     * @return the whole mapping, or null when the kernel has no huge pages for it.
     */
    public static MemorySegment mapAnonymousHuge(final long length)
    {
        return map(length, HugePages.defaultPageBytes(), MAP_HUGETLB);
    }

    private static MemorySegment map(final long length, final long pageBytes, final int extraFlags)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be > 0: " + length);
        }
        final long mappedLength = (length + pageBytes - 1) & ~(pageBytes - 1);
        final MemorySegment result;
        try
        {
            result = (MemorySegment)Native.MMAP.invokeExact(MemorySegment.NULL, mappedLength, PROT_READ_WRITE,
                MAP_PRIVATE | MAP_ANONYMOUS | extraFlags, -1, 0L);
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("mmap failed: " + ex, ex);
        }
        return MAP_FAILED == result.address() ? null : result.reinterpret(mappedLength);
    }

    /**
     * Unmaps a mapping from {@link #mapAnonymous(long)} (or one already replaced). Nothing may read it afterwards.
     *
     * @param segment the whole mapping.
     */
    public static void unmap(final MemorySegment segment)
    {
        try
        {
            final int ignored = (int)Native.MUNMAP.invokeExact(MemorySegment.ofAddress(segment.address()),
                segment.byteSize());
        }
        catch (final Throwable ex)
        {
            throw new IllegalStateException("munmap failed: " + ex, ex);
        }
    }

    /** Bound on first use, so that code that never closes a Verbus never touches the linker. */
    private static final class Native
    {
        static final MethodHandle MMAP = bind("mmap", FunctionDescriptor.of(ValueLayout.ADDRESS, ValueLayout.ADDRESS,
            ValueLayout.JAVA_LONG, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT,
            ValueLayout.JAVA_LONG));
        static final MethodHandle MUNMAP = bind("munmap", FunctionDescriptor.of(ValueLayout.JAVA_INT,
            ValueLayout.ADDRESS, ValueLayout.JAVA_LONG));

        @SuppressWarnings("restricted")
        private static MethodHandle bind(final String name, final FunctionDescriptor descriptor)
        {
            final Linker linker = Linker.nativeLinker();
            return linker.downcallHandle(
                linker.defaultLookup().find(name).orElseThrow(() -> new IllegalStateException(name + " not found")),
                descriptor);
        }
    }
}
