package io.verbus.log;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.ExclusivePublication;
import io.verbus.media.PublicationLog;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import static io.aeron.logbuffer.LogBufferDescriptor.TERM_TAIL_COUNTERS_OFFSET;
import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
import static io.aeron.protocol.DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET;
import static io.aeron.protocol.DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET;
import static io.aeron.protocol.DataHeaderFlyweight.TERM_ID_FIELD_OFFSET;
import static io.aeron.protocol.DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET;

/**
 * A publication with one writer thread: it keeps the tail in its own fields and publishes it with a release
 * store, so an append costs no atomic read-modify-write. In direct mode it sends from the writer thread through a
 * {@link DirectSendHandOff}, which lets the driver's sender agent drive the media while the writer is idle: an
 * offer sends before it returns, and a claim is sent by its own {@code commit()} or {@code abort()}
 * ({@link ClaimCommitSignal}).
 * <p>
 * Like Aeron's appender it advances the tail before it writes the frame: a reader that sees the new tail reads the
 * frame's length with acquire semantics and stops at a length of 0. That relies on the log past the tail being
 * zero, which the publisher limit guarantees ({@link io.verbus.media.PublicationLog#maxPublisherLimit()}).
 */
public final class ExclusiveLogPublication extends LogPublication implements ExclusivePublication
{
    private static final System.Logger LOGGER = System.getLogger("io.verbus.Verbus");
    private static final long RESYNC_REPORT_INTERVAL_NS = java.util.concurrent.TimeUnit.SECONDS.toNanos(1);

    private final DirectSendHandOff directSender;
    /** True when a claim's commit sends it; else the next call sends what was committed (the fallback). */
    private final boolean sendOnCommit;
    /** How far past the limit a single writer's rotation can put the next term's start: one framed message. */
    private final int maxRotationPastLimit;
    private int termCount;
    private int termId;
    private int termOffset;
    private int partitionIndex;
    private long termBeginPosition;
    private long resyncCount;
    private long lastResyncReportNs;

    /**
     * @param directSender the hand-off of the media sender this publication's thread sends with in direct mode,
     *                     or null.
     */
    public ExclusiveLogPublication(
        final String channel,
        final PublicationLog publicationLog,
        final AtomicCounter backPressureEvents,
        final CloseListener closeListener,
        final DirectSendHandOff directSender)
    {
        super(channel, publicationLog, backPressureEvents, closeListener);
        this.directSender = directSender;
        this.sendOnCommit = null != directSender && ClaimCommitSignal.isAvailable();
        this.maxRotationPastLimit = FrameWriter.framedLength(maxMessageLength, maxPayloadLength);
        termCount = LogBufferDescriptor.activeTermCount(metaDataBuffer);
        partitionIndex = LogBufferDescriptor.indexByTermCount(termCount);
        final long rawTail = LogBufferDescriptor.rawTailVolatile(metaDataBuffer, partitionIndex);
        termId = LogBufferDescriptor.termId(rawTail);
        termOffset = LogBufferDescriptor.termOffset(rawTail, termLength);
        termBeginPosition = termBeginPosition(termId);
    }

    /** @return true when this publication sends from its own thread. */
    public boolean isDirect()
    {
        return null != directSender;
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
        final long position = termBeginPosition + termOffset;
        if (position >= publisherLimit.getVolatile())
        {
            return blocked(position, framedLength);
        }

        final int resultingOffset = termOffset + framedLength;
        if (resultingOffset > termLength)
        {
            return rotate(position);
        }

        final UnsafeBuffer termBuffer = termBuffers[partitionIndex];
        putRawTail(resultingOffset);
        FrameWriter.writeMessage(termBuffer, termOffset, maxPayloadLength, sessionId, streamId, termId,
            bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo);
        termOffset = resultingOffset;

        if (null != directSender)
        {
            directSender.writerSendNow();
        }

        return termBeginPosition + resultingOffset;
    }

