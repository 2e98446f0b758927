package io.verbus.bench.contender;

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
import io.verbus.fabric.WorkRequestBatch;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.foreign.MemorySegment;

/**
 * One end of a fabric connection for the seed comparison: its own fabric, device, protection domain, completion
 * queue, RC queue pair and one registered region laid out as
 * <pre>
 *   0        doorbell: a checked word the peer WRITEs (a sequence number or a stream position)
 *   64       credit:   a checked word the peer WRITEs (the position it has consumed)
 *   128      outbound position slots, 16 bytes each, the sources of doorbell and credit WRITEs
 *   4096     inbound ring the peer WRITEs messages into
 *   ...      outbound staging, the source of this end's messages
 *   ...      receive slots for two-sided RECVs
 * </pre>
 * Everything here belongs to the one thread that drives this end: its send queue, its CQ and its receive queue.
 * <p>
 * A checked word is 16 bytes, the value then its complement. A responder may place a WRITE's bytes in any order and
 * at any pace (rxe promises no order even within one WRITE, and the Soft-RoCE guest's emulated CPU can stall a copy
 * halfway), so a reader polling a plain 8-byte word can see part of the new value and part of the old, stable for as
 * long as the copy stalls: a position that was never written, which the seed's stream once counted as messages.
 */
final class FabricPeer implements AutoCloseable
{
    static final int DOORBELL_OFFSET = 0;
    static final int CREDIT_OFFSET = 64;
    static final int POSITION_SLOTS_OFFSET = 128;
    static final int POSITION_SLOTS = 64;
    /** Bytes of a checked word: the value, then its complement. */
    static final int CHECKED_WORD_LENGTH = 2 * Long.BYTES;
    /** What {@link #readCheckedWord} returns while the word is torn or was never written (no value is negative). */
    static final long NO_WORD = -1;
    static final int RING_OFFSET = 4096;
    static final int RING_CAPACITY = 4 * 1024 * 1024;
    static final int STAGING_LENGTH = 64 * 1024;
    static final int RECEIVE_SLOTS = 256;
    static final int SEND_QUEUE_DEPTH = 256;
    static final int SIGNAL_EVERY = 16;
    static final int REQUESTED_INLINE = 64;
    private static final int COMPLETION_BATCH = 64;

    private final Fabric fabric;
    private final Device device;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    final QueuePair qp;
    private final MemorySegment memory;
    private final MemoryRegion region;
    final UnsafeBuffer buffer;
    final int stagingOffset;
    final int receiveSlotsOffset;
    final int receiveSlotLength;
    final WorkRequestBatch batch = new WorkRequestBatch(4);
    private final WorkCompletion[] completions = WorkCompletion.newArray(COMPLETION_BATCH);
    private long remoteAddress;
    private int remoteKey;
    private long postedWorkRequests;
    private long reapedWorkRequests;
    private int lastReceiveSlot = -1;
    private int lastReceiveLength;
    private int positionSlot;

