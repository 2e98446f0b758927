package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.verbus.fabric.shm.ShmLayout.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A local peer that rewrites its published region table (or its files) cannot make the initiator write anywhere
 * but into the region it announced: a path outside the fabric directory, a symbolic link, a region larger than its
 * file or a file shrunk under the mapping each fail that WR with REM_ACCESS_ERR (one connection in ERR), are reported
 * once, and never throw into the posting thread or touch the file named.
 */
class ShmHostilePeerTest
{
    private static final byte[] VICTIM_CONTENT =
        "the victim's own bytes, untouched".getBytes(StandardCharsets.US_ASCII);

    private Path victim;
    private ShmTwoDevices devices;
    private Device initiator;
    private Device responder;
    private List<Throwable> reported;
    private final WorkRequestBatch batch = new WorkRequestBatch(4);
    private final WorkCompletion[] completions = WorkCompletion.newArray(4);

    @BeforeEach
    void before() throws IOException
    {
        victim = Files.createTempFile("verbus-victim-", ".dat");
        Files.write(victim, VICTIM_CONTENT);
        Files.setPosixFilePermissions(victim, PosixFilePermissions.fromString("rw-------"));
        devices = new ShmTwoDevices("verbus-fabric-hostile-");
        initiator = devices.initiator;
        responder = devices.responder;
        reported = devices.reported;
    }

    @AfterEach
    void after() throws IOException
    {
        devices.close();
        Files.deleteIfExists(victim);
    }

    @Test
    void shouldRefuseARegionWhosePathPointsOutsideTheFabricDirectory() throws Exception
    {
        final Pair pair = connect();
        tamperPath(pair.ring, victim.toString());
        assertRefused(pair, 0);
        assertVictimIntact();
    }

    @Test
    void shouldRefuseARegionWhosePathIsASymbolicLinkInsideTheDeviceDirectory() throws Exception
    {
        final Pair pair = connect();
        final Path link = ((ShmDevice)responder).directory().resolve("mem-evil");
        Files.createSymbolicLink(link, victim);
        tamperPath(pair.ring, link.toString());
        assertRefused(pair, 0);
        assertVictimIntact();
    }

    @Test
    void shouldRefuseAWriteBeyondTheFileOfARegionAnnouncedLargerThanItIs() throws Exception
    {
        final Pair pair = connect();
        tamperLength(pair.ring, 64L * 1024 * 1024);
        assertRefused(pair, 1024 * 1024);
    }

