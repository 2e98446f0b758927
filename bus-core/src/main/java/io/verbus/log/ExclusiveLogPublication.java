package io.verbus.log;

import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.ExclusivePublication;
import io.verbus.media.PublicationLog;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;

import static io.aeron.logbuffer.LogBufferDescriptor.TERM_TAIL_COUNTERS_OFFSET;
import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

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
    private final DirectSendHandOff directSender;
    /** True when a claim's commit sends it; else the next call sends what was committed (the fallback). */
    private final boolean sendOnCommit;
    private int termCount;
    private int termId;
    private int termOffset;
    private int partitionIndex;
    private long termBeginPosition;

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
        checkMessageLength(lengthOne, lengthTwo);
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
        checkClaimLength(length);
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
        FrameWriter.writeHeader(termBuffer, termOffset, FrameDescriptor.UNFRAGMENTED, HeaderFlyweight.HDR_TYPE_DATA,
            sessionId, streamId, termId);
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

    protected void onClosed()
    {
        if (null != directSender)
        {
            directSender.close();
        }
    }

    private long blocked(final long position, final int framedLength)
    {
        if (null != directSender)
        {
            // Take in new credit now rather than wait for the sender agent to notice this writer is idle.
            directSender.writerDoWork();
        }
        return backPressureStatus(position, framedLength);
    }

    private long rotate(final long position)
    {
        final UnsafeBuffer termBuffer = termBuffers[partitionIndex];
        if (termOffset < termLength)
        {
            putRawTail(termLength);
            FrameWriter.writePaddingToTermEnd(termBuffer, termOffset, sessionId, streamId, termId);
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
