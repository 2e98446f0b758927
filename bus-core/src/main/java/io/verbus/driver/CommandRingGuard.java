package io.verbus.driver;

import org.agrona.BitUtil;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RecordDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

/**
 * Keeps the clients' command ring ({@code cnc.dat}) moving whatever one client leaves in it. Every client process
 * maps the ring read-write, so the record at its head is looked at before the driver reads it:
 * <ul>
 *     <li>a committed record whose length cannot be a record (shorter than its header, longer than what was
 *     claimed, or running past the buffer's end) would make Agrona's read replay it on every duty cycle and never
 *     advance: it is padded over up to the producer position (or the buffer's end), dropping what it covers;</li>
 *     <li>a record claimed and never committed (its client died between the two) blocks every later command: once the
 *     head has not moved for the timeout given (the driver gives half the client liveness timeout), the ring is
 *     unblocked (Agrona's {@code unblock}, which pads over it);</li>
 *     <li>a producer position (tail) more than the capacity ahead of the head would make every client's claim fail:
 *     it is set back to the head (nothing can have been claimed meanwhile); a tail moved ahead over nothing ever
 *     claimed (all zeros, which Agrona's {@code unblock} cannot get past) is padded over once the head has waited
 *     the timeout. (A tail moved behind the head is not repaired: what clients then claim lands where the driver
 *     does not read until the tail passes the head again.)</li>
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
    private long tailRepairs;
    /** The tail of a stretch of nothing claimed being padded over (it wraps: the rest goes without a new wait). */
    private long nothingClaimedUntil = -1;

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
        final long tail = ring.producerPosition();
        final long available = tail - head;
        final int capacity = ring.capacity();
        if (available > capacity)
        {
            // Only a client writing the ring's tail directly does this: every claim fails, so nothing lies between.
            ring.buffer().compareAndSetLong(capacity + RingBufferDescriptor.TAIL_POSITION_OFFSET, tail, head);
            tailRepairs++;
            blockedSinceNs = NOT_BLOCKED;
            return false;
        }
        if (available <= 0)
        {
            blockedSinceNs = NOT_BLOCKED;
            return false;
        }
        final int headIndex = (int)head & (capacity - 1);
        final AtomicBuffer buffer = ring.buffer();
        final int length = buffer.getIntVolatile(RecordDescriptor.lengthOffset(headIndex));
        if (length > 0)
        {
            blockedSinceNs = NOT_BLOCKED;
            final int room = (int)Math.min(available, capacity - headIndex);
            if (length < RecordDescriptor.HEADER_LENGTH || BitUtil.align(length, RecordDescriptor.ALIGNMENT) > room)
            {
                padOver(buffer, headIndex, room);
                corruptRecords++;
            }
            return true;
        }
        if (head < nothingClaimedUntil)
        {
            final int room = (int)Math.min(nothingClaimedUntil - head, capacity - headIndex);
            if (padOverNothingClaimed(buffer, headIndex, room))
            {
                return true;
            }
            nothingClaimedUntil = -1;
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
            if (padOverNothingClaimed(buffer, headIndex, (int)Math.min(available, capacity - headIndex)))
            {
                tailRepairs++;
                nothingClaimedUntil = tail;
                return true;
            }
        }
        return false;
    }

    /**
     * Agrona's unblock found no record to pad to: between the head and the tail (or the buffer's end) nothing was
     * ever claimed (a claim writes its negative length first), so the tail was moved there by hand. Pad over it.
     */
    private static boolean padOverNothingClaimed(final AtomicBuffer buffer, final int headIndex, final int room)
    {
        for (int index = headIndex; index < headIndex + room; index += RecordDescriptor.ALIGNMENT)
        {
            if (0 != buffer.getIntVolatile(RecordDescriptor.lengthOffset(index)))
            {
                return false; // a claim in progress after all: leave it to the next timeout
            }
        }
        padOver(buffer, headIndex, room);
        return true;
    }

    /** A padding record of {@code length} bytes at the head: the driver's next read skips it. */
    private static void padOver(final AtomicBuffer buffer, final int headIndex, final int length)
    {
        buffer.putInt(RecordDescriptor.typeOffset(headIndex), ManyToOneRingBuffer.PADDING_MSG_TYPE_ID);
        buffer.putIntRelease(RecordDescriptor.lengthOffset(headIndex), length);
    }

    /**
     * @return repairs of every kind so far: a change tells the driver to say so.
     */
    public long repairs()
    {
        return corruptRecords + unblocks + tailRepairs;
    }

    /**
     * @return records padded over because their length could not be a record's.
     */
    public long corruptRecords()
    {
        return corruptRecords;
    }

    /**
     * @return times a tail that a client moved by hand was set back or padded over.
     */
    public long tailRepairs()
    {
        return tailRepairs;
    }

    /**
     * @return times an uncommitted record was unblocked.
     */
    public long unblocks()
    {
        return unblocks;
    }
}
