package io.verbus.fabric.shm;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

class ShmFilesTest
{
    private static final int ROUNDS = 200;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(30);

    private Path parent;

    @BeforeEach
    void createParent() throws IOException
    {
        parent = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-shmfiles-");
    }

    @AfterEach
    void deleteParent()
    {
        ShmFiles.deleteRecursively(parent);
    }

    private static void fillTree(final Path root) throws IOException
    {
        for (int d = 0; d < 8; d++)
        {
            final Path dir = Files.createDirectories(root.resolve("dev-" + d));
            for (int f = 0; f < 8; f++)
            {
                Files.write(dir.resolve("region-" + f), new byte[16]);
            }
        }
    }

    /**
     * Two Verbus instances in one process (two shm devices) may delete one shared directory at the same time, each
     * walking what the other removes; entries that vanish during the walk must be skipped, not thrown.
     */
    @Test
    void shouldDeleteATreeThatAnotherThreadDeletesAtTheSameTime() throws Exception
    {
        final ExecutorService executor = Executors.newFixedThreadPool(2);
        try
        {
            final long startNs = System.nanoTime();
            int rounds = 0;
            while (rounds < ROUNDS && System.nanoTime() - startNs < DEADLINE_NS)
            {
                final Path root = parent.resolve("round-" + rounds);
                fillTree(root);
                final CountDownLatch start = new CountDownLatch(1);
                final Future<?> first = executor.submit(() ->
                {
                    start.await();
                    ShmFiles.deleteRecursively(root);
                    return null;
                });
                final Future<?> second = executor.submit(() ->
                {
                    start.await();
                    ShmFiles.deleteRecursively(root);
                    return null;
                });
                start.countDown();
                first.get(10, TimeUnit.SECONDS);
                second.get(10, TimeUnit.SECONDS);
                assertFalse(Files.exists(root), "round " + rounds + ": the tree is gone");
                rounds++;
            }
            assertTrue(rounds > 0);
        }
        finally
        {
            executor.shutdownNow();
        }
    }

    @Test
    void shouldIgnoreADirectoryThatIsAlreadyGone()
    {
        ShmFiles.deleteRecursively(parent.resolve("never-created"));
        assertTrue(Files.isDirectory(parent));
    }
}
