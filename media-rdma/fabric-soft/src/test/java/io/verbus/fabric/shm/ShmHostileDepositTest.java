package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

import static io.verbus.fabric.shm.ShmLayout.QP_DEPOSITED_OFFSET;
import static io.verbus.fabric.shm.ShmLayout.QP_FILE_PREFIX;
import static io.verbus.fabric.shm.ShmLayout.SLOT_HEADER_LENGTH;
import static io.verbus.fabric.shm.ShmLayout.SLOT_LENGTH_OFFSET;
import static io.verbus.fabric.shm.ShmLayout.SLOT_OPCODE_OFFSET;
import static io.verbus.fabric.shm.ShmLayout.SLOT_STATUS_OFFSET;
import static io.verbus.fabric.shm.ShmLayout.SLOT_STATUS_OK;
import static io.verbus.fabric.shm.ShmLayout.qpHeaderLength;
import static io.verbus.fabric.shm.ShmLayout.qpSlotLength;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The connected peer maps this QP's file read-write and deposits SENDs and WRITE_WITH_IMM notices into its receive
 * slots. One that skips its own side's checks (or writes the file by hand) must not make a poll throw (the rdma
 * media's publisher reaps its send and receive completions from one CQ in the sender's duty cycle, and a throw there
 * on every cycle froze the publication for every subscriber), write past the posted receive, or complete receives
 * that were never posted: each such deposit puts the QP in ERR and flushes what was posted, as a NIC does with a
 * malformed packet.
 */
class ShmHostileDepositTest
{
    private static final int RQ_DEPTH = 4;
    private static final int RECEIVE_LENGTH = 64;
    private static final long FIRST_WR_ID = 100;
    private static final int UNKNOWN_OPCODE = 77;
    private static final byte PEER_BYTE = 0x66;

    private ShmTwoDevices devices;
    private Device initiator;
    private Device responder;
    private final WorkCompletion[] completions = WorkCompletion.newArray(64);

    private QueuePair target;
    private CompletionQueue targetCq;
    private MemorySegment receiveMemory;
    private Path targetFile;

    @BeforeEach
    void before() throws IOException
    {
        devices = new ShmTwoDevices("verbus-fabric-deposit-");
        initiator = devices.initiator;
        responder = devices.responder;
    }

    @AfterEach
    void after() throws IOException
    {
        devices.close();
    }

    @Test
    void shouldFailASendLongerThanThePostedReceiveWithoutWritingPastIt() throws IOException
    {
        connect(1, RECEIVE_LENGTH);
        deposit(0, WorkCompletionOpcode.RECV.code(), 4096, 1);

        assertEquals(1, pollWithoutThrowing());
        assertEquals(WorkCompletionStatus.LOC_LEN_ERR, completions[0].status());
        assertEquals(FIRST_WR_ID, completions[0].wrId());
        for (int i = 0; i < 4096; i++)
        {
            assertEquals(0, receiveMemory.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of the receive memory");
        }
        assertEquals(QueuePairState.ERR, target.state());
    }

    @Test
    void shouldErrOnAnUnknownOpcodeAndFlushTheReceivesInsteadOfThrowingOnEveryPoll() throws IOException
    {
        connect(2, RECEIVE_LENGTH);
        deposit(0, UNKNOWN_OPCODE, 8, 1);

        assertFlushedFromFirst(2);
        assertEquals(0, pollWithoutThrowing(), "nothing more, and no throw, on later polls");
        assertEquals(0, target.progress());
    }

    @Test
    void shouldErrOnAPayloadLengthBeyondTheSlot() throws IOException
    {
        connect(1, 4 << 20);
        deposit(0, WorkCompletionOpcode.RECV.code(), 2 << 20, 1);

        assertFlushedFromFirst(1);
        assertEquals(0, receiveMemory.get(ValueLayout.JAVA_BYTE, 0));
    }

    @Test
    void shouldErrOnANegativeLength() throws IOException
    {
        connect(1, RECEIVE_LENGTH);
        deposit(0, WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code(), -1, 1);

        assertFlushedFromFirst(1);
    }

    @Test
    void shouldNotCompleteReceivesThatWereNeverPosted() throws IOException
    {
        connect(1, RECEIVE_LENGTH);
        deposit(0, WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code(), 0, 40);

        assertEquals(1, pollWithoutThrowing(), "the one posted receive, and none of the 39 that were not");
        assertEquals(WorkCompletionStatus.SUCCESS, completions[0].status());
        assertEquals(FIRST_WR_ID, completions[0].wrId());
        assertEquals(QueuePairState.ERR, target.state());
        assertEquals(0, pollWithoutThrowing());
    }

    @Test
    void shouldErrAQueuePairWithNoReceivesPostedWhenThePeerDepositsAnyway() throws IOException
    {
        connect(0, RECEIVE_LENGTH); // shaped like the publisher's QP: it posts no receive
        deposit(0, UNKNOWN_OPCODE, 0, 1);

        assertEquals(0, pollWithoutThrowing());
        assertEquals(0, target.progress());
        assertEquals(QueuePairState.ERR, target.state());
    }

    private void assertFlushedFromFirst(final int posted)
    {
        assertEquals(posted, pollWithoutThrowing());
        for (int i = 0; i < posted; i++)
        {
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, completions[i].status(), "receive " + i);
            assertEquals(FIRST_WR_ID + i, completions[i].wrId());
        }
        assertEquals(QueuePairState.ERR, target.state());
    }

