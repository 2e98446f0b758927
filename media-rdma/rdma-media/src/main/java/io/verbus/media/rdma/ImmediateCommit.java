package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.verbus.fabric.WorkRequest;
import io.verbus.fabric.WorkRequestOpcode;

/**
 * The publisher's half of {@code commit=imm} for one subscriber: the last data WRITE of a chain becomes an
 * RDMA_WRITE_WITH_IMM whose immediate names the new position (a chain without data, the first one at the join
 * position, puts it on its position-block WRITE), and no more of them are in flight than the subscriber keeps RECVs
 * posted for, so the responder never answers RNR. One WR per chain instead of two: the receive completion comes only
 * after that WRITE's own bytes and every earlier WRITE's are placed, so the position block adds nothing to the
 * commit and is written only as the heartbeat (and the end of stream).
 * <p>
 * The immediate is the position in frame-alignment units, truncated to 32 bits ({@link #immediateOf}): the image
 * rebuilds the full position from its last accepted bound, since a new position is never more than two terms
 * (at most 2 GiB, far below 2^32 x 32 bytes) ahead of it.
 * <p>
 * Credits: each WRITE_WITH_IMM consumes one of the subscriber's RECVs until its polling thread reaps the completion
 * and posts the RECV again. The image can only have consumed past a position once it reaped the immediate that
 * published it (and, in order, every earlier one), so an immediate whose position is at or below the consumed
 * position the subscriber reports in its status slot has had its RECV replenished. The subscriber posts one RECV more
 * than it grants, for the first immediate (at the join position, which counts as consumed from the start).
 * <p>
 * Owner-only (the sender's thread); allocates nothing.
 */
final class ImmediateCommit
{
    private static final int POSITION_SHIFT = Integer.numberOfTrailingZeros(FrameDescriptor.FRAME_ALIGNMENT);

    private final long[] inFlightPositions;
    private long head;
    private long tail;
    private long lastPosition = -1;
    long immediatesPosted;
    long creditStalls;

    /**
     * @param credits WRITE_WITH_IMMs the subscriber lets this publisher keep in flight (its CONNECT).
     */
    ImmediateCommit(final int credits)
    {
        inFlightPositions = new long[credits];
    }

    /**
     * @param position a frame-aligned stream position.
     * @return the immediate that names it.
     */
    static int immediateOf(final long position)
    {
        return (int)(position >>> POSITION_SHIFT);
    }

    /**
     * The image's side of {@link #immediateOf}: the position an immediate names, given the last accepted one.
     *
     * @param immediate the received immediate.
     * @param base      the last accepted position (the join position before any).
     * @return the position, at or above {@code base} (a position behind it comes back far ahead and fails the
     * image's range check).
     */
    static long positionOf(final int immediate, final long base)
    {
        final long delta = (immediate - immediateOf(base)) & 0xFFFF_FFFFL;
        return base + (delta << POSITION_SHIFT);
    }

    /**
     * @param consumedPosition what the subscriber last reported consumed.
     * @return true when one more WRITE_WITH_IMM may be posted; false counts a stall (the data waits).
     */
    boolean hasCredit(final long consumedPosition)
    {
        final long[] positions = inFlightPositions;
        while (head < tail && positions[(int)(head % positions.length)] <= consumedPosition)
        {
            head++;
        }
        if (tail - head < positions.length)
        {
            return true;
        }
        creditStalls++;
        return false;
    }

    /**
     * Turn a chain's WRITE (its last data WRITE, or the position-block WRITE of a chain without data) into a
     * WRITE_WITH_IMM when it publishes a new position; a heartbeat at the same position stays a plain WRITE and costs
     * the subscriber no RECV.
     *
     * @param write    the WRITE that ends what the chain places.
     * @param position the position the chain publishes.
     * @return true when it now carries an immediate: call {@link #onPosted} once posted.
     */
    boolean markIfNew(final WorkRequest write, final long position)
    {
        if (position == lastPosition)
        {
            return false;
        }
        write.opcode(WorkRequestOpcode.RDMA_WRITE_WITH_IMM).immediateData(immediateOf(position));
        return true;
    }

    /**
     * @param position the position of the WRITE_WITH_IMM just posted.
     */
    void onPosted(final long position)
    {
        inFlightPositions[(int)(tail % inFlightPositions.length)] = position;
        tail++;
        lastPosition = position;
        immediatesPosted++;
    }
}
