package io.verbus.memory;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.log.LogBuffers;
import io.verbus.test.ProcessUser;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MemoryMapperTest
{
    private static final Path NR_HUGEPAGES = Path.of("/proc/sys/vm/nr_hugepages");

    @TempDir
    Path tempDir;

    @Test
    void shouldFallBackToSmallPagesWhenHugetlbfsHasNoFreePagesAndUnlinkTheFile() throws IOException
    {
        final Path notMounted = Files.createDirectory(tempDir.resolve("not-hugetlbfs"));
        final MemoryMapper mapper = new MemoryMapper(tempDir.resolve("shm"), notMounted, true);
        if (MemoryMapper.freeHugePages() == 0)
        {
            assertTrue(mapper.hugePagesUnavailableReason(1000).contains("1 huge pages of 2 MiB needed, 0 free"));
        }
        try (MappedRegion region = mapper.map("fallback", 10_000, false))
        {
            assertFalse(region.isHugePages());
            assertEquals(12_288, region.length(), "rounded up to 4 KiB pages");
            assertFalse(Files.exists(region.path()), "an unkept file is unlinked once mapped");
            for (long i = 0; i < region.length(); i += 8)
            {
                assertEquals(0L, region.segment().get(ValueLayout.JAVA_LONG, i));
            }
            region.segment().set(ValueLayout.JAVA_LONG, 4096, 42L);
            assertEquals(42L, region.segment().get(ValueLayout.JAVA_LONG, 4096));
        }
        try (Stream<Path> files = Files.list(tempDir.resolve("shm")))
        {
            assertEquals(0, files.count());
        }
    }

    @Test
    void shouldKeepAFileForOtherProcessesUntilClose()
    {
        final MemoryMapper mapper = new MemoryMapper(tempDir, null, false);
        final MappedRegion region = mapper.map("kept", 4096, true);
        assertTrue(Files.exists(region.path()));
        region.close();
        assertFalse(Files.exists(region.path()));
        assertTrue(region.isClosed());
    }

    @Test
    void shouldRejectBadTermLengthsAndLengths()
    {
        final MemoryMapper mapper = new MemoryMapper(tempDir, null, false);
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> LogBuffers.map(mapper, "bad", 100_000, false));
        assertTrue(ex.getMessage().contains("term length 100000"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> LogBuffers.map(mapper, "small", 32 * 1024, false));
        assertThrows(IllegalArgumentException.class, () -> mapper.map("zero", 0, false));
    }

    /**
     * Root only (CI runs as root): reserves a few 2 MiB pages, mounts a private hugetlbfs, maps a log from it and
     * checks the pages were taken at map time (pre-touched), then restores the page count and unmounts.
     */
    @Test
    void shouldMapLogsFromHugetlbfsWhenMountedWithFreePages() throws Exception
    {
        Assumptions.assumeTrue(ProcessUser.isRoot(),
            "needs root to reserve huge pages and mount hugetlbfs; not root here");
        final String originalPages = Files.readString(NR_HUGEPAGES).trim();
        final Path mount = Files.createDirectory(tempDir.resolve("huge"));
        Files.writeString(NR_HUGEPAGES, String.valueOf(Long.parseLong(originalPages) + 8));
        boolean mounted = false;
        try
        {
            run("mount", "-t", "hugetlbfs", "-o", "pagesize=2M", "none", mount.toString());
            mounted = true;
            final long freeBefore = MemoryMapper.freeHugePages();
            assertTrue(freeBefore >= 2, "the kernel reserved huge pages: " + freeBefore);

            final MemoryMapper mapper = new MemoryMapper(tempDir.resolve("shm"), mount, true);
            assertNull(mapper.hugePagesUnavailableReason(3 * 65536));
            try (LogBuffers log = LogBuffers.map(mapper, "huge", 65536, false))
            {
                assertTrue(log.region().isHugePages());
                assertEquals(MemoryMapper.HUGE_PAGE_SIZE, log.region().length());
                assertEquals(freeBefore - 1, MemoryMapper.freeHugePages(), "pre-touched: the page is taken at map");
                assertEquals((int)MemoryMapper.HUGE_PAGE_SIZE,
                    LogBufferDescriptor.pageSize(log.metaDataBuffer()));
            }
            assertEquals(freeBefore, MemoryMapper.freeHugePages(), "unmapped: the page is back");

            try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).hugetlbfsDir(mount.toString())))
            {
                final Subscription subscription = verbus.addSubscription("ipc", 1);
                final Publication publication = verbus.addPublication("ipc:term-length=64k", 1);
                assertEquals(freeBefore - 1, MemoryMapper.freeHugePages(), "the ipc log lives in a huge page");
                TestSupport.await("connected", publication::isConnected);
                TestSupport.await("offer", () -> publication.offer(new UnsafeBuffer(new byte[8]), 0, 8) > 0);
                TestSupport.await("poll", () -> subscription.poll((b, o, l, h) -> {}, 1) == 1);
            }
        }
        finally
        {
            if (mounted)
            {
                run("umount", mount.toString());
            }
            Files.writeString(NR_HUGEPAGES, originalPages);
        }
        assertEquals(originalPages, Files.readString(NR_HUGEPAGES).trim());
    }

    private static void run(final String... command) throws Exception
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), String.join(" ", command) + ": " + output);
    }
}
