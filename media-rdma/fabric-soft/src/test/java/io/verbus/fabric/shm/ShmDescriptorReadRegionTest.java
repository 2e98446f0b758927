package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.List;

import static io.verbus.fabric.shm.ShmLayout.*;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * READ on memory whose file peers cannot map by name, an embedded driver's log (unlinked once mapped) or a standalone
 * driver's (kept, outside the fabric directory): the shm provider shares it through a descriptor kept for the
 * registration alone ({@code /proc/<pid>/fd/<n>}), READ only, closed on deregistration; a peer maps it read-only and
 * serves nothing but READ from it, whatever the table says later, and follows no descriptor of a process other than
 * the peer's.
 */
class ShmDescriptorReadRegionTest
{
    private static final int LENGTH = 64 * 1024;
    private static final long O_CLOEXEC = 0_2000000;

    private ShmTwoDevices devices;
    private Path parent;
    private Device initiator;
    private Device responder;
    private List<Throwable> reported;
    private final WorkRequestBatch batch = new WorkRequestBatch(1);
    private final WorkCompletion[] completions = WorkCompletion.newArray(4);
    private final Arena logArena = Arena.ofShared();
    private FileChannel logChannel;
    private MemorySegment log;
    private long logInode;
    private ProtectionDomain responderPd;