    FabricPeer(final String providerName, final FabricContext context, final int maxMessageLength)
    {
        receiveSlotLength = align(Math.max(maxMessageLength, 64), 64);
        stagingOffset = RING_OFFSET + RING_CAPACITY;
        receiveSlotsOffset = stagingOffset + STAGING_LENGTH;
        final long length = receiveSlotsOffset + (long)RECEIVE_SLOTS * receiveSlotLength;

        fabric = Fabrics.open(providerName, context);
        Device openedDevice = null;
        ProtectionDomain openedPd = null;
        CompletionQueue openedCq = null;
        QueuePair openedQp = null;
        MemoryRegion registered = null;
        try
        {
            openedDevice = fabric.openDevice();
            openedPd = openedDevice.allocateProtectionDomain();
            openedCq = openedDevice.createCompletionQueue(4 * (SEND_QUEUE_DEPTH + RECEIVE_SLOTS));
            openedQp = openedPd.createQueuePair(new QueuePairConfig()
                .completionQueue(openedCq)
                .maxSendWorkRequests(SEND_QUEUE_DEPTH)
                .maxReceiveWorkRequests(RECEIVE_SLOTS)
                .maxInlineData(REQUESTED_INLINE));
            final MemorySegment allocated = openedDevice.allocateMemory(length);
            allocated.fill((byte)0);
            registered = openedPd.registerMemory(allocated, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            memory = allocated;
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(registered, openedQp, openedCq, openedPd, openedDevice, fabric);
            throw ex;
        }
        device = openedDevice;
        pd = openedPd;
        cq = openedCq;
        qp = openedQp;
        region = registered;
        buffer = new UnsafeBuffer(region.address(), (int)length);
    }

    /**
     * Connects two ends to each other and posts every receive slot.
     */
    static void connect(final FabricPeer a, final FabricPeer b)
    {
        a.qp.connect(b.qp.localConnectionInfo());
        b.qp.connect(a.qp.localConnectionInfo());
        a.remoteAddress = b.region.address();
        a.remoteKey = b.region.rkey();
        b.remoteAddress = a.region.address();
        b.remoteKey = a.region.rkey();
        for (int slot = 0; slot < RECEIVE_SLOTS; slot++)
        {
            a.postReceive(slot);
            b.postReceive(slot);
        }
    }

    long address(final int offset)
    {
        return region.address() + offset;
    }

    /**
     * Posts the WRs in {@link #batch} after filling their flags: INLINE where the length allows, SIGNALED on every
     * {@link #SIGNAL_EVERY}th so the send queue is reaped.
     *
     * @return true when posted; false when the send queue was full (completions were reaped; retry).
     */
    boolean post()
    {
        final int size = batch.size();
        if (postedWorkRequests + size - reapedWorkRequests > SEND_QUEUE_DEPTH - SIGNAL_EVERY)
        {
            pollCompletions();
            return false;
        }
        for (int i = 0; i < size; i++)
        {
            final long index = postedWorkRequests + i;
            int flags = batch.get(i).length() <= qp.maxInlineData() ? SendFlags.INLINE : 0;
            if (index % SIGNAL_EVERY == SIGNAL_EVERY - 1)
            {
                flags |= SendFlags.SIGNALED;
            }
            batch.get(i).wrId(index).flags(flags);
        }
        final int result = qp.postSend(batch);
        if (PostResult.OK != result)
        {
            if (PostResult.SEND_QUEUE_FULL == result && 0 == batch.postedCount())
            {
                pollCompletions();
                return false;
            }
            throw new IllegalStateException("post failed: " + PostResult.toString(result) + " after " +
                batch.postedCount() + " of " + size + " WRs");
        }
        postedWorkRequests += size;
        return true;
    }

    /** Adds a WRITE of {@code length} bytes at local {@code offset} to remote {@code remoteOffset}. */
    void addWrite(final int offset, final int length, final int remoteOffset)
    {
        batch.add().write(0, address(offset), length, region.lkey(), remoteAddress + remoteOffset, remoteKey, 0);
    }

    /**
     * Adds a WRITE of a checked word ({@code value}, not negative, and its complement) to the peer's word at
     * {@code remoteOffset}, from a rotating source slot.
     */
    void addWriteOfCheckedWord(final long value, final int remoteOffset)
    {
        final int slotOffset = POSITION_SLOTS_OFFSET + (positionSlot++ % POSITION_SLOTS) * CHECKED_WORD_LENGTH;
        buffer.putLong(slotOffset, value);
        buffer.putLong(slotOffset + Long.BYTES, ~value);
        addWrite(slotOffset, CHECKED_WORD_LENGTH, remoteOffset);
    }

    /** Adds a SEND of {@code length} bytes at local {@code offset}. */
    void addSend(final int offset, final int length)
    {
        batch.add().send(0, address(offset), length, region.lkey(), 0);
    }

    /**
     * Reaps send completions and takes at most one received message, whose slot and length are then available
     * through {@link #lastReceiveSlot()} until {@link #repostLastReceive()}.
     *
     * @return the number of messages received (0 or 1).
     */
    int pollCompletions()
    {
        final int count = cq.poll(completions, lastReceiveSlot < 0 ? COMPLETION_BATCH : 1);
        int received = 0;
        for (int i = 0; i < count; i++)
        {
            final WorkCompletion completion = completions[i];
            if (!completion.isSuccess())
            {
                throw new IllegalStateException("work completion failed: " + completion);
            }
            if (WorkCompletionOpcode.RECV == completion.opcode())
            {
                if (lastReceiveSlot >= 0)
                {
                    repostLastReceive();
                }
                lastReceiveSlot = (int)completion.wrId();
                lastReceiveLength = completion.byteLength();
                received++;
            }
            else
            {
                reapedWorkRequests = Math.max(reapedWorkRequests, completion.wrId() + 1);
            }
        }
        return received;
    }

    /**
     * Reaps completions and counts every message received, reposting their slots at once.
     *
     * @return messages received.
     */
    int drainReceives()
    {
        final int count = cq.poll(completions, COMPLETION_BATCH);
        int received = 0;
        for (int i = 0; i < count; i++)
        {
            final WorkCompletion completion = completions[i];
            if (!completion.isSuccess())
            {
                throw new IllegalStateException("work completion failed: " + completion);
            }
            if (WorkCompletionOpcode.RECV == completion.opcode())
            {
                postReceive((int)completion.wrId());
                received++;
            }
            else
            {
                reapedWorkRequests = Math.max(reapedWorkRequests, completion.wrId() + 1);
            }
        }
        return received;
    }

    int lastReceiveOffset()
    {
        return receiveSlotsOffset + lastReceiveSlot * receiveSlotLength;
    }

    int lastReceiveLength()
    {
        return lastReceiveLength;
    }

    void repostLastReceive()
    {
        postReceive(lastReceiveSlot);
        lastReceiveSlot = -1;
    }

    private void postReceive(final int slot)
    {
        final int result = qp.postReceive(slot, address(receiveSlotsOffset + slot * receiveSlotLength),
            receiveSlotLength, region.lkey());
        if (PostResult.OK != result)
        {
            throw new IllegalStateException("post receive failed: " + PostResult.toString(result));
        }
    }

    /**
     * Reads the checked word at {@code offset}: the value, its complement, then the value again, so that a copy in
     * progress between the first two reads (whose halves would agree) still shows as a changed value.
     *
     * @return the value the peer last wrote whole, or {@link #NO_WORD} while it is torn or was never written.
     */
    long readCheckedWord(final int offset)
    {
        final long value = buffer.getLongVolatile(offset);
        final long complement = buffer.getLongVolatile(offset + Long.BYTES);
        if (value != ~complement || value != buffer.getLongVolatile(offset) || value < 0)
        {
            return NO_WORD;
        }
        return value;
    }

    private static int align(final int value, final int alignment)
    {
        return (value + alignment - 1) & -alignment;
    }

    @Override
    public void close()
    {
        CloseHelper.quietCloseAll(qp, cq, region, pd, device, fabric);
    }
}