    public long tryClaim(final int length, final BufferClaim bufferClaim)
    {
        checkClaimArguments(length, bufferClaim);
        if (isClosed)
        {
            return CLOSED;
        }
        if (null != directSender && !sendOnCommit)
        {
            // Without the commit signal, send what earlier claims committed since the last call.
            directSender.writerSendNow();
        }

        final int frameLength = length + HEADER_LENGTH;
        final int framedLength = FrameWriter.align(frameLength);
        final long position = termBeginPosition + termOffset;
        if (position >= publisherLimit.getVolatile())
        {
            return blocked(position, framedLength);
        }

        final int resultingOffset = termOffset + framedLength;
        if (resultingOffset > termLength)
        {
            return rotate(position);
        }

        final UnsafeBuffer termBuffer = termBuffers[partitionIndex];
        putRawTail(resultingOffset);
        // The length is stored negated first, so an abandoned claim can be padded to its exact length.
        FrameWriter.writeHeader(termBuffer, termOffset, frameLength, FrameDescriptor.UNFRAGMENTED,
            HeaderFlyweight.HDR_TYPE_DATA, sessionId, streamId, termId);
        bufferClaim.wrap(termBuffer, termOffset, frameLength);
        if (sendOnCommit)
        {
            ClaimCommitSignal.arm(bufferClaim, this);
        }
        termOffset = resultingOffset;

        return termBeginPosition + resultingOffset;
    }

    /**
     * A claim of this publication was committed or aborted: send it now, from the committing thread, as an offer
     * would have. The hand-off keeps the sender single-owner whichever thread commits.
     */
    void onClaimCommitted()
    {
        if (!isClosed)
        {
            directSender.writerSendNow();
        }
    }

    public int flush()
    {
        if (null == directSender || isClosed)
        {
            return 0;
        }
        return directSender.writerSendNow() + directSender.writerDoWork();
    }

    public long position()
    {
        return isClosed ? CLOSED : termBeginPosition + termOffset;
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
        final long claimed = claim(framedLength);
        if (claimed < 0)
        {
            return claimed;
        }
        FrameWriter.writeMessage(termBuffers[partitionIndex], termOffset, maxPayloadLength, sessionId, streamId,
            termId, bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo, reservedValueSupplier);
        return appended(framedLength);
    }

    public long offer(final DirectBufferVector[] vectors, final ReservedValueSupplier reservedValueSupplier)
    {
        final int length = checkVectors(vectors);
        if (isClosed)
        {
            return CLOSED;
        }

        final int framedLength = FrameWriter.framedLength(length, maxPayloadLength);
        final long claimed = claim(framedLength);
        if (claimed < 0)
        {
            return claimed;
        }
        FrameWriter.writeMessage(termBuffers[partitionIndex], termOffset, maxPayloadLength, sessionId, streamId,
            termId, vectors, length, reservedValueSupplier);
        return appended(framedLength);
    }

    public int termId()
    {
        return termId;
    }

    public int termOffset()
    {
        return termOffset;
    }

    public long appendPadding(final int length)
    {
        final int maxFramedLength = FrameWriter.framedLength(maxMessageLength, maxPayloadLength);
        if (length > maxFramedLength)
        {
            throw new IllegalArgumentException(
                "padding exceeds maxFramedLength of " + maxFramedLength + ", length=" + length + " on " + channel);
        }
        if (length < 0)
        {
            throw new IllegalArgumentException("padding length must not be negative: " + length);
        }
        if (isClosed)
        {
            return CLOSED;
        }

        final int frameLength = length + HEADER_LENGTH;
        final int framedLength = FrameWriter.align(frameLength);
        final long claimed = claim(framedLength);
        if (claimed < 0)
        {
            return claimed;
        }
        FrameWriter.writePadding(termBuffers[partitionIndex], termOffset, frameLength, sessionId, streamId, termId);
        return appended(framedLength);
    }