    @BeforeEach
    void before() throws IOException
    {
        devices = new ShmTwoDevices("verbus-fabric-unlinked-");
        parent = devices.parent;
        initiator = devices.initiator;
        responder = devices.responder;
        reported = devices.reported;
        responderPd = responder.allocateProtectionDomain();
        // As the driver maps a log: outside the fabric directory, mapped shared, unlinked, the channel kept open.
        final Path file = parent.resolve("verbus-log.map");
        logChannel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
            StandardOpenOption.WRITE);
        log = logChannel.map(FileChannel.MapMode.READ_WRITE, 0, LENGTH, logArena);
        logInode = ((Number)Files.getAttribute(file, "unix:ino")).longValue();
        Files.delete(file);
        for (int i = 0; i < LENGTH; i += 8)
        {
            log.set(ValueLayout.JAVA_LONG, i, 0x1000_0000_0000L + i);
        }
    }

    @AfterEach
    void after() throws IOException
    {
        devices.close(); // the log file is unlinked, or kept in the directory this removes: its mapping outlives it
        logChannel.close();
        logArena.close();
    }

    @Test
    void shouldServeAReadOfAnUnlinkedFileThroughADescriptorKeptForTheRegistrationAlone() throws IOException
    {
        assertEquals(1, descriptorsOfTheLog(), "the log's own channel");
        final Pair pair = connect();
        final MemoryRegion region = pair.responderPd.registerMemory(log, AccessFlags.REMOTE_READ);
        assertEquals(2, descriptorsOfTheLog(), "one more, held by the registration");
        final String path = regionPath(region);
        final Path fdinfo = Path.of("/proc/self/fdinfo/" + path.substring(path.lastIndexOf('/') + 1));
        final String flags = Files.readAllLines(fdinfo).stream()
            .filter(line -> line.startsWith("flags:")).findFirst().orElseThrow();
        assertTrue((Long.parseLong(flags.substring("flags:".length()).trim(), 8) & O_CLOEXEC) != 0,
            "close-on-exec, so no child process inherits the log: " + flags);

        assertEquals(WorkCompletionStatus.SUCCESS, pair.read(region.address() + 4096, region.rkey(), 1024));
        assertArrayEquals(log.asSlice(4096, 1024).toArray(ValueLayout.JAVA_BYTE),
            pair.local.asSlice(0, 1024).toArray(ValueLayout.JAVA_BYTE), "the log's bytes, read from the other device");
        log.set(ValueLayout.JAVA_LONG, 8192, 42L);
        assertEquals(WorkCompletionStatus.SUCCESS, pair.read(region.address() + 8192, region.rkey(), 8));
        assertEquals(42L, pair.local.get(ValueLayout.JAVA_LONG, 0), "the same memory, not a copy");

        region.deregister();
        assertEquals(1, descriptorsOfTheLog(), "closed on deregistration");
        final Pair again = connect();
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, again.read(region.address() + 4096, region.rkey(), 1024),
            "the rkey is revoked");
    }

    @Test
    void shouldServeAReadOfAFileOutsideTheFabricDirectoryThroughADescriptorAndGrantNoWriteOnIt() throws IOException
    {
        // A standalone driver keeps its log files, in the Verbus dir: outside the fabric directory peers confine to.
        final Path file = parent.resolve("verbus-kept-log.map");
        try (Arena arena = Arena.ofShared();
            FileChannel channel = FileChannel.open(file, StandardOpenOption.CREATE_NEW, StandardOpenOption.READ,
                StandardOpenOption.WRITE))
        {
            final MemorySegment kept = channel.map(FileChannel.MapMode.READ_WRITE, 0, LENGTH, arena);
            kept.set(ValueLayout.JAVA_LONG, 4096, 0x0BADC0FFEEL);
            final int write = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> responderPd.registerMemory(kept, write));
            assertTrue(ex.getMessage().contains("outside the shm fabric directory"), ex.getMessage());

            final MemoryRegion region = responderPd.registerMemory(kept, AccessFlags.REMOTE_READ);
            assertTrue(regionPath(region).startsWith("/proc/"), "shared through a descriptor: " + regionPath(region));
            final Pair pair = connect();
            assertEquals(WorkCompletionStatus.SUCCESS, pair.read(region.address() + 4096, region.rkey(), 8));
            assertEquals(0x0BADC0FFEEL, pair.local.get(ValueLayout.JAVA_LONG, 0));
            region.deregister();
        }
        finally
        {
            Files.deleteIfExists(file);
        }
    }

    @Test
    void shouldGrantNoWriteOrAtomicRightOnAnUnlinkedFile()
    {
        final ProtectionDomain pd = responderPd;
        final int local = AccessFlags.LOCAL_WRITE;
        for (final int access : new int[]{ local | AccessFlags.REMOTE_WRITE,
            local | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE,
            local | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC })
        {
            final IllegalArgumentException ex =
                assertThrows(IllegalArgumentException.class, () -> pd.registerMemory(log, access));
            assertTrue(ex.getMessage().contains("READ alone"), ex.getMessage());
        }
        assertEquals(1, descriptorsOfTheLog(), "nothing kept for a refused registration");
    }

    @Test
    void shouldRefuseAReadGrantOnAnUnlinkedFileNoLongerHeldOpen() throws IOException
    {
        logChannel.close(); // mapped, unlinked and closed: no descriptor a peer could open
        final ProtectionDomain pd = responderPd;
        assertThrows(IllegalArgumentException.class, () -> pd.registerMemory(log, AccessFlags.REMOTE_READ));
    }

    @Test
    void shouldNeverWriteThroughAnUnlinkedFileWhateverThePeerTableClaimsLater() throws IOException
    {
        final Pair pair = connect();
        final MemoryRegion region = pair.responderPd.registerMemory(log, AccessFlags.REMOTE_READ);
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, pair.write(region.address(), region.rkey(), 64),
            "a WRITE with a READ grant");
        final byte[] before = log.asSlice(0, 4096).toArray(ValueLayout.JAVA_BYTE);

        final Pair second = connect();
        assertEquals(WorkCompletionStatus.SUCCESS, second.read(region.address(), region.rkey(), 64), "mapped");
        tamperAccess(region, AccessFlags.REMOTE_READ | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_ATOMIC);
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, second.write(region.address(), region.rkey(), 64),
            "the table now claims WRITE: the mapping is read-only, and READ is all it serves");
        final Pair third = connect();
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, third.write(region.address(), region.rkey(), 64),
            "nor on a fresh QP");
        assertArrayEquals(before, log.asSlice(0, 4096).toArray(ValueLayout.JAVA_BYTE), "the log is unchanged");
    }

    @Test
    void shouldFollowNoDescriptorOfAProcessOtherThanThePeers() throws IOException
    {
        final Pair pair = connect();
        final MemoryRegion region = pair.responderPd.registerMemory(log, AccessFlags.REMOTE_READ);
        final String path = regionPath(region);
        assertTrue(path.startsWith("/proc/" + ProcessHandle.current().pid() + "/fd/"), path);
        tamperPath(region, "/proc/1" + path.substring(path.indexOf("/fd/")));
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, pair.read(region.address(), region.rkey(), 64));
        assertEquals(1, reported.size(), reported.toString());
        assertTrue(reported.get(0).getMessage().contains("not of the peer's process"), reported.toString());
    }

    private long descriptorsOfTheLog()
    {
        long count = 0;
        try (DirectoryStream<Path> descriptors = Files.newDirectoryStream(Path.of("/proc/self/fd")))
        {
            for (final Path descriptor : descriptors)
            {
                try
                {
                    count += logInode == ((Number)Files.getAttribute(descriptor, "unix:ino")).longValue() ? 1 : 0;
                }
                catch (final IOException ignore)
                {
                    // the listing's own descriptor, gone
                }
            }
        }
        catch (final IOException ex)
        {
            throw new IllegalStateException(ex);
        }
        return count;
    }

    private final class Pair
    {
        final ProtectionDomain responderPd;
        final QueuePair initiatorQp;
        final CompletionQueue initiatorCq;
        final MemoryRegion localRegion;
        final MemorySegment local;

        Pair(final ProtectionDomain responderPd)
        {
            this.responderPd = responderPd;
            final QueuePair responderQp = responderPd.createQueuePair(new QueuePairConfig()
                .completionQueue(responder.createCompletionQueue(16)).maxSendWorkRequests(16)
                .maxReceiveWorkRequests(1));
            final ProtectionDomain initiatorPd = initiator.allocateProtectionDomain();
            initiatorCq = initiator.createCompletionQueue(16);
            initiatorQp = initiatorPd.createQueuePair(new QueuePairConfig()
                .completionQueue(initiatorCq).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
            initiatorQp.connect(responderQp.localConnectionInfo());
            responderQp.connect(initiatorQp.localConnectionInfo());
            local = initiator.allocateMemory(4096);
            local.fill((byte)0x5A);
            localRegion = initiatorPd.registerMemory(local, AccessFlags.LOCAL_WRITE);
        }

        WorkCompletionStatus read(final long address, final int rkey, final int length)
        {
            batch.clear().add().read(1, local.address(), length, localRegion.lkey(), address, rkey,
                SendFlags.SIGNALED);
            return post();
        }

        WorkCompletionStatus write(final long address, final int rkey, final int length)
        {
            batch.clear().add().write(2, local.address(), length, localRegion.lkey(), address, rkey,
                SendFlags.SIGNALED);
            return post();
        }

        private WorkCompletionStatus post()
        {
            return ShmTwoDevices.postAndAwait(initiatorQp, batch, initiatorCq, completions);
        }
    }

    /** A fresh QP pair (a QP that met a remote access error stays in error), on the test's one responder PD. */
    private Pair connect()
    {
        return new Pair(responderPd);
    }

    private MemorySegment regionTable(final Arena arena) throws IOException
    {
        try (FileChannel channel = FileChannel.open(((ShmDevice)responder).directory().resolve(REGIONS_FILE),
            StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, REGIONS_LENGTH, arena);
        }
    }

    private String regionPath(final MemoryRegion region) throws IOException
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment table = regionTable(arena);
            final long base = (long)(region.rkey() & 0xFFFF) * ENTRY_LENGTH;
            final byte[] path = new byte[table.get(ValueLayout.JAVA_INT, base + ENTRY_PATH_LENGTH_OFFSET)];
            MemorySegment.copy(table, ValueLayout.JAVA_BYTE, base + ENTRY_PATH_OFFSET, path, 0, path.length);
            return new String(path, StandardCharsets.UTF_8);
        }
    }

    private void tamperPath(final MemoryRegion region, final String path) throws IOException
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment table = regionTable(arena);
            final long base = (long)(region.rkey() & 0xFFFF) * ENTRY_LENGTH;
            final byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
            table.set(ValueLayout.JAVA_INT, base + ENTRY_PATH_LENGTH_OFFSET, bytes.length);
            MemorySegment.copy(bytes, 0, table, ValueLayout.JAVA_BYTE, base + ENTRY_PATH_OFFSET, bytes.length);
        }
    }

    private void tamperAccess(final MemoryRegion region, final int access) throws IOException
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment table = regionTable(arena);
            final long base = (long)(region.rkey() & 0xFFFF) * ENTRY_LENGTH;
            table.set(ValueLayout.JAVA_INT, base + ENTRY_ACCESS_OFFSET, access);
        }
    }
}
