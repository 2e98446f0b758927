package io.verbus.fabric.shm;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * An shm fabric in a fresh directory under /dev/shm (no hugetlbfs) with two devices, the two ends of the connections
 * a test makes, and the errors the fabric reported. Closing it closes both devices and the fabric and removes the
 * directory.
 */
final class ShmTwoDevices implements AutoCloseable
{
    final Path parent;
    final Fabric fabric;
    final Device initiator;
    final Device responder;
    final List<Throwable> reported = new CopyOnWriteArrayList<>();

    ShmTwoDevices(final String directoryPrefix) throws IOException
    {
        parent = Files.createTempDirectory(Path.of("/dev/shm"), directoryPrefix);
        fabric = Fabrics.open("shm", new FabricContext().shmDirectory(parent.resolve("fabric"))
            .hugetlbfsDirectory("none").errorHandler(reported::add));
        initiator = fabric.openDevice();
        responder = fabric.openDevice();
    }

    @Override
    public void close() throws IOException
    {
        responder.close();
        initiator.close();
        fabric.close();
        ShmFiles.deleteRecursively(parent);
    }

    /**
     * Post {@code batch} (one signaled WR) on {@code qp} and wait, at most 10 s, for its completion on {@code cq}.
     *
     * @return the completion's status.
     */
    static WorkCompletionStatus postAndAwait(
        final QueuePair qp, final WorkRequestBatch batch, final CompletionQueue cq, final WorkCompletion[] completions)
    {
        assertEquals(PostResult.OK, qp.postSend(batch), "posting never throws");
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadlineNs)
        {
            if (1 == cq.poll(completions, 1))
            {
                return completions[0].status();
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
        }
        return fail("no completion");
    }
}
