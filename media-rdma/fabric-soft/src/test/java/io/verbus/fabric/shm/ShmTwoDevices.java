package io.verbus.fabric.shm;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

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
}
