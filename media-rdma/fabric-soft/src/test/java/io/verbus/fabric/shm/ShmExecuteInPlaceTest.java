package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A plain WRITE posted on an empty shm send queue runs in the poster's call without being stored first. These are the
 * cases where it must not, or cannot finish there, and the queue has to take over without reordering or losing a
 * completion: a completion queue that is full when the WRITE has run, a WR still waiting ahead of the post, and a
 * WRITE with immediate that finds no receive posted (it runs in the post once one is).
 */
class ShmExecuteInPlaceTest
{
    private static final int CQ_DEPTH = 4;
    private static final int REGION_BYTES = 64 * 1024;
    private static final int SLOT_BYTES = 64;

    private Path directory;
    private Fabric fabric;
    private CompletionQueue initiatorCq;
    private QueuePair initiatorQp;
    private QueuePair responderQp;
    private CompletionQueue responderCq;
    private MemoryRegion source;
    private MemoryRegion target;
    private MemoryRegion receiveBuffer;
    private final WorkRequestBatch batch = new WorkRequestBatch(8);
    private final WorkCompletion[] completions = WorkCompletion.newArray(16);

    @BeforeEach
    void before() throws IOException
    {
        directory = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-fabric-inplace-");
        fabric = Fabrics.open("shm", new FabricContext().shmDirectory(directory).hugetlbfsDirectory("none"));
        final Device initiator = fabric.openDevice();
        final Device responder = fabric.openDevice();
        final ProtectionDomain initiatorPd = initiator.allocateProtectionDomain();
        final ProtectionDomain responderPd = responder.allocateProtectionDomain();
        initiatorCq = initiator.createCompletionQueue(CQ_DEPTH);
        initiatorQp = initiatorPd.createQueuePair(new QueuePairConfig().completionQueue(initiatorCq)
            .maxSendWorkRequests(64).maxInlineData(SLOT_BYTES));
        responderCq = responder.createCompletionQueue(16);
        responderQp = responderPd.createQueuePair(new QueuePairConfig()
            .completionQueue(responderCq).maxReceiveWorkRequests(4));
        initiatorQp.connect(responderQp.localConnectionInfo());
        responderQp.connect(initiatorQp.localConnectionInfo());
        source = initiatorPd.registerMemory(initiator.allocateMemory(REGION_BYTES), AccessFlags.LOCAL_WRITE);
        target = responderPd.registerMemory(responder.allocateMemory(REGION_BYTES),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        receiveBuffer = responderPd.registerMemory(responder.allocateMemory(4096), AccessFlags.LOCAL_WRITE);
    }

    @AfterEach
    void after() throws IOException
    {
        fabric.close();
        ShmFiles.deleteRecursively(directory);
    }

    @Test
    void shouldReportEveryWriteInOrderWhenTheCompletionQueueFillsUp()
    {
        final int writes = CQ_DEPTH * 3;
        for (int i = 0; i < writes; i++)
        {
            final int flags = SendFlags.SIGNALED | (i % 2 == 0 ? SendFlags.INLINE : 0);
            post(i, flags);
        }
        final List<Long> wrIds = pollAll(writes);
        for (int i = 0; i < writes; i++)
        {
            assertEquals(i + 1, wrIds.get(i), "completion " + i);
            assertSlotHolds(i, i + 1);
        }
        assertEquals(0, initiatorCq.poll(completions, completions.length), "nothing reported twice");
    }

    @Test
    void shouldNotRunAWriteAheadOfASendThatWaitsForAReceive()
    {
        post(0, SendFlags.SIGNALED | SendFlags.INLINE);
        batch.clear();
        fill(1, 2);
        batch.add().send(2, source.address() + SLOT_BYTES, 8, source.lkey(), SendFlags.SIGNALED);
        fill(2, 3);
        batch.add().write(3, source.address() + 2L * SLOT_BYTES, SLOT_BYTES, source.lkey(),
            target.address() + 2L * SLOT_BYTES, target.rkey(), SendFlags.SIGNALED);
        assertEquals(PostResult.OK, initiatorQp.postSend(batch));
        post(3, SendFlags.SIGNALED | SendFlags.INLINE); // a later post finds the SEND still waiting

        assertEquals(1, initiatorCq.poll(completions, completions.length), "only the first WRITE ran");
        assertEquals(1, completions[0].wrId());
        assertSlotHolds(0, 1);
        assertSlotEmpty(2);
        assertSlotEmpty(3);

        assertEquals(PostResult.OK, responderQp.postReceive(77, receiveBuffer.address(), 64, receiveBuffer.lkey()));
        final List<Long> wrIds = pollAll(3);
        assertEquals(List.of(2L, 3L, 4L), wrIds);
        assertSlotHolds(2, 3);
        assertSlotHolds(3, 4);
    }

    @Test
    void shouldNotRunAWriteAheadOfAWriteWithImmediateThatWaitsForAReceive()
    {
        fill(0, 1);
        batch.clear().add().writeWithImmediate(1, source.address(), SLOT_BYTES, source.lkey(), target.address(),
            target.rkey(), 0x1234, SendFlags.SIGNALED);
        assertEquals(PostResult.OK, initiatorQp.postSend(batch));
        post(1, SendFlags.SIGNALED | SendFlags.INLINE);

        assertEquals(0, initiatorCq.poll(completions, completions.length), "both wait for a receive");
        assertSlotEmpty(0);
        assertSlotEmpty(1);

        assertEquals(PostResult.OK, responderQp.postReceive(77, receiveBuffer.address(), 64, receiveBuffer.lkey()));
        assertEquals(List.of(1L, 2L), pollAll(2));
        assertSlotHolds(0, 1);
        assertSlotHolds(1, 2);
        final WorkCompletion received = pollResponder();
        assertEquals(WorkCompletionOpcode.RECV_RDMA_WITH_IMM, received.opcode());
        assertEquals(0x1234, received.immediateData());
        assertEquals(77, received.wrId());

        // A receive is posted now: the next WRITE with immediate runs in the post and is delivered the same way.
        assertEquals(PostResult.OK, responderQp.postReceive(78, receiveBuffer.address(), 64, receiveBuffer.lkey()));
        fill(2, 3);
        batch.clear().add().writeWithImmediate(3, source.address() + 2L * SLOT_BYTES, SLOT_BYTES, source.lkey(),
            target.address() + 2L * SLOT_BYTES, target.rkey(), 0x5678, SendFlags.SIGNALED);
        assertEquals(PostResult.OK, initiatorQp.postSend(batch));
        assertEquals(List.of(3L), pollAll(1));
        assertSlotHolds(2, 3);
        final WorkCompletion second = pollResponder();
        assertEquals(0x5678, second.immediateData());
        assertEquals(78, second.wrId());
    }

    private WorkCompletion pollResponder()
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (System.nanoTime() < deadlineNs)
        {
            if (1 == responderCq.poll(completions, 1))
            {
                assertEquals(WorkCompletionStatus.SUCCESS, completions[0].status(), completions[0].toString());
                return completions[0];
            }
        }
        throw new AssertionError("no receive completion");
    }