    public long offerBlock(final MutableDirectBuffer buffer, final int offset, final int length)
    {
        if (isClosed)
        {
            return CLOSED;
        }

        if (termOffset >= termLength)
        {
            // The term is full to its end: move to the next one, as Aeron does, and offer there.
            final long rotated = rotate(termBeginPosition + termOffset);
            if (MAX_POSITION_EXCEEDED == rotated)
            {
                return rotated;
            }
        }

        final long position = termBeginPosition + termOffset;
        if (position >= publisherLimit.getVolatile())
        {
            return blocked(position, length);
        }

        checkBlock(buffer, offset, length);
        putRawTail(termOffset + length);
        FrameWriter.writeBlock(termBuffers[partitionIndex], termOffset, buffer, offset, length);
        return appended(length);
    }

    /**
     * Aeron's checks of a block (it fits in the term; its first frame is a data frame of this publication at the
     * current term offset and term id), plus the ones without which the log itself would break: the block is whole
     * aligned frames and lies within the buffer.
     */
    private void checkBlock(final DirectBuffer buffer, final int offset, final int length)
    {
        OfferArguments.checkNotNull(buffer, "offerBlock: buffer");
        final int remaining = termLength - termOffset;
        if (length > remaining)
        {
            throw new IllegalArgumentException(
                "invalid block length " + length + ", remaining space in term is " + remaining);
        }
        if (length < HEADER_LENGTH || 0 != (length & (FrameDescriptor.FRAME_ALIGNMENT - 1)))
        {
            throw new IllegalArgumentException("invalid block length " + length + ": must be whole frames, a " +
                "multiple of " + FrameDescriptor.FRAME_ALIGNMENT + " of at least " + HEADER_LENGTH);
        }
        if (offset < 0 || length > buffer.capacity() - offset)
        {
            throw new IllegalArgumentException("block offset " + offset + " and length " + length +
                " exceed the buffer's capacity " + buffer.capacity());
        }

        final int frameType = HeaderFlyweight.HDR_TYPE_DATA;
        final int blockTermOffset = buffer.getInt(offset + TERM_OFFSET_FIELD_OFFSET);
        final int blockSessionId = buffer.getInt(offset + SESSION_ID_FIELD_OFFSET);
        final int blockStreamId = buffer.getInt(offset + STREAM_ID_FIELD_OFFSET);
        final int blockTermId = buffer.getInt(offset + TERM_ID_FIELD_OFFSET);
        final int blockFrameType = buffer.getShort(offset + HeaderFlyweight.TYPE_FIELD_OFFSET) & 0xFFFF;
        if (blockTermOffset != termOffset ||
            blockSessionId != sessionId ||
            blockStreamId != streamId ||
            blockTermId != termId ||
            blockFrameType != frameType)
        {
            throw new IllegalArgumentException("improperly formatted block:" +
                " termOffset=" + blockTermOffset + " (expected=" + termOffset + ")," +
                " sessionId=" + blockSessionId + " (expected=" + sessionId + ")," +
                " streamId=" + blockStreamId + " (expected=" + streamId + ")," +
                " termId=" + blockTermId + " (expected=" + termId + ")," +
                " frameType=" + blockFrameType + " (expected=" + frameType + ")");
        }
    }

    /**
     * Claims {@code framedLength} bytes at the tail of the current term, as {@code offer} does: on success the space
     * starts at {@link #termOffset} and the caller writes it, then calls {@link #appended(int)}.
     *
     * @return the stream position the space starts at, or a negative code (nothing to write then).
     */
    private long claim(final int framedLength)
    {
        final long position = termBeginPosition + termOffset;
        if (position >= publisherLimit.getVolatile())
        {
            return blocked(position, framedLength);
        }
        final int resultingOffset = termOffset + framedLength;
        if (resultingOffset > termLength)
        {
            return rotate(position);
        }
        putRawTail(resultingOffset);
        return position;
    }

    /** Moves the tail past what the caller wrote into claimed space and sends it in direct mode. */
    private long appended(final int framedLength)
    {
        termOffset += framedLength;
        if (null != directSender)
        {
            directSender.writerSendNow();
        }
        return termBeginPosition + termOffset;
    }

    private long blocked(final long position, final int framedLength)
    {
        if (null != directSender)
        {
            // Take in new credit now rather than wait for the sender agent to notice this writer is idle.
            directSender.writerDoWork();
        }
        if (position != publicationLog.producerPosition())
        {
            resyncWithLog(position);
            return ADMIN_ACTION;
        }
        return backPressureStatus(position, framedLength);
    }

