package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.HeaderWriter;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.verbus.media.PublicationLog;
import org.agrona.BitUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * A single-writer appender for tests (bus-core owns the real one): Aeron's frame layout, tail first, frame
 * length last with release semantics, padding at term ends, and the publisher limit and connection state the
 * media sets. It also plays the driver's conductor: it cleans the log behind the limit and publishes the clean
 * position that caps the limit.
 */
final class TestLogAppender
{
    static final long NOT_CONNECTED = -1;
    static final long BACK_PRESSURED = -2;

    private final PublicationLog log;
    private final UnsafeBuffer metaData;
    private final UnsafeBuffer[] terms;
    private final HeaderWriter headerWriter;
    private final int termLength;
    private final int initialTermId;
    private int termCount;
    private int termOffset;
    private boolean cleansLikeTheConductor = true;

    TestLogAppender(final PublicationLog log)
    {
        this.log = log;
        this.metaData = log.logBuffers().metaDataBuffer();
        this.terms = log.logBuffers().termBuffers();
        this.headerWriter = HeaderWriter.newInstance(LogBufferDescriptor.defaultFrameHeader(metaData));
        this.termLength = log.termLength();
        this.initialTermId = log.initialTermId();
    }

    /** From now on this appender no longer cleans the log: a conductor that has fallen behind. */
    void stopCleaning()
    {
        cleansLikeTheConductor = false;
    }

    long position()
    {
        return (long)termCount * termLength + termOffset;
    }

    long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        if (!log.isConnected())
        {
            return NOT_CONNECTED;
        }
        final int frameLength = DataHeaderFlyweight.HEADER_LENGTH + length;
        final int alignedLength = BitUtil.align(frameLength, FrameDescriptor.FRAME_ALIGNMENT);
        final long limit = log.publisherLimit().getVolatile();
        clean(limit);
        if (termOffset + alignedLength > termLength)
        {
            if (position() + (termLength - termOffset) + alignedLength > limit)
            {
                return BACK_PRESSURED;
            }
            pad();
        }
        if (position() + alignedLength > limit)
        {
            return BACK_PRESSURED;
        }
        final int termId = initialTermId + termCount;
        final int partition = termCount % LogBufferDescriptor.PARTITION_COUNT;
        final UnsafeBuffer term = terms[partition];
        final int frameOffset = termOffset;
        termOffset += alignedLength;
        LogBufferDescriptor.rawTailVolatile(metaData, partition, LogBufferDescriptor.packTail(termId, termOffset));
        headerWriter.write(term, frameOffset, frameLength, termId);
        term.putBytes(frameOffset + DataHeaderFlyweight.HEADER_LENGTH, buffer, offset, length);
        FrameDescriptor.frameLengthOrdered(term, frameOffset, frameLength);
        return position();
    }

    /**
     * What the driver's conductor does for a media log: zero the log up to one term behind the limit, then
     * publish the clean position, which lets the media raise the limit further.
     */
    private void clean(final long limit)
    {
        final long target = limit - termLength;
        long cleaned = log.cleanPosition();
        if (!cleansLikeTheConductor || target <= cleaned)
        {
            return;
        }
        while (cleaned < target)
        {
            final int termOffset = (int)(cleaned & (termLength - 1));
            final int length = (int)Math.min(termLength - termOffset, target - cleaned);
            terms[LogBufferDescriptor.indexByPosition(cleaned, log.positionBitsToShift())]
                .setMemory(termOffset, length, (byte)0);
            cleaned += length;
        }
        log.cleanPosition(cleaned);
    }

    private void pad()
    {
        final int termId = initialTermId + termCount;
        final int partition = termCount % LogBufferDescriptor.PARTITION_COUNT;
        final UnsafeBuffer term = terms[partition];
        final int padLength = termLength - termOffset;
        if (padLength > 0)
        {
            final int frameOffset = termOffset;
            LogBufferDescriptor.rawTailVolatile(metaData, partition, LogBufferDescriptor.packTail(termId, termLength));
            headerWriter.write(term, frameOffset, padLength, termId);
            FrameDescriptor.frameType(term, frameOffset, FrameDescriptor.PADDING_FRAME_TYPE);
            FrameDescriptor.frameLengthOrdered(term, frameOffset, padLength);
        }
        LogBufferDescriptor.rotateLog(metaData, termCount, termId);
        termCount++;
        termOffset = 0;
    }
}