    @Test
    void shouldKeepWritesInsideTheRegionFirstCheckedWhenThePeerEnlargesItsEntryLater() throws Exception
    {
        final Pair pair = connect();
        assertEquals(WorkCompletionStatus.SUCCESS, write(pair, 0), "the honest region works (and is cached)");
        tamperLength(pair.ring, 64L * 1024 * 1024);
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, write(pair, 1024 * 1024),
            "a WRITE past the 64 KiB first announced is refused, whatever the entry says now");
    }

    @Test
    void shouldFailOneWriteWhenThePeerShrinksItsFileUnderTheMapping() throws Exception
    {
        final Pair pair = connect();
        assertEquals(WorkCompletionStatus.SUCCESS, write(pair, 0), "the honest region works");
        try (FileChannel channel = FileChannel.open(ringFile(pair.ring), StandardOpenOption.WRITE))
        {
            channel.truncate(0);
        }
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, write(pair, 8192));
    }

    @Test
    void shouldKeepBeatingWhenAPeerTruncatesItsRegionTableUnderOurMapping() throws Exception
    {
        final Pair pair = connect();
        assertEquals(WorkCompletionStatus.SUCCESS, write(pair, 0), "the WRITE maps the responder's region table");
        try (FileChannel channel = FileChannel.open(
            ((ShmDevice)responder).directory().resolve(REGIONS_FILE), StandardOpenOption.WRITE))
        {
            channel.truncate(0);
        }
        // The initiator's periodic sweep reads that table (a fault, InternalError): the heartbeat thread, which beats
        // for every device in the process, must survive it and go on beating.
        final long sweepMs = TimeUnit.NANOSECONDS.toMillis(ShmDevice.REVOKED_REGION_SWEEP_PERIOD_NS);
        Thread.sleep(2 * sweepMs + 200);
        final long before = ((ShmDevice)initiator).lastBeatNs();
        Thread.sleep(sweepMs);
        assertTrue(((ShmDevice)initiator).lastBeatNs() > before, "the heartbeat thread still beats");
        assertTrue(((ShmDevice)responder).lastBeatNs() > before, "for every device in the process");
        pair.initiatorQp().close(); // closing sweeps the peer's table too: best effort, it must not throw
    }

    @Test
    void shouldErrAndStopWhenAPeerDepositsIntoAnSrqQueuePairWithMadeUpIndexesAndCount() throws Exception
    {
        final var responderPd = responder.allocateProtectionDomain();
        final CompletionQueue responderCq = responder.createCompletionQueue(16);
        final QueuePair responderQp = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq)
            .maxSendWorkRequests(16).sharedReceiveQueue(responderPd.createSharedReceiveQueue(8)));
        final QueuePair initiatorQp = initiator.allocateProtectionDomain().createQueuePair(new QueuePairConfig()
            .completionQueue(initiator.createCompletionQueue(16)).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
        initiatorQp.connect(responderQp.localConnectionInfo());
        responderQp.connect(initiatorQp.localConnectionInfo());

        // The peer fills every deposit slot with a WRITE_WITH_IMM naming no receive of the SRQ, and claims it
        // deposited Long.MAX_VALUE of them.
        final Path qpFile = ((ShmDevice)responder).directory().resolve(QP_FILE_PREFIX + responderQp.qpNumber());
        try (Arena arena = Arena.ofConfined(); FileChannel channel = FileChannel.open(qpFile, StandardOpenOption.READ,
            StandardOpenOption.WRITE))
        {
            final MemorySegment file = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
            final int rqDepth = file.get(ValueLayout.JAVA_INT, QP_RQ_DEPTH_OFFSET);
            final long slotBase = qpHeaderLength(rqDepth);
            final long slotLength = qpSlotLength(ShmDevice.SEND_SLOT_CAPACITY);
            for (int slot = 0; slot < rqDepth; slot++)
            {
                final long offset = slotBase + slot * slotLength;
                file.set(ValueLayout.JAVA_INT, offset + SLOT_STATUS_OFFSET, SLOT_STATUS_OK);
                file.set(ValueLayout.JAVA_INT, offset + SLOT_OPCODE_OFFSET,
                    io.verbus.fabric.WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code());
                file.set(ValueLayout.JAVA_INT, offset + SLOT_LENGTH_OFFSET, 0);
                file.set(ValueLayout.JAVA_LONG, offset + SLOT_SRQ_INDEX_OFFSET, -1L);
            }
            file.set(ValueLayout.JAVA_LONG, QP_DEPOSITED_OFFSET, Long.MAX_VALUE);
        }

        final WorkCompletion[] completions = WorkCompletion.newArray(16);
        org.junit.jupiter.api.Assertions.assertTimeoutPreemptively(java.time.Duration.ofSeconds(10),
            () -> responderCq.poll(completions, completions.length), "a poll ends, whatever count the peer wrote");
        assertEquals(io.verbus.fabric.QueuePairState.ERR, responderQp.state(), "the connection is lost");
    }

    @Test
    void shouldRefuseAQueuePairFileWithAnImpossibleGeometry() throws Exception
    {
        final CompletionQueue responderCq = responder.createCompletionQueue(16);
        final QueuePair responderQp = responder.allocateProtectionDomain().createQueuePair(
            new QueuePairConfig().completionQueue(responderCq).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
        final Path qpFile = ((ShmDevice)responder).directory().resolve(QP_FILE_PREFIX + responderQp.qpNumber());
        try (Arena arena = Arena.ofConfined(); FileChannel channel = FileChannel.open(qpFile, StandardOpenOption.READ,
            StandardOpenOption.WRITE))
        {
            channel.map(FileChannel.MapMode.READ_WRITE, 0, 4096, arena)
                .set(ValueLayout.JAVA_INT, QP_RQ_DEPTH_OFFSET, 0);
        }
        final QueuePair initiatorQp = initiator.allocateProtectionDomain().createQueuePair(
            new QueuePairConfig().completionQueue(initiator.createCompletionQueue(16)).maxSendWorkRequests(16)
                .maxReceiveWorkRequests(1));
        final IllegalArgumentException ex = org.junit.jupiter.api.Assertions.assertThrows(
            IllegalArgumentException.class, () -> initiatorQp.connect(responderQp.localConnectionInfo()));
        assertTrue(ex.getMessage().contains("announces 0 receive slots"), ex.getMessage());
    }

    private record Pair(QueuePair initiatorQp, CompletionQueue initiatorCq, MemoryRegion ring, MemorySegment source)
    {
    }

    private Pair connect()
    {
        final var responderPd = responder.allocateProtectionDomain();
        final MemorySegment ringMemory = responder.allocateMemory(64 * 1024);
        final MemoryRegion ring =
            responderPd.registerMemory(ringMemory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        final QueuePair responderQp = responderPd.createQueuePair(new QueuePairConfig()
            .completionQueue(responder.createCompletionQueue(16)).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
        final var initiatorPd = initiator.allocateProtectionDomain();
        final CompletionQueue initiatorCq = initiator.createCompletionQueue(16);
        final QueuePair initiatorQp = initiatorPd.createQueuePair(new QueuePairConfig()
            .completionQueue(initiatorCq).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
        initiatorQp.connect(responderQp.localConnectionInfo());
        responderQp.connect(initiatorQp.localConnectionInfo());
        final MemorySegment source = Arena.ofAuto().allocate(64);
        source.fill((byte)0x5A);
        return new Pair(initiatorQp, initiatorCq, ring, source);
    }

    private WorkCompletionStatus write(final Pair pair, final long offset)
    {
        batch.clear().add().write(1, pair.source.address(), 64, 0, pair.ring.address() + offset, pair.ring.rkey(),
            SendFlags.SIGNALED | SendFlags.INLINE);
        assertEquals(PostResult.OK, pair.initiatorQp.postSend(batch), "posting never throws");
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadlineNs)
        {
            if (1 == pair.initiatorCq.poll(completions, 1))
            {
                return completions[0].status();
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
        return fail("no completion");
    }

    private void assertRefused(final Pair pair, final long offset)
    {
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, write(pair, offset));
        assertEquals(1, reported.size(), "reported once: " + reported);
    }

    private void assertVictimIntact() throws IOException
    {
        assertEquals(new String(VICTIM_CONTENT, StandardCharsets.US_ASCII),
            new String(Files.readAllBytes(victim), StandardCharsets.US_ASCII));
    }

    private MemorySegment regionTable(final Arena arena) throws IOException
    {
        try (FileChannel channel = FileChannel.open(((ShmDevice)responder).directory().resolve(REGIONS_FILE),
            StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            return channel.map(FileChannel.MapMode.READ_WRITE, 0, REGIONS_LENGTH, arena);
        }
    }

    private Path ringFile(final MemoryRegion ring) throws IOException
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment table = regionTable(arena);
            final long base = (long)(ring.rkey() & 0xFFFF) * ENTRY_LENGTH;
            final byte[] path = new byte[table.get(ValueLayout.JAVA_INT, base + ENTRY_PATH_LENGTH_OFFSET)];
            MemorySegment.copy(table, ValueLayout.JAVA_BYTE, base + ENTRY_PATH_OFFSET, path, 0, path.length);
            return Path.of(new String(path, StandardCharsets.UTF_8));
        }
    }

    private void tamperPath(final MemoryRegion ring, final String path) throws IOException
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment table = regionTable(arena);
            final long base = (long)(ring.rkey() & 0xFFFF) * ENTRY_LENGTH;
            final byte[] bytes = path.getBytes(StandardCharsets.UTF_8);
            table.set(ValueLayout.JAVA_INT, base + ENTRY_PATH_LENGTH_OFFSET, bytes.length);
            MemorySegment.copy(bytes, 0, table, ValueLayout.JAVA_BYTE, base + ENTRY_PATH_OFFSET, bytes.length);
            table.set(ValueLayout.JAVA_LONG, base + ENTRY_FILE_OFFSET_OFFSET, 0);
        }
    }

    private void tamperLength(final MemoryRegion ring, final long length) throws IOException
    {
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment table = regionTable(arena);
            final long base = (long)(ring.rkey() & 0xFFFF) * ENTRY_LENGTH;
            table.set(ValueLayout.JAVA_LONG, base + ENTRY_LENGTH_OFFSET, length);
        }
    }
}