    /**
     * This publication's own idea of its tail no longer matches the log's: only possible when two threads offered
     * at once, each moving the fields the other was using (a single writer, even one handed between threads, keeps
     * them equal between calls). Left so, a writer that believes itself a window ahead of the log waits for credit
     * that never comes, as nothing it waits on is in the log. Take the log's tail as the truth and go on from there;
     * the driver pads over whatever corrupt frames the race left below it.
     */
    private void resyncWithLog(final long position)
    {
        final int activeTermCount = LogBufferDescriptor.activeTermCount(metaDataBuffer);
        final long rawTail = LogBufferDescriptor.rawTailVolatile(
            metaDataBuffer, LogBufferDescriptor.indexByTermCount(activeTermCount));
        termId = LogBufferDescriptor.termId(rawTail);
        termCount = termId - initialTermId;
        partitionIndex = LogBufferDescriptor.indexByTermCount(termCount);
        termOffset = LogBufferDescriptor.termOffset(rawTail, termLength);
        termBeginPosition = termBeginPosition(termId);
        if (termCount != activeTermCount)
        {
            putRawTail(termOffset);
            LogBufferDescriptor.activeTermCountOrdered(metaDataBuffer, termCount);
        }
        resyncCount++;
        final long nowNs = System.nanoTime();
        if (0 == lastResyncReportNs || nowNs - lastResyncReportNs >= RESYNC_REPORT_INTERVAL_NS)
        {
            // At most one line a second: while two threads still race, this happens on every other blocked offer.
            lastResyncReportNs = nowNs;
            LOGGER.log(System.Logger.Level.ERROR, "ExclusivePublication " + channel + " stream " + streamId +
                " session " + sessionId + ": its position " + position + " left its log's tail " +
                (termBeginPosition + termOffset) + " (two threads offering at once?); it goes on from the log's " +
                "tail (" + resyncCount + " times so far). An ExclusivePublication takes one thread at a time; use " +
                "a Publication for several.");
        }
    }

    private long rotate(final long position)
    {
        if (termBeginPosition + termLength - publisherLimit.getVolatile() > maxRotationPastLimit)
        {
            // A single writer rotates only from below its limit, so the next term starts at most one message past
            // it. Two threads offering at once each rotate from the other's fields and skip whole terms, ending in
            // a partition the subscribers have not read yet, which no padding can repair: refuse the rotation.
            return blocked(position, 0);
        }
        final UnsafeBuffer termBuffer = termBuffers[partitionIndex];
        if (termOffset < termLength)
        {
            putRawTail(termLength);
            FrameWriter.writePaddingToTermEnd(termBuffer, termOffset, sessionId, streamId, termId);
            termOffset = termLength; // the tail is at the term end now, also when the log cannot rotate further
        }

        if (termBeginPosition + termLength >= maxPossiblePosition)
        {
            return MAX_POSITION_EXCEEDED;
        }

        final int nextTermId = termId + 1;
        final int nextTermCount = termCount + 1;
        final int nextIndex = LogBufferDescriptor.indexByTermCount(nextTermCount);
        metaDataBuffer.putLongRelease(
            TERM_TAIL_COUNTERS_OFFSET + (nextIndex * Long.BYTES), LogBufferDescriptor.packTail(nextTermId, 0));
        LogBufferDescriptor.activeTermCountOrdered(metaDataBuffer, nextTermCount);

        termId = nextTermId;
        termCount = nextTermCount;
        partitionIndex = nextIndex;
        termOffset = 0;
        termBeginPosition += termLength;

        if (null != directSender)
        {
            directSender.writerSendNow();
        }
        return ADMIN_ACTION;
    }

    private void putRawTail(final int offset)
    {
        metaDataBuffer.putLongRelease(
            TERM_TAIL_COUNTERS_OFFSET + (partitionIndex * Long.BYTES), LogBufferDescriptor.packTail(termId, offset));
    }
}
