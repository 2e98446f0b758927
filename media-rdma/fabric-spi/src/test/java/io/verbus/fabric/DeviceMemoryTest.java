package io.verbus.fabric;

import io.verbus.common.HugePages;
import io.verbus.test.ProcessUser;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Device memory is retired by quarantine: after {@link DeviceMemory#retireAll()} the old addresses read zeros and take
 * writes (an unmap would kill this JVM with SIGSEGV), and the memory is no longer the file's.
 */
class DeviceMemoryTest
{
    @TempDir
    Path dir;

    @Test
    void shouldLeaveZeroPagesUnderAnonymousMemoryAfterRetiring()
    {
        final DeviceMemory memory = new DeviceMemory();
        final MemorySegment ring = memory.allocateAnonymous(3 * 65_536 + 104);
        assertEquals(0, ring.address() & 4095, "page aligned");
        assertEquals(0L, ring.get(ValueLayout.JAVA_LONG, 4096), "zeroed");
        ring.set(ValueLayout.JAVA_LONG, 4096, 0x5EEDL);
        ring.set(ValueLayout.JAVA_LONG, ring.byteSize() - 8, 0x5EEDL);

        memory.retireAll();

        assertEquals(0L, ring.get(ValueLayout.JAVA_LONG, 4096));
        assertEquals(0L, ring.get(ValueLayout.JAVA_LONG, ring.byteSize() - 8));
        ring.set(ValueLayout.JAVA_LONG, 4096, 1L); // a stale writer lands in private memory
        assertEquals(0, memory.mappingCount());
        assertThrows(IllegalStateException.class, () -> memory.allocateAnonymous(4096));
    }

    @Test
    void shouldDetachAFileMappingFromItsFileWhenRetiring() throws Exception
    {
        final Path file = dir.resolve("ring");
        final DeviceMemory memory = new DeviceMemory();
        final Arena arena = Arena.ofShared();
        final MemorySegment mapping;
        try (FileChannel channel = FileChannel.open(file,
            Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE)))
        {
            channel.truncate(0);
            channel.write(java.nio.ByteBuffer.wrap(new byte[1]), 8191);
            mapping = channel.map(FileChannel.MapMode.READ_WRITE, 0, 8192, arena);
        }
        memory.add(mapping, arena);
        mapping.set(ValueLayout.JAVA_LONG, 0, 0x5EEDL);

        memory.retireAll();

        assertEquals(0L, mapping.get(ValueLayout.JAVA_LONG, 0), "private zero pages, not the file");
        mapping.set(ValueLayout.JAVA_LONG, 8, 7L);
        try (FileChannel channel = FileChannel.open(file, StandardOpenOption.READ))
        {
            final java.nio.ByteBuffer bytes = java.nio.ByteBuffer.allocate(16).order(java.nio.ByteOrder.nativeOrder());
            channel.read(bytes, 0);
            assertEquals(0x5EEDL, bytes.getLong(0), "the file kept what was written before");
            assertEquals(0L, bytes.getLong(8), "and nothing written after");
        }
    }

    /**
     * Root only (CI runs as root): with huge pages reserved, a ring of two huge pages takes two of them at allocation
     * and gives them back when retired (the quarantine's zero pages are base pages); then, with none reserved, the
     * same allocation falls back to base pages.
     */
    @Test
    void shouldPutLargeRingsOnHugePagesWhenReservedAndFallBackWhenNot() throws Exception
    {
        final Path nrHugePages = Path.of("/proc/sys/vm/nr_hugepages");
        Assumptions.assumeTrue(Files.isWritable(nrHugePages) && ProcessUser.isRoot(),
            "needs root to reserve huge pages");
        final String originalPages = Files.readString(nrHugePages).trim();
        final long length = 2 * HugePages.defaultPageBytes();
        try
        {
            Files.writeString(nrHugePages, String.valueOf(Long.parseLong(originalPages) + 4));
            final long freeBefore = HugePages.freePages();
            assertTrue(freeBefore >= 2, "the kernel reserved huge pages: " + freeBefore);
            final DeviceMemory memory = new DeviceMemory();
            final MemorySegment ring = memory.allocateAnonymous(length);
            assertEquals(freeBefore - 2, HugePages.freePages(), "two huge pages taken at allocation");
            ring.set(ValueLayout.JAVA_LONG, length - 8, 9L);
            memory.retireAll();
            assertEquals(freeBefore, HugePages.freePages(), "given back when retired");
            assertEquals(0L, ring.get(ValueLayout.JAVA_LONG, length - 8), "quarantined, not unmapped");

            Files.writeString(nrHugePages, originalPages);
            final long freeNone = HugePages.freePages();
            final DeviceMemory fallback = new DeviceMemory();
            final MemorySegment small = fallback.allocateAnonymous(length);
            small.set(ValueLayout.JAVA_LONG, length - 8, 9L);
            assertEquals(freeNone, HugePages.freePages(), "no huge page taken");
            fallback.retireAll();
        }
        finally
        {
            Files.writeString(nrHugePages, originalPages);
        }
    }
}
