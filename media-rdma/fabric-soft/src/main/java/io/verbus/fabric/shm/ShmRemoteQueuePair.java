package io.verbus.fabric.shm;

import io.verbus.fabric.QueuePairState;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import static io.verbus.fabric.shm.ShmLayout.*;

/**
 * The initiator's view of the peer QP's file: its state, its posted RECVs, and the slots where this side
 * deposits SENDs and WRITE_WITH_IMM notices. Only the one connected initiator writes the deposit counter.
 */
final class ShmRemoteQueuePair
{
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();

    private final MemorySegment file;
    private final int protectionDomainId;
    private final int rqDepth;
    private final int slotCapacity;
    private final long headerLength;
    private final long slotLength;

    /**
     * @param file the peer's QP file, mapped whole.
     * @param path of the file, for errors.
     * @throws IllegalArgumentException when the geometry it announces does not fit the file: every later slot
     *                                  offset is computed from it, so it is checked once here.
     */
    ShmRemoteQueuePair(final MemorySegment file, final java.nio.file.Path path)
    {
        this.file = file;
        protectionDomainId = file.get(ValueLayout.JAVA_INT, QP_PD_OFFSET);
        rqDepth = file.get(ValueLayout.JAVA_INT, QP_RQ_DEPTH_OFFSET);
        slotCapacity = file.get(ValueLayout.JAVA_INT, QP_SLOT_CAPACITY_OFFSET);
        if (rqDepth < 1 || rqDepth > MAX_RQ_DEPTH || slotCapacity < 0 || slotCapacity > ShmDevice.SEND_SLOT_CAPACITY ||
            file.byteSize() < qpFileLength(rqDepth, slotCapacity))
        {
            throw new IllegalArgumentException("shm peer QP file " + path + " announces " + rqDepth + " receive " +
                "slots of " + slotCapacity + " bytes, which its " + file.byteSize() + " bytes cannot hold");
        }
        headerLength = qpHeaderLength(rqDepth);
        slotLength = qpSlotLength(slotCapacity);
    }

    /** Most receive slots a QP file may announce: the device's largest queue. */
    static final int MAX_RQ_DEPTH = 16384;

    int state()
    {
        return (int)INT.getAcquire(file, (long)QP_STATE_OFFSET);
    }

    /**
     * Put the responder QP in ERR, as a responder does after a remote access or invalid request error.
     */
    void markError()
    {
        try
        {
            final int current = state();
            if (current != QP_DESTROYED)
            {
                INT.compareAndSet(file, (long)QP_STATE_OFFSET, current, QueuePairState.ERR.code());
            }
        }
        catch (final InternalError | IllegalStateException ex)
        {
            // The peer truncated its QP file under the mapping, or this QP closed and unmapped it while a progress
            // that outlived the close's wait was failing a WR: nothing left to mark.
        }
    }

    int protectionDomainId()
    {
        return protectionDomainId;
    }

    int slotCapacity()
    {
        return slotCapacity;
    }

    /**
     * @return the n of the peer QP's SRQ file {@code srq-<n>}, or 0 if it has its own receive queue.
     */
    int sharedReceiveQueueNumber()
    {
        return file.get(ValueLayout.JAVA_INT, QP_SRQ_OFFSET);
    }

    /**
     * @return deposits the peer QP has consumed (kept only by a QP with an SRQ).
     */
    long depositsConsumed()
    {
        return (long)LONG.getAcquire(file, (long)QP_CONSUMED_OFFSET);
    }

    int depositSlots()
    {
        return rqDepth;
    }

    long receivesPosted()
    {
        return (long)LONG.getAcquire(file, (long)QP_RECV_POSTED_OFFSET);
    }

    int receiveLength(final long index)
    {
        return file.get(ValueLayout.JAVA_INT, QP_RECV_LENGTHS_OFFSET + 4L * (int)(index % rqDepth));
    }

    /**
     * Fill slot {@code index} and publish it.
     */
    void deposit(
        final long index,
        final MemorySegment source,
        final long sourceOffset,
        final int payloadLength,
        final int status,
        final int opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate,
        final long srqIndex,
        final boolean solicited)
    {
        final long slot = headerLength + (index % rqDepth) * slotLength;
        if (null != source && payloadLength > 0)
        {
            MemorySegment.copy(source, sourceOffset, file, slot + SLOT_HEADER_LENGTH, payloadLength);
        }
        file.set(ValueLayout.JAVA_INT, slot + SLOT_STATUS_OFFSET, status);
        file.set(ValueLayout.JAVA_INT, slot + SLOT_OPCODE_OFFSET, opcode);
        file.set(ValueLayout.JAVA_INT, slot + SLOT_LENGTH_OFFSET, byteLength);
        file.set(ValueLayout.JAVA_INT, slot + SLOT_IMMEDIATE_OFFSET, immediate);
        file.set(ValueLayout.JAVA_INT, slot + SLOT_HAS_IMMEDIATE_OFFSET, hasImmediate ? 1 : 0);
        file.set(ValueLayout.JAVA_INT, slot + SLOT_SOLICITED_OFFSET, solicited ? 1 : 0);
        file.set(ValueLayout.JAVA_LONG, slot + SLOT_SRQ_INDEX_OFFSET, srqIndex);
        LONG.setRelease(file, (long)QP_DEPOSITED_OFFSET, index + 1);
    }
}
