package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.soft.SoftFaultInjectionTest;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.*;

class ShmFaultInjectionTest extends SoftFaultInjectionTest
{
    private static Path directory;

    @BeforeAll
    static void createDirectory() throws IOException
    {
        directory = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-fabric-faults-");
    }

    @AfterAll
    static void deleteDirectory()
    {
        ShmFiles.deleteRecursively(directory);
    }

    @Override
    protected String provider()
    {
        return "shm";
    }

    @Override
    protected FabricContext newContext()
    {
        return new FabricContext().shmDirectory(directory).shmLivenessTimeoutNs(TimeUnit.SECONDS.toNanos(1));
    }

    @Test
    void shouldRefuseRemoteAccessToMemoryThatIsNotASharedFileMapping()
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment anonymous = arena.allocate(4096, 4096);
            final var pd = responder.allocateProtectionDomain();
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> pd.registerMemory(anonymous, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE));
            assertTrue(ex.getMessage().contains("shared file mapping"), ex.getMessage());
            assertEquals(AccessFlags.LOCAL_WRITE, pd.registerMemory(anonymous, AccessFlags.LOCAL_WRITE).accessFlags(),
                "local-only regions need no file");
        }
    }

    @Test
    void shouldGiveRemoteAccessToAFileTheApplicationMappedItself() throws IOException
    {
        final Path file = directory.resolve("app-mapped-" + ProcessHandle.current().pid());
        try (Arena arena = Arena.ofShared();
            FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE, StandardOpenOption.READ,
                StandardOpenOption.WRITE))
        {
            channel.truncate(0);
            channel.write(java.nio.ByteBuffer.wrap(new byte[1]), 3 * 4096 - 1);
            final MemorySegment mapped = channel.map(FileChannel.MapMode.READ_WRITE, 0, 3 * 4096, arena);
            final var pd = responder.allocateProtectionDomain();
            final var ring = pd.registerMemory(mapped.asSlice(4096, 4096),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            final var cq = responder.createCompletionQueue(16);
            final var qp = pd.createQueuePair(new io.verbus.fabric.QueuePairConfig().completionQueue(cq));
            final var qpInitiator = initiator.allocateProtectionDomain();
            final var initiatorQp = qpInitiator.createQueuePair(
                new io.verbus.fabric.QueuePairConfig().completionQueue(initiatorCq));
            initiatorQp.connect(qp.localConnectionInfo());
            qp.connect(initiatorQp.localConnectionInfo());
            final MemorySegment data = Arena.ofAuto().allocate(8);
            data.set(java.lang.foreign.ValueLayout.JAVA_LONG, 0, 0x1122334455667788L);
            batch.clear().add().write(1, data.address(), 8, 0, ring.address() + 16, ring.rkey(),
                SendFlags.SIGNALED | SendFlags.INLINE);
            assertEquals(PostResult.OK, initiatorQp.postSend(batch));
            assertEquals(WorkCompletionStatus.SUCCESS, awaitCompletion(initiatorCq).status());
            assertEquals(0x1122334455667788L,
                mapped.get(java.lang.foreign.ValueLayout.JAVA_LONG_UNALIGNED, 4096 + 16));
            initiatorQp.close();
            qp.close();
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }
}
