package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.verbus.common.VarHandles;
import io.verbus.media.rdma.protocol.SlotLayout;
import org.agrona.concurrent.AtomicBuffer;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The image's bound over the position block the publisher WRITEs into this subscriber's memory after the data:
 * {@code [position, timestamp, check]}. Read by the subscriber's polling thread itself, inside {@code poll}, so the
 * NIC's WRITE of the position is the only step between the publisher and the application.
 * <p>
 * What it keeps from the block is validated first: the check word must match (a WRITE places its bytes in no
 * promised order, so a block read half-written fails the check and the last good bound stands; counted as torn),
 * the position must not go backwards, must be frame-aligned, and must be at most two terms ahead of what the image
 * consumed (the ring holds three). The accepted bound lives in this object, in memory the remote side cannot write.
 * A block whose check word has not changed since the last accepted one costs one acquire load, and the block is not
 * read at all while the image has not consumed up to the bound it already holds.
 * <p>
 * Single writer: only the polling thread calls {@link #acquire(long)}. The receiver agent reads {@link #bound()},
 * {@link #tornReads()} and {@link #corruptReason()} for counters and to drop the connection.
 */
final class PositionBlockBound extends AcceptedBound
{
    private static final VarHandle TORN_READS = VarHandles.field(MethodHandles.lookup(), "tornReads", long.class);

    private final AtomicBuffer positionBlock;

    // Polling thread only, except through the VarHandle above for the agent's reads.
    private long lastCheck;
    @SuppressWarnings("unused") private long tornReads;

    /**
     * @param positionBlock the registered block the publisher writes, at offset 0.
     * @param termLength    of the log.
     * @param joinPosition  where the image starts: the bound until the publisher writes one.
     */
    PositionBlockBound(final AtomicBuffer positionBlock, final int termLength, final long joinPosition)
    {
        super(termLength, joinPosition);
        this.positionBlock = positionBlock;
    }

    public long acquire(final long consumerPosition)
    {
        if (null != invalidReason())
        {
            return INVALID; // sticky: the block that failed may be overwritten by a good one, the image must not go on
        }
        final long current = current();
        if (current > consumerPosition)
        {
            // Frames below the accepted bound are still unread: leave the block alone. The publisher rewrites it after
            // every chain, so each read of it takes its cache line from the publisher's core and makes the
            // publisher's next WRITE of it wait to take the line back; a subscriber behind a streaming publisher
            // would pay that once per poll, and the publisher once per message, for a bound it cannot use yet.
            return current;
        }
        final long check = positionBlock.getLongVolatile(SlotLayout.CHECK_OFFSET);
        if (check == lastCheck)
        {
            return current;
        }
        final long position = positionBlock.getLongVolatile(SlotLayout.VALUE_OFFSET);
        final long timestamp = positionBlock.getLongVolatile(SlotLayout.TIMESTAMP_OFFSET);
        if (check != SlotLayout.check(position, timestamp) ||
            check != positionBlock.getLongVolatile(SlotLayout.CHECK_OFFSET))
        {
            if (0 != check)
            {
                TORN_READS.setOpaque(this, (long)TORN_READS.getOpaque(this) + 1);
            }
            return current; // a WRITE still landing: the last good bound stands
        }
        lastCheck = check;
        if (position == current)
        {
            return current; // a heartbeat
        }
        if (position < current || !isWithinReach(position, consumerPosition))
        {
            return reject("position " + position + " (bound " + current + ", consumed " + consumerPosition +
                "): backwards, misaligned or more than two terms ahead");
        }
        accept(position);
        return position;
    }

    /**
     * Reads the block itself (any thread): a consistent block stamped {@link SlotLayout#END_OF_STREAM_TIMESTAMP}
     * carries the position the publication ended at. The publisher writes it after its last data WRITE on the same
     * QP, so every frame below it has landed.
     */
    public long endOfStreamPosition()
    {
        return endOfStreamAtOrAbove(current());
    }

    /**
     * @param bound the bound accepted so far: an end of stream below it names data already delivered as never sent,
     *              which the publisher never writes, so it is not believed.
     * @return the end-of-stream position of a consistent block at or above {@code bound}, else Long.MAX_VALUE.
     */
    long endOfStreamAtOrAbove(final long bound)
    {
        final long check = positionBlock.getLongVolatile(SlotLayout.CHECK_OFFSET);
        final long position = positionBlock.getLongVolatile(SlotLayout.VALUE_OFFSET);
        final long timestamp = positionBlock.getLongVolatile(SlotLayout.TIMESTAMP_OFFSET);
        if (SlotLayout.END_OF_STREAM_TIMESTAMP == timestamp && check == SlotLayout.check(position, timestamp) &&
            check == positionBlock.getLongVolatile(SlotLayout.CHECK_OFFSET) && position >= bound &&
            0 == (position & (FrameDescriptor.FRAME_ALIGNMENT - 1)))
        {
            return position;
        }
        return Long.MAX_VALUE;
    }

    /** @return position blocks read half-written by the polling thread (any thread). */
    public long tornReads()
    {
        return (long)TORN_READS.getOpaque(this);
    }
}
