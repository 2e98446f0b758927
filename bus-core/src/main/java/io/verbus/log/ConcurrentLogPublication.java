package io.verbus.log;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.media.PublicationLog;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import static io.aeron.logbuffer.LogBufferDescriptor.TERM_TAIL_COUNTERS_OFFSET;
import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * A publication many threads may offer to at once. Each append claims its space with one atomic add on the active
 * term's tail, so writers never wait for each other; the writer whose claim crosses the term end pads the term,
 * rotates the log and returns ADMIN_ACTION so the caller retries in the new term.
 * <p>
 * Every argument is checked before any space is claimed: a bad call throws {@code IllegalArgumentException} and
 * leaves no hole. A claim that is never committed or aborted (or a writer that dies between claim and commit) does
 * leave one; the conductor pads over it after {@code Verbus.Context.publicationUnblockTimeoutNs} (see
 * {@link LogUnblocker}).
 */
public final class ConcurrentLogPublication extends LogPublication
{
    public ConcurrentLogPublication(
        final String channel,
        final PublicationLog publicationLog,
        final AtomicCounter backPressureEvents,
        final CloseListener closeListener)
    {
        super(channel, publicationLog, backPressureEvents, closeListener);
    }

    /**
     * A concurrent publication on a log another one made: as Aeron's, the concurrent publications of one channel
     * and stream share a log (one session, one order).
     *
     * @param registrationId this publication's own id (the log keeps the id of the publication that made it).
     */
    public ConcurrentLogPublication(
        final String channel,
        final PublicationLog publicationLog,
        final AtomicCounter backPressureEvents,
        final CloseListener closeListener,
        final long registrationId)
    {
        super(channel, publicationLog, backPressureEvents, closeListener, registrationId);
    }

    public long offer(
        final DirectBuffer bufferOne, final int offsetOne, final int lengthOne,
        final DirectBuffer bufferTwo, final int offsetTwo, final int lengthTwo)
    {
        checkOfferArguments(bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo);
        if (isClosed)
        {
            return CLOSED;
        }

        final int framedLength = FrameWriter.framedLength(lengthOne + lengthTwo, maxPayloadLength);
        final long limit = publisherLimit.getVolatile();
        final int termCount = LogBufferDescriptor.activeTermCount(metaDataBuffer);
        final int partitionIndex = LogBufferDescriptor.indexByTermCount(termCount);
        final int tailCounterOffset = TERM_TAIL_COUNTERS_OFFSET + (partitionIndex * Long.BYTES);
        final long rawTail = metaDataBuffer.getLongVolatile(tailCounterOffset);
        final int termId = LogBufferDescriptor.termId(rawTail);
        if (termCount != termId - initialTermId)
        {
            return ADMIN_ACTION;
        }

        final long position = termBeginPosition(termId) + LogBufferDescriptor.termOffset(rawTail, termLength);
        if (position >= limit)
        {
            return backPressureStatus(position, framedLength);
        }

        final long claimedRawTail = metaDataBuffer.getAndAddLong(tailCounterOffset, framedLength);
        final int claimedTermId = LogBufferDescriptor.termId(claimedRawTail);
        final long claimedOffset = claimedRawTail & 0xFFFF_FFFFL;
        final long resultingOffset = claimedOffset + framedLength;
        final UnsafeBuffer termBuffer = termBuffers[partitionIndex];
        if (resultingOffset > termLength)
        {
            return onTermEnd(termBuffer, claimedTermId, claimedOffset);
        }

        FrameWriter.writeMessage(termBuffer, (int)claimedOffset, maxPayloadLength, sessionId, streamId, claimedTermId,
            bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo);

        return termBeginPosition(claimedTermId) + resultingOffset;
    }

    public long tryClaim(final int length, final BufferClaim bufferClaim)
    {
        checkClaimArguments(length, bufferClaim);
        if (isClosed)
        {
            return CLOSED;
        }

        final int frameLength = length + HEADER_LENGTH;
        final int framedLength = FrameWriter.align(frameLength);
        final long limit = publisherLimit.getVolatile();
        final int termCount = LogBufferDescriptor.activeTermCount(metaDataBuffer);
        final int partitionIndex = LogBufferDescriptor.indexByTermCount(termCount);
        final int tailCounterOffset = TERM_TAIL_COUNTERS_OFFSET + (partitionIndex * Long.BYTES);
        final long rawTail = metaDataBuffer.getLongVolatile(tailCounterOffset);
        final int termId = LogBufferDescriptor.termId(rawTail);
        if (termCount != termId - initialTermId)
        {
            return ADMIN_ACTION;
        }

        final long position = termBeginPosition(termId) + LogBufferDescriptor.termOffset(rawTail, termLength);
        if (position >= limit)
        {
            return backPressureStatus(position, framedLength);
        }

        final long claimedRawTail = metaDataBuffer.getAndAddLong(tailCounterOffset, framedLength);
        final int claimedTermId = LogBufferDescriptor.termId(claimedRawTail);
        final long claimedOffset = claimedRawTail & 0xFFFF_FFFFL;
        final long resultingOffset = claimedOffset + framedLength;
        final UnsafeBuffer termBuffer = termBuffers[partitionIndex];
        if (resultingOffset > termLength)
        {
            return onTermEnd(termBuffer, claimedTermId, claimedOffset);
        }

        FrameWriter.writeHeader(termBuffer, (int)claimedOffset, frameLength, FrameDescriptor.UNFRAGMENTED,
            HeaderFlyweight.HDR_TYPE_DATA, sessionId, streamId, claimedTermId);
        bufferClaim.wrap(termBuffer, (int)claimedOffset, frameLength);

        return termBeginPosition(claimedTermId) + resultingOffset;
    }

