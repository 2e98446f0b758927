package io.verbus.fabric.shm;

import io.verbus.common.InterruptImmuneIo;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.FileChannel;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static io.verbus.fabric.shm.ShmLayout.*;

/**
 * Removes the directories of shm devices whose process died without closing them (kill -9, crash), so
 * that a shared shm directory does not fill /dev/shm over time. A device is stale when its process is gone
 * and its heartbeat is older than ten liveness timeouts, or when it was closed.
 */
final class ShmStaleDevices
{
    private static final int STALE_TIMEOUTS = 10;

    private ShmStaleDevices()
    {
    }

    static void sweep(final Path shmDirectory, final long livenessTimeoutNs)
    {
        try (DirectoryStream<Path> devices = Files.newDirectoryStream(shmDirectory, "dev-*"))
        {
            final long nowNs = System.nanoTime();
            for (final Path device : devices)
            {
                if (isStale(device.resolve(CONTROL_FILE), nowNs, livenessTimeoutNs))
                {
                    ShmFiles.deleteRecursively(device);
                }
            }
        }
        catch (final IOException | RuntimeException ignore)
        {
            // Best effort: a sweep that fails leaves files behind, never breaks a device opening.
        }
    }

    static boolean isStale(final Path control, final long nowNs, final long livenessTimeoutNs)
    {
        if (!Files.isRegularFile(control))
        {
            return false;
        }
        try
        {
            final ByteBuffer header = ByteBuffer.allocate(CONTROL_STATE_OFFSET + 4).order(ByteOrder.nativeOrder());
            final int read = InterruptImmuneIo.call(() -> // on the thread opening a device: maybe interrupted
            {
                header.clear();
                try (FileChannel channel = FileChannel.open(control, StandardOpenOption.READ))
                {
                    return channel.read(header, 0);
                }
            });
            if (read < header.capacity() || header.getInt(CONTROL_MAGIC_OFFSET) != MAGIC)
            {
                return false;
            }
            if (header.getInt(CONTROL_STATE_OFFSET) == DEVICE_CLOSED)
            {
                return true;
            }
            final long pid = header.getLong(CONTROL_PID_OFFSET);
            final long heartbeatNs = header.getLong(CONTROL_HEARTBEAT_NS_OFFSET);
            final boolean processGone = ProcessHandle.of(pid).map(process -> !process.isAlive()).orElse(true);
            return processGone && nowNs - heartbeatNs > STALE_TIMEOUTS * livenessTimeoutNs;
        }
        catch (final IOException ex)
        {
            return false;
        }
    }
}
