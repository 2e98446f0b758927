package io.verbus.fabric.shm;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.Fabrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The shm fabric directory, device directories, control, region table, QP and ring files are for their owner only;
 * a fabric directory that belongs to another user is refused.
 */
class ShmOwnerOnlyFilesTest
{
    private Path parent;

    @BeforeEach
    void createDirectory() throws IOException
    {
        parent = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-fabric-perms-");
    }

    @AfterEach
    void deleteDirectory()
    {
        ShmFiles.deleteRecursively(parent);
    }

    @Test
    void shouldCreateEveryDirectoryAndFileForTheOwnerOnly() throws Exception
    {
        final Path directory = parent.resolve("fabric");
        try (Fabric fabric = Fabrics.open(
                "shm", new FabricContext().shmDirectory(directory).hugetlbfsDirectory("none"));
            Device device = fabric.openDevice())
        {
            final MemorySegment ring = device.allocateMemory(64 * 1024);
            ring.set(java.lang.foreign.ValueLayout.JAVA_BYTE, 0, (byte)1);
            device.allocateProtectionDomain().createQueuePair(new io.verbus.fabric.QueuePairConfig()
                .completionQueue(device.createCompletionQueue(16)).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
            assertEquals("rwx------", mode(directory));
            final Path deviceDirectory = ((ShmDevice)device).directory();
            assertEquals("rwx------", mode(deviceDirectory));
            try (Stream<Path> files = Files.list(deviceDirectory))
            {
                final java.util.List<Path> all = files.toList();
                assertTrue(all.size() >= 4, "control, regions, a ring and a QP: " + all);
                for (final Path file : all)
                {
                    assertEquals("rw-------", mode(file), file.toString());
                }
            }
        }
    }

    @Test
    void shouldRefuseAFabricDirectoryThatBelongsToAnotherUser() throws Exception
    {
        assumeTrue(Files.readAllLines(Path.of("/proc/self/status")).stream()
            .anyMatch(line -> line.startsWith("Uid:") && "0".equals(line.split("\\s+")[1])), "chown needs root");
        final Path directory = Files.createDirectories(parent.resolve("foreign"));
        Files.setAttribute(directory, "unix:uid", 65534);
        try (Fabric fabric = Fabrics.open("shm", new FabricContext().shmDirectory(directory)))
        {
            final FabricException ex = assertThrows(FabricException.class, fabric::openDevice);
            assertTrue(ex.getMessage().contains("belongs to uid 65534"), ex.getMessage());
        }
    }

    private static String mode(final Path path) throws IOException
    {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }
}