    public long offer(
        final DirectBuffer bufferOne, final int offsetOne, final int lengthOne,
        final DirectBuffer bufferTwo, final int offsetTwo, final int lengthTwo,
        final ReservedValueSupplier reservedValueSupplier)
    {
        checkOfferArguments(bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo);
        if (isClosed)
        {
            return CLOSED;
        }

        final int framedLength = FrameWriter.framedLength(lengthOne + lengthTwo, maxPayloadLength);
        final long position = claim(framedLength);
        if (position < 0)
        {
            return position;
        }
        FrameWriter.writeMessage(termBuffer(position), termOffset(position), maxPayloadLength, sessionId, streamId,
            termId(position), bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo, reservedValueSupplier);
        return position + framedLength;
    }

    public long offer(final DirectBufferVector[] vectors, final ReservedValueSupplier reservedValueSupplier)
    {
        final int length = checkVectors(vectors);
        if (isClosed)
        {
            return CLOSED;
        }

        final int framedLength = FrameWriter.framedLength(length, maxPayloadLength);
        final long position = claim(framedLength);
        if (position < 0)
        {
            return position;
        }
        FrameWriter.writeMessage(termBuffer(position), termOffset(position), maxPayloadLength, sessionId, streamId,
            termId(position), vectors, length, reservedValueSupplier);
        return position + framedLength;
    }

    /**
     * Claims {@code framedLength} bytes of the active term with one atomic add, as {@code offer} does: the space is
     * the caller's to write and publish frame by frame.
     *
     * @return the stream position where the claimed space starts, or a negative code (nothing to write then).
     */
    private long claim(final int framedLength)
    {
        final long limit = publisherLimit.getVolatile();
        final int termCount = LogBufferDescriptor.activeTermCount(metaDataBuffer);
        final int partitionIndex = LogBufferDescriptor.indexByTermCount(termCount);
        final int tailCounterOffset = TERM_TAIL_COUNTERS_OFFSET + (partitionIndex * Long.BYTES);
        final long rawTail = metaDataBuffer.getLongVolatile(tailCounterOffset);
        final int termId = LogBufferDescriptor.termId(rawTail);
        if (termCount != termId - initialTermId)
        {
            return ADMIN_ACTION;
        }

        final long position = termBeginPosition(termId) + LogBufferDescriptor.termOffset(rawTail, termLength);
        if (position >= limit)
        {
            return backPressureStatus(position, framedLength);
        }

        final long claimedRawTail = metaDataBuffer.getAndAddLong(tailCounterOffset, framedLength);
        final int claimedTermId = LogBufferDescriptor.termId(claimedRawTail);
        final long claimedOffset = claimedRawTail & 0xFFFF_FFFFL;
        if (claimedOffset + framedLength > termLength)
        {
            return onTermEnd(termBuffers[partitionIndex], claimedTermId, claimedOffset);
        }

        return termBeginPosition(claimedTermId) + claimedOffset;
    }

    /** @return the term buffer a claimed position (below the term end) lies in. */
    private UnsafeBuffer termBuffer(final long position)
    {
        return termBuffers[LogBufferDescriptor.indexByPosition(position, positionBitsToShift)];
    }

    private int termOffset(final long position)
    {
        return (int)position & (termLength - 1);
    }

    private int termId(final long position)
    {
        return initialTermId + (int)(position >>> positionBitsToShift);
    }

    private long onTermEnd(final UnsafeBuffer termBuffer, final int termId, final long claimedOffset)
    {
        // Only the claim that straddles the end pads; later claims start past the end and write nothing.
        if (claimedOffset < termLength)
        {
            FrameWriter.writePaddingToTermEnd(termBuffer, (int)claimedOffset, sessionId, streamId, termId);
        }

        final long nextTermBeginPosition = termBeginPosition(termId) + termLength;
        if (nextTermBeginPosition >= maxPossiblePosition)
        {
            return MAX_POSITION_EXCEEDED;
        }

        LogBufferDescriptor.rotateLog(metaDataBuffer, termId - initialTermId, termId);
        return ADMIN_ACTION;
    }
}
