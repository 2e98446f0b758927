package io.verbus.memory;

import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.ProcessUser;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A Verbus dir on a file system without room (a small tmpfs, mounted as root): the error names the path and says
 * "no space" instead of an {@code InternalError} from a SIGBUS while pre-touching, and the Verbus stays usable.
 */
class FullDirTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldRefuseALogThatDoesNotFitNamingThePathAndKeepWorking() throws Exception
    {
        assumeTrue(ProcessUser.isRoot(), "mounting a small tmpfs needs root");
        final Path mount = Files.createDirectories(tempDir.resolve("small"));
        mountTmpfs(mount, "1m");
        try
        {
            try (Verbus verbus = Verbus.launch(TestSupport.context(mount).maxCounters(64).useHugePages(false)))
            {
                final RuntimeException ex = assertThrows(RuntimeException.class,
                    () -> verbus.addPublication("ipc:term-length=1m", 1));
                assertTrue(ex.getMessage().contains("no space left"), ex.getMessage());
                assertTrue(ex.getMessage().contains(mount.toString()), ex.getMessage());

                final Subscription subscription = verbus.addSubscription("ipc", 2);
                final Publication publication = verbus.addPublication("ipc:term-length=64k", 2);
                TestSupport.await("connected", publication::isConnected);
                TestSupport.await("offer", () -> publication.offer(new UnsafeBuffer(new byte[8]), 0, 8) > 0);
                TestSupport.await("poll", () -> 1 == subscription.poll((b, o, l, h) -> {}, 1));
            }
        }
        finally
        {
            run("umount", mount.toString());
        }
    }

    @Test
    void shouldRefuseToLaunchWhenTheCountersFileDoesNotFitNamingThePath() throws Exception
    {
        assumeTrue(ProcessUser.isRoot(), "mounting a small tmpfs needs root");
        final Path mount = Files.createDirectories(tempDir.resolve("tiny"));
        mountTmpfs(mount, "256k");
        try
        {
            final RuntimeException ex = assertThrows(RuntimeException.class,
                () -> Verbus.launch(TestSupport.context(mount).maxCounters(4096)).close());
            assertTrue(ex.getMessage().contains("no space left"), ex.getMessage());
            assertTrue(ex.getMessage().contains("counters.dat"), ex.getMessage());
        }
        finally
        {
            run("umount", mount.toString());
        }
    }

    @Test
    void shouldTurnASigbusWhilePreTouchingIntoANoSpaceErrorNamingTheFile() throws Exception
    {
        assumeTrue(ProcessUser.isRoot(), "mounting a small tmpfs needs root");
        final Path mount = Files.createDirectories(tempDir.resolve("race"));
        mountTmpfs(mount, "64k");
        try
        {
            // The space check passes for a sparse file; the kernel runs out while the pages are touched.
            final Path file = mount.resolve("log.map");
            try (java.lang.foreign.Arena arena = java.lang.foreign.Arena.ofShared();
                java.nio.channels.FileChannel channel = java.nio.channels.FileChannel.open(file,
                    java.nio.file.StandardOpenOption.CREATE_NEW, java.nio.file.StandardOpenOption.READ,
                    java.nio.file.StandardOpenOption.WRITE))
            {
                final java.lang.foreign.MemorySegment segment =
                    channel.map(java.nio.channels.FileChannel.MapMode.READ_WRITE, 0, 1024 * 1024, arena);
                final MemoryMapper.NoSpaceException ex = assertThrows(MemoryMapper.NoSpaceException.class,
                    () -> MemoryMapper.preTouch(segment, MemoryMapper.PAGE_SIZE, file));
                assertTrue(ex.getMessage().contains("no space left"), ex.getMessage());
                assertTrue(ex.getMessage().contains(file.toString()), ex.getMessage());
            }
        }
        finally
        {
            run("umount", mount.toString());
        }
    }

    static void mountTmpfs(final Path mount, final String size) throws Exception
    {
        run("mount", "-t", "tmpfs", "-o", "size=" + size + ",mode=0700", "tmpfs", mount.toString());
    }

    static void run(final String... command) throws Exception
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes());
        assertTrue(process.waitFor(30, TimeUnit.SECONDS));
        assertEquals(0, process.exitValue(), String.join(" ", command) + ": " + output);
    }
}
