package io.verbus.fabric.shm;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.conformance.ReceiveQueueAndChannelConformanceTest;
import org.junit.jupiter.api.AfterAll;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * SRQ and completion channel conformance on shm: two devices in one per-run directory under /dev/shm, so the
 * initiator claims the responder's SRQ receives through the SRQ file as a peer process would.
 */
class ShmReceiveQueueAndChannelConformanceTest extends ReceiveQueueAndChannelConformanceTest
{
    private final Path directory;

    ShmReceiveQueueAndChannelConformanceTest()
    {
        try
        {
            directory = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-fabric-srq-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    @Override
    protected Fabric newFabric()
    {
        return Fabrics.open("shm", new FabricContext().shmDirectory(directory)
            .shmLivenessTimeoutNs(TimeUnit.SECONDS.toNanos(1)));
    }

    @AfterAll
    void deleteDirectory()
    {
        ShmFiles.deleteRecursively(directory);
    }
}
