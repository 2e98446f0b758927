package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.log.FrameWriter;
import io.verbus.media.rdma.protocol.HandshakeException;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A joining subscriber's catch-up by RDMA READ: copies the frames of {@code [from, to)} from the publisher's log
 * (a READ-only registration of its three term partitions, granted in the ACCEPT) into the same places of this
 * subscriber's ring, with no publisher CPU, then checks that what arrived is a whole run of frames of this stream
 * that ends exactly at the live join position, so the image can read it and go on live with no gap and no duplicate.
 * <p>
 * Runs on the subscription's control thread, before the connection is handed to the receiver: it owns the QP and
 * its completion queue alone, and drains every completion it caused. Off the data path: it may allocate.
 */
final class CatchUpReader
{
    /** Bytes per READ: a few work requests per term, well within every provider's message size. */
    static final int READ_CHUNK_LENGTH = 64 * 1024;
    private static final long WR_ID_BASE = Long.MIN_VALUE;
    private static final long POLL_SLEEP_MS = 1;

    private final WorkRequestBatch batch = new WorkRequestBatch(1);
    private final WorkCompletion[] completions = WorkCompletion.newArray(4);

    /**
     * READ {@code [from, to)} into the ring and check it.
     *
     * @return the bytes read.
     * @throws HandshakeException when a READ fails (e.g. a remote access error), does not complete before the
     *                            deadline, or the frames are not a whole run from {@code from} to {@code to}.
     */
    long read(
        final ImageConnection connection,
        final long from,
        final long to,
        final long logAddress,
        final int logRkey,
        final long deadlineNs) throws HandshakeException
    {
        final int termLength = connection.termLength;
        final int bits = LogBufferDescriptor.positionBitsToShift(termLength);
        final MemoryRegion ringRegion = connection.ringRegion;
        long position = from;
        long wrId = WR_ID_BASE;
        while (position < to)
        {
            final int index = LogBufferDescriptor.indexByPosition(position, bits);
            final int termOffset = (int)(position & (termLength - 1));
            final int length = (int)Math.min(Math.min(to - position, termLength - termOffset), READ_CHUNK_LENGTH);
            final long placeOffset = (long)index * termLength + termOffset;
            batch.clear();
            batch.add().read(wrId, ringRegion.address() + placeOffset, length, ringRegion.lkey(),
                logAddress + placeOffset, logRkey, SendFlags.SIGNALED);
            final int result = connection.qp.postSend(batch);
            if (PostResult.OK != result)
            {
                throw new HandshakeException(HandshakeException.Reason.RESOURCES,
                    "catch-up READ post failed: " + PostResult.toString(result));
            }
            awaitCompletion(connection.cq, wrId, position, length, deadlineNs);
            wrId++;
            position += length;
        }
        checkFrames(connection, from, to, bits);
        return to - from;
    }

    private void awaitCompletion(
        final CompletionQueue cq, final long wrId, final long position, final int length, final long deadlineNs)
        throws HandshakeException
    {
        while (true)
        {
            final int count = cq.poll(completions, completions.length);
            for (int i = 0; i < count; i++)
            {
                final WorkCompletion completion = completions[i];
                if (!completion.isSuccess())
                {
                    throw new HandshakeException(HandshakeException.Reason.RESOURCES, "catch-up READ of " + length +
                        " bytes at position " + position + " failed: " + completion.status());
                }
                if (completion.wrId() == wrId)
                {
                    return;
                }
            }
            if (System.nanoTime() - deadlineNs > 0)
            {
                throw new HandshakeException(HandshakeException.Reason.TIMEOUT, "catch-up READ of " + length +
                    " bytes at position " + position + " did not complete in time");
            }
            if (0 == count)
            {
                ControlThreads.sleep(POLL_SLEEP_MS);
            }
        }
    }

    /**
     * Every frame from {@code from} must be a data or padding frame of this session and stream whose header names
     * the term id and offset it sits at, with a length that fits its term, and the last must end exactly at
     * {@code to}: a {@code join-position} that is not a frame boundary, or bytes that changed under the READ, fail
     * here rather than in the image.
     */
    private static void checkFrames(final ImageConnection connection, final long from, final long to, final int bits)
        throws HandshakeException
    {
        final int termLength = connection.termLength;
        long position = from;
        while (position < to)
        {
            final UnsafeBuffer term = connection.termBuffers[LogBufferDescriptor.indexByPosition(position, bits)];
            final int termOffset = (int)(position & (termLength - 1));
            final int termId = LogBufferDescriptor.computeTermIdFromPosition(position, bits, connection.initialTermId);
            final int frameLength = term.getIntVolatile(termOffset);
            final int type = FrameWriter.frameType(term, termOffset);
            final int alignedLength = (int)Math.min(Integer.MAX_VALUE,
                ((long)frameLength + FrameDescriptor.FRAME_ALIGNMENT - 1) & ~(FrameDescriptor.FRAME_ALIGNMENT - 1));
            if (frameLength < DataHeaderFlyweight.HEADER_LENGTH ||
                (long)termOffset + alignedLength > termLength ||
                !FrameWriter.isLogFrameType(type) ||
                !FrameWriter.isHeaderAt(term, termOffset, connection.sessionId, connection.streamId, termId))
            {
                throw new HandshakeException(HandshakeException.Reason.OUT_OF_RANGE, "catch-up from " + from +
                    ": no valid frame at position " + position + " (length " + frameLength + ", type " + type +
                    "); join-position must be a frame boundary of this stream");
            }
            position += alignedLength;
        }
        if (position != to)
        {
            throw new HandshakeException(HandshakeException.Reason.OUT_OF_RANGE, "catch-up from " + from +
                ": the frames end at " + position + ", not at the join position " + to);
        }
    }
}
