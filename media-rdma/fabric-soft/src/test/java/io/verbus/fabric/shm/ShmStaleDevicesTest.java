package io.verbus.fabric.shm;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.verbus.fabric.shm.ShmLayout.*;
import static org.junit.jupiter.api.Assertions.*;

class ShmStaleDevicesTest
{
    private Path directory;

    @BeforeEach
    void createDirectory() throws IOException
    {
        directory = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-fabric-stale-");
    }

    @AfterEach
    void deleteDirectory()
    {
        ShmFiles.deleteRecursively(directory);
    }

    private Path fakeDevice(final String name, final long pid, final long heartbeatNs, final int state)
        throws IOException
    {
        final Path device = Files.createDirectories(directory.resolve(name));
        final ByteBuffer control = ByteBuffer.allocate(CONTROL_LENGTH).order(ByteOrder.nativeOrder());
        control.putInt(CONTROL_MAGIC_OFFSET, MAGIC).putInt(CONTROL_VERSION_OFFSET, VERSION)
            .putLong(CONTROL_PID_OFFSET, pid).putLong(CONTROL_HEARTBEAT_NS_OFFSET, heartbeatNs)
            .putInt(CONTROL_STATE_OFFSET, state);
        Files.write(device.resolve(CONTROL_FILE), control.array());
        Files.write(device.resolve(REGIONS_FILE), new byte[16]);
        return device;
    }

    @Test
    void shouldRemoveDevicesOfDeadProcessesAndKeepLiveOnesWhenADeviceOpens() throws Exception
    {
        final Process exited = new ProcessBuilder("true").start();
        assertTrue(exited.waitFor(10, TimeUnit.SECONDS));
        final long longAgoNs = System.nanoTime() - TimeUnit.SECONDS.toNanos(3600);
        final Path dead = fakeDevice("dev-dead", exited.pid(), longAgoNs, DEVICE_ALIVE);
        final Path closed = fakeDevice("dev-closed", ProcessHandle.current().pid(), System.nanoTime(), DEVICE_CLOSED);
        final Path live = fakeDevice("dev-live", ProcessHandle.current().pid(), longAgoNs, DEVICE_ALIVE);
        final Path recent = fakeDevice("dev-recent", exited.pid(), System.nanoTime(), DEVICE_ALIVE);

        try (Fabric fabric = Fabrics.open("shm", new FabricContext().shmDirectory(directory));
            Device device = fabric.openDevice())
        {
            assertTrue(Files.isDirectory(((ShmDevice)device).directory()));
            assertFalse(Files.exists(dead), "process gone, heartbeat stale");
            assertFalse(Files.exists(closed), "closed without removing its files");
            assertTrue(Files.exists(live), "its process is alive (maybe stopped): not ours to delete");
            assertTrue(Files.exists(recent), "heartbeat too recent to judge");
        }
    }
}