    private int pollWithoutThrowing()
    {
        return targetCq.poll(completions, completions.length);
    }

    private void connect(final int receivesPosted, final int receiveLength)
    {
        final ProtectionDomain targetPd = responder.allocateProtectionDomain();
        receiveMemory = responder.allocateMemory(Math.max(receiveLength, 4096));
        final MemoryRegion receiveRegion = targetPd.registerMemory(receiveMemory, AccessFlags.LOCAL_WRITE);
        targetCq = responder.createCompletionQueue(64);
        target = targetPd.createQueuePair(new QueuePairConfig().completionQueue(targetCq)
            .maxSendWorkRequests(16).maxReceiveWorkRequests(RQ_DEPTH));
        final QueuePair peer = initiator.allocateProtectionDomain().createQueuePair(new QueuePairConfig()
            .completionQueue(initiator.createCompletionQueue(16)).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
        peer.connect(target.localConnectionInfo());
        target.connect(peer.localConnectionInfo());
        for (int i = 0; i < receivesPosted; i++)
        {
            assertEquals(PostResult.OK,
                target.postReceive(FIRST_WR_ID + i, receiveRegion.address(), receiveLength, receiveRegion.lkey()));
        }
        targetFile = ((ShmDevice)responder).directory().resolve(QP_FILE_PREFIX + target.qpNumber());
    }

    /** What a peer that skips its own checks can write: one slot, any opcode and length, and any deposit count. */
    private void deposit(final long index, final int opcode, final int byteLength, final long depositCount)
        throws IOException
    {
        try (Arena arena = Arena.ofConfined();
            FileChannel channel = FileChannel.open(targetFile, StandardOpenOption.READ, StandardOpenOption.WRITE))
        {
            final MemorySegment file = channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
            final long slot =
                qpHeaderLength(RQ_DEPTH) + (index % RQ_DEPTH) * qpSlotLength(ShmDevice.SEND_SLOT_CAPACITY);
            file.asSlice(slot + SLOT_HEADER_LENGTH, ShmDevice.SEND_SLOT_CAPACITY).fill(PEER_BYTE);
            file.set(ValueLayout.JAVA_INT, slot + SLOT_STATUS_OFFSET, SLOT_STATUS_OK);
            file.set(ValueLayout.JAVA_INT, slot + SLOT_OPCODE_OFFSET, opcode);
            file.set(ValueLayout.JAVA_INT, slot + SLOT_LENGTH_OFFSET, byteLength);
            file.set(ValueLayout.JAVA_LONG, QP_DEPOSITED_OFFSET, depositCount);
        }
    }
}
