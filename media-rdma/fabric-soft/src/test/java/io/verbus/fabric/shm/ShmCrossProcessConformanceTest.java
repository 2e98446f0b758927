package io.verbus.fabric.shm;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.conformance.ChildProcessPeer;
import io.verbus.fabric.conformance.ConformancePeer;
import io.verbus.fabric.conformance.FabricConformanceTest;
import org.junit.jupiter.api.Tag;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The conformance suite on shm with the peer in a child JVM: two processes sharing a per-run directory
 * under /dev/shm; peer death is a real SIGKILL.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class ShmCrossProcessConformanceTest extends FabricConformanceTest
{
    static final long LIVENESS_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(1500);

    private final Path directory;

    ShmCrossProcessConformanceTest()
    {
        try
        {
            directory = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-fabric-conformance-");
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
            .shmLivenessTimeoutNs(LIVENESS_TIMEOUT_NS));
    }

    @Override
    protected ConformancePeer newPeer()
    {
        return new ChildProcessPeer(List.of(), "shm", directory, "127.0.0.1", LIVENESS_TIMEOUT_NS);
    }

    @Override
    protected void afterFabricClosed()
    {
        ShmFiles.deleteRecursively(directory);
    }
}
