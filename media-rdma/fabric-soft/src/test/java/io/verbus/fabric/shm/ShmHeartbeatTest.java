package io.verbus.fabric.shm;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every open shm device of a process is beaten by one thread, at its period, and a closed or killed device is not.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ShmHeartbeatTest
{
    private static final long LIVENESS_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(40); // beats every 10 ms

    @Test
    void oneThreadBeatsEveryOpenDeviceAndNoneThatIsClosedOrKilled() throws Exception
    {
        final Path directory = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-heartbeat-");
        final FabricContext killedContext = context(directory);
        final int registeredBefore = ShmHeartbeat.registeredCount();
        try (Fabric fabric = Fabrics.open("shm", context(directory));
            Fabric killedFabric = Fabrics.open("shm", killedContext))
        {
            final List<ShmDevice> devices = new ArrayList<>();
            for (int i = 0; i < 3; i++)
            {
                devices.add((ShmDevice)fabric.openDevice());
            }
            final ShmDevice killed = (ShmDevice)killedFabric.openDevice();
            assertEquals(registeredBefore + 4, ShmHeartbeat.registeredCount());
            assertEquals(1, heartbeatThreads(), "one heartbeat thread for every device of the process");

            killedContext.faultInjection().kill();
            Thread.sleep(50); // a round in progress may still beat it once
            final long killedBeatNs = killed.lastBeatNs();
            final long[] beats = new long[devices.size()];
            for (int i = 0; i < beats.length; i++)
            {
                beats[i] = devices.get(i).lastBeatNs();
            }
            Thread.sleep(200); // twenty periods
            for (int i = 0; i < beats.length; i++)
            {
                assertTrue(devices.get(i).lastBeatNs() > beats[i], "device " + i + " was not beaten");
            }
            assertEquals(killedBeatNs, killed.lastBeatNs(), "a killed device (a dead process) must not beat");

            final Device closed = devices.removeFirst();
            closed.close();
            assertEquals(registeredBefore + 3, ShmHeartbeat.registeredCount());
            final long closedBeatNs = ((ShmDevice)closed).lastBeatNs();
            Thread.sleep(50);
            assertEquals(closedBeatNs, ((ShmDevice)closed).lastBeatNs(), "a closed device must not be beaten");
        }
        assertEquals(registeredBefore, ShmHeartbeat.registeredCount());
        if (0 == registeredBefore)
        {
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (heartbeatThreads() > 0 && System.nanoTime() < deadlineNs)
            {
                Thread.sleep(10);
            }
            assertEquals(0, heartbeatThreads(), "the heartbeat thread ends with the last device");
        }
        deleteQuietly(directory);
        assertFalse(Files.exists(directory));
    }

    private static FabricContext context(final Path directory)
    {
        return new FabricContext().shmDirectory(directory).hugetlbfsDirectory("none")
            .shmLivenessTimeoutNs(LIVENESS_TIMEOUT_NS);
    }

    private static long heartbeatThreads()
    {
        return Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.isAlive() && thread.getName().startsWith("verbus-shm-heartbeat"))
            .count();
    }

    private static void deleteQuietly(final Path directory) throws IOException
    {
        ShmFiles.deleteRecursively(directory);
    }
}