    private void post(final int slot, final int flags)
    {
        fill(slot, slot + 1);
        batch.clear().add().write(slot + 1, source.address() + (long)slot * SLOT_BYTES, SLOT_BYTES, source.lkey(),
            target.address() + (long)slot * SLOT_BYTES, target.rkey(), flags);
        assertEquals(PostResult.OK, initiatorQp.postSend(batch));
    }

    private void fill(final int slot, final int value)
    {
        source.segment().asSlice((long)slot * SLOT_BYTES, SLOT_BYTES).fill((byte)value);
    }

    private List<Long> pollAll(final int expected)
    {
        final List<Long> wrIds = new ArrayList<>();
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (wrIds.size() < expected && System.nanoTime() < deadlineNs)
        {
            final int polled = initiatorCq.poll(completions, 1);
            for (int i = 0; i < polled; i++)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, completions[i].status(), completions[i].toString());
                if (completions[i].opcode() == WorkCompletionOpcode.RDMA_WRITE)
                {
                    assertEquals(SLOT_BYTES, completions[i].byteLength());
                }
                wrIds.add(completions[i].wrId());
            }
        }
        assertEquals(expected, wrIds.size(), "completions " + wrIds);
        return wrIds;
    }

    private void assertSlotHolds(final int slot, final int value)
    {
        final MemorySegment bytes = target.segment().asSlice((long)slot * SLOT_BYTES, SLOT_BYTES);
        for (int i = 0; i < SLOT_BYTES; i++)
        {
            assertEquals((byte)value, bytes.get(ValueLayout.JAVA_BYTE, i), "slot " + slot + " byte " + i);
        }
    }

    private void assertSlotEmpty(final int slot)
    {
        assertSlotHolds(slot, 0);
    }
}
