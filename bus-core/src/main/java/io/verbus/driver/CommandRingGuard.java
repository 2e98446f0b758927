package io.verbus.driver;

import org.agrona.BitUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;

/**
 * Keeps the clients' command ring ({@code cnc.dat}) moving whatever one client leaves in it. Every client process
 * maps the ring read-write, so the record at its head is looked at before the driver reads it:
 * <ul>
 *     <li>a committed record whose length cannot be a record (shorter than its header, longer than what was
 *     claimed, or running past the buffer's end) would make Agrona's read replay it on every duty cycle and never
 *     advance: it is padded over up to the producer position (or the buffer's end), dropping what it covers;</li>
 *     <li>a record claimed and never committed (its client died between the two) blocks every later command: once the
 *     head has not moved for the timeout given (the driver gives half the client liveness timeout), the ring is
 *     unblocked (Agrona's {@code unblock}, which pads over it).</li>
 * </ul>
 * Run by the thread that reads the ring, before each read.
 */
public final class CommandRingGuard
{
    private static final long NOT_BLOCKED = Long.MIN_VALUE;

    private final ManyToOneRingBuffer ring;
    private final long blockedTimeoutNs;
    private long blockedHead = -1;
    private long blockedSinceNs = NOT_BLOCKED;
    private long corruptRecords;
    private long unblocks;

    /**
     * @param ring             the clients' command ring.
     * @param blockedTimeoutNs how long an uncommitted record may hold the head before the ring is unblocked.
     */
    public CommandRingGuard(final ManyToOneRingBuffer ring, final long blockedTimeoutNs)
    {
        this.ring = ring;
        this.blockedTimeoutNs = blockedTimeoutNs;
    }

    /**
     * Look at the record at the head, repairing the ring if it must.
     *
     * @param nowNs the nano clock now.
     * @return true if there is a committed record to read at the head.
     */
    public boolean check(final long nowNs)
    {
        final long head = ring.consumerPosition();
        final long available = ring.producerPosition() - head;
        if (available <= 0)
        {
            blockedSinceNs = NOT_BLOCKED;
            return false;
        }
        final int capacity = ring.capacity();
        final int headIndex = (int)head & (capacity - 1);
        final AtomicBuffer buffer = ring.buffer();
        final int length = buffer.getIntVolatile(RecordDescriptor.lengthOffset(headIndex));
        if (length > 0)
        {
            blockedSinceNs = NOT_BLOCKED;
            final int room = (int)Math.min(available, capacity - headIndex);
            if (length < RecordDescriptor.HEADER_LENGTH || BitUtil.align(length, RecordDescriptor.ALIGNMENT) > room)
            {
                buffer.putInt(RecordDescriptor.typeOffset(headIndex), ManyToOneRingBuffer.PADDING_MSG_TYPE_ID);
                buffer.putIntRelease(RecordDescriptor.lengthOffset(headIndex), room);
                corruptRecords++;
            }
            return true;
        }
        if (NOT_BLOCKED == blockedSinceNs || head != blockedHead)
        {
            blockedHead = head;
            blockedSinceNs = nowNs;
        }
        else if (nowNs - blockedSinceNs >= blockedTimeoutNs)
        {
            blockedSinceNs = NOT_BLOCKED;
            if (ring.unblock())
            {
                unblocks++;
                return true;
            }
        }
        return false;
    }

    /**
     * @return records padded over because their length could not be a record's.
     */
    public long corruptRecords()
    {
        return corruptRecords;
    }

    /**
     * @return times an uncommitted record was unblocked.
     */
    public long unblocks()
    {
        return unblocks;
    }
}
