package io.verbus.fabric;

import io.verbus.common.HugePages;
import io.verbus.common.QuarantinedMemory;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The memory a device hands out through {@link Device#allocateMemory(long)}, each allocation a mapping of its own,
 * retired when the device closes. An application may keep the buffer or {@code Header} a poll handed it (Aeron's API
 * allows it) after its subscription closed, and that buffer is a ring in this memory; so each mapping is quarantined
 * ({@link QuarantinedMemory}: private zero pages at the same addresses, its pages given back) while the process has
 * quarantines left, and only unmapped past that. A stale read then returns zeros instead of killing the JVM.
 */
public final class DeviceMemory
{
    /** Touching one byte a page makes the kernel allocate each page now, before the memory is registered. */
    private static final int TOUCH_STRIDE_BYTES = 4096;

    private record Mapping(MemorySegment segment, Arena arena)
    {
    }

    private static final System.Logger LOGGER = System.getLogger(DeviceMemory.class.getName());
    private static final AtomicBoolean HUGE_PAGE_WARNING_GIVEN = new AtomicBoolean();

    private final List<Mapping> mappings = new ArrayList<>();
    private boolean retired;

    /**
     * Private anonymous memory, zeroed by the kernel and touched page by page here: on huge pages when it is at least
     * one huge page long and the system has them free (fewer TLB misses where the NIC, or the soft NIC's copy, and
     * the poller walk the ring), else on base pages with a warning, once per process.
     *
     * @param length bytes, more than 0.
     * @return {@code length} bytes at the start of a page-aligned mapping of their own.
     */
    public synchronized MemorySegment allocateAnonymous(final long length)
    {
        requireNotRetired();
        MemorySegment mapping = null;
        if (length >= HugePages.defaultPageBytes())
        {
            mapping = QuarantinedMemory.mapAnonymousHuge(length);
            if (null == mapping && !HUGE_PAGE_WARNING_GIVEN.getAndSet(true))
            {
                LOGGER.log(System.Logger.Level.WARNING, "no free huge pages for " + length + " bytes of device " +
                    "memory (rdma rings): using 4 KiB pages, which cost TLB misses on the data path; reserve huge " +
                    "pages with vm.nr_hugepages (as root: echo N > /proc/sys/vm/nr_hugepages). Said once per process.");
            }
        }
        if (null == mapping)
        {
            mapping = QuarantinedMemory.mapAnonymous(length);
        }
        for (long offset = 0; offset < mapping.byteSize(); offset += TOUCH_STRIDE_BYTES)
        {
            mapping.set(ValueLayout.JAVA_BYTE, offset, (byte)0);
        }
        mappings.add(new Mapping(mapping, null));
        return mapping.asSlice(0, length);
    }

    /**
     * Takes a mapping made in an arena of its own (a shared file mapping): it is retired with the others, its arena
     * closed only when it could not be quarantined (closing it would unmap the quarantine).
     *
     * @param mapping the whole mapping.
     * @param arena   the arena that made it and nothing else.
     */
    public synchronized void add(final MemorySegment mapping, final Arena arena)
    {
        requireNotRetired();
        mappings.add(new Mapping(mapping, arena));
    }

    /** @return mappings held (tests). */
    public synchronized int mappingCount()
    {
        return mappings.size();
    }

    /**
     * Quarantines, or past the process's quarantines unmaps, every mapping. Call after the device deregistered its
     * memory regions. Idempotent.
     */
    public synchronized void retireAll()
    {
        retired = true;
        for (final Mapping mapping : mappings)
        {
            if (QuarantinedMemory.reserveRuntimeQuarantine() && QuarantinedMemory.replace(mapping.segment()))
            {
                continue; // the range stays reserved for the process's life; an arena here is deliberately dropped
            }
            if (null != mapping.arena())
            {
                mapping.arena().close();
            }
            else
            {
                QuarantinedMemory.unmap(mapping.segment());
            }
        }
        mappings.clear();
    }

    private void requireNotRetired()
    {
        if (retired)
        {
            throw new IllegalStateException("device memory already retired (device closed)");
        }
    }
}
