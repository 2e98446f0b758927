package io.verbus.log;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.Image;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.Position;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * Reads one publisher's log from this subscriber's position: frame by frame within the current term, acquiring
 * each frame's length before reading the frame, and skipping padding.
 * <p>
 * A <em>bounded</em> image also acquires a position counter (the bound, written by a remote sender after the data)
 * and reads nothing at or past it. Every frame header is checked against the bound and the term end: a frame that
 * is shorter than a header, runs past either, or is missing below the bound marks the image corrupt. It then goes
 * unavailable (error reported and counted, listener told) and never reads again; nothing outside the term is read.
 */
public final class LogImage implements Image
{
    /** Told when the image found a corrupt frame and closed itself. */
    @FunctionalInterface
    public interface CorruptionListener
    {
        /**
         * @param image that is now closed.
         */
        void onCorrupt(LogImage image);
    }

    private final long correlationId;
    private final int sessionId;
    private final int streamId;
    private final int initialTermId;
    private final int termLength;
    private final int termLengthMask;
    private final int positionBitsToShift;
    private final long joinPosition;
    private final UnsafeBuffer[] termBuffers;
    private final Position subscriberPosition;
    private final AtomicBuffer boundBuffer;
    private final int boundOffset;
    private final String sourceIdentity;
    private final Header header;
    private final ErrorHandler errorHandler;
    private final CorruptionListener corruptionListener;
    private volatile boolean isClosed;

    /**
     * @param correlationId      identifies the image to its owner.
     * @param sessionId          of the publisher.
     * @param streamId           of the stream.
     * @param initialTermId      of the log.
     * @param termBuffers        the three partitions.
     * @param subscriberPosition this image's position counter, already set to the join position.
     * @param boundBuffer        holds the bound counter, or null for an unbounded (local) log.
     * @param boundOffset        of the bound counter.
     * @param sourceIdentity     where the stream comes from.
     * @param errorHandler       told of corruption.
     * @param corruptionListener told after the image closed itself on corruption.
     */
    public LogImage(
        final long correlationId,
        final int sessionId,
        final int streamId,
        final int initialTermId,
        final UnsafeBuffer[] termBuffers,
        final Position subscriberPosition,
        final AtomicBuffer boundBuffer,
        final int boundOffset,
        final String sourceIdentity,
        final ErrorHandler errorHandler,
        final CorruptionListener corruptionListener)
    {
        this.correlationId = correlationId;
        this.sessionId = sessionId;
        this.streamId = streamId;
        this.initialTermId = initialTermId;
        this.termBuffers = termBuffers;
        this.termLength = termBuffers[0].capacity();
        this.termLengthMask = termLength - 1;
        this.positionBitsToShift = LogBufferDescriptor.positionBitsToShift(termLength);
        this.subscriberPosition = subscriberPosition;
        this.joinPosition = subscriberPosition.get();
        this.boundBuffer = boundBuffer;
        this.boundOffset = boundOffset;
        this.sourceIdentity = sourceIdentity;
        this.errorHandler = errorHandler;
        this.corruptionListener = corruptionListener;
        this.header = new Header(initialTermId, positionBitsToShift, this);
    }

    /** @return the owner's id for this image. */
    public long correlationId()
    {
        return correlationId;
    }

    public int sessionId()
    {
        return sessionId;
    }

    public int streamId()
    {
        return streamId;
    }

    public int initialTermId()
    {
        return initialTermId;
    }

    public int termBufferLength()
    {
        return termLength;
    }

    public long joinPosition()
    {
        return joinPosition;
    }

    public long position()
    {
        return subscriberPosition.get();
    }

    /** @return the position counter the conductor or media reads for flow control. */
    public Position subscriberPosition()
    {
        return subscriberPosition;
    }

    /** @return true when the image is bounded by a remote position counter. */
    public boolean isBounded()
    {
        return null != boundBuffer;
    }

    public String sourceIdentity()
    {
        return sourceIdentity;
    }

    public boolean isClosed()
    {
        return isClosed;
    }

    /** Marks the image closed: polls return 0 from then on. Called by the owner when it removes the image. */
    public void close()
    {
        isClosed = true;
    }

    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        if (isClosed)
        {
            return 0;
        }

        final long position = subscriberPosition.get();
        final int termOffset = (int)position & termLengthMask;
        final int limitOffset = limitOffset(position, termOffset);
        final UnsafeBuffer termBuffer = termBuffers[LogBufferDescriptor.indexByPosition(position, positionBitsToShift)];
        int offset = termOffset;
        int fragmentsRead = 0;

        try
        {
            while (fragmentsRead < fragmentLimit && offset < limitOffset)
            {
                final int frameLength = termBuffer.getIntVolatile(offset);
                if (frameLength <= 0)
                {
                    if (null != boundBuffer)
                    {
                        onCorruptFrame(position, offset, frameLength, "missing frame below the bound");
                    }
                    break;
                }

                final int frameOffset = offset;
                final int alignedLength = FrameWriter.align(frameLength);
                if (frameLength < HEADER_LENGTH || alignedLength > limitOffset - frameOffset)
                {
                    onCorruptFrame(position, frameOffset, frameLength, "frame runs past " +
                        (frameOffset + alignedLength > termLength ? "the term end" : "the bound"));
                    break;
                }
                offset += alignedLength;

                if (HeaderFlyweight.HDR_TYPE_PAD != termBuffer.getShort(frameOffset + HeaderFlyweight.TYPE_FIELD_OFFSET))
                {
                    ++fragmentsRead;
                    header.buffer(termBuffer);
                    header.offset(frameOffset);
                    fragmentHandler.onFragment(
                        termBuffer, frameOffset + HEADER_LENGTH, frameLength - HEADER_LENGTH, header);
                }
            }
        }
        finally
        {
            final long newPosition = position + (offset - termOffset);
            if (newPosition > position)
            {
                subscriberPosition.setRelease(newPosition);
            }
        }

        return fragmentsRead;
    }

    public int controlledPoll(final ControlledFragmentHandler fragmentHandler, final int fragmentLimit)
    {
        if (isClosed)
        {
            return 0;
        }

        long initialPosition = subscriberPosition.get();
        int initialOffset = (int)initialPosition & termLengthMask;
        final int limitOffset = limitOffset(initialPosition, initialOffset);
        final UnsafeBuffer termBuffer =
            termBuffers[LogBufferDescriptor.indexByPosition(initialPosition, positionBitsToShift)];
        int offset = initialOffset;
        int fragmentsRead = 0;

        try
        {
            while (fragmentsRead < fragmentLimit && offset < limitOffset)
            {
                final int frameLength = termBuffer.getIntVolatile(offset);
                if (frameLength <= 0)
                {
                    if (null != boundBuffer)
                    {
                        onCorruptFrame(initialPosition, offset, frameLength, "missing frame below the bound");
                    }
                    break;
                }

                final int frameOffset = offset;
                final int alignedLength = FrameWriter.align(frameLength);
                if (frameLength < HEADER_LENGTH || alignedLength > limitOffset - frameOffset)
                {
                    onCorruptFrame(initialPosition, frameOffset, frameLength, "frame runs past " +
                        (frameOffset + alignedLength > termLength ? "the term end" : "the bound"));
                    break;
                }
                offset += alignedLength;

                if (HeaderFlyweight.HDR_TYPE_PAD == termBuffer.getShort(frameOffset + HeaderFlyweight.TYPE_FIELD_OFFSET))
                {
                    continue;
                }

                ++fragmentsRead;
                header.buffer(termBuffer);
                header.offset(frameOffset);
                final ControlledFragmentHandler.Action action = fragmentHandler.onFragment(
                    termBuffer, frameOffset + HEADER_LENGTH, frameLength - HEADER_LENGTH, header);

                if (ControlledFragmentHandler.Action.ABORT == action)
                {
                    --fragmentsRead;
                    offset -= alignedLength;
                    break;
                }
                if (ControlledFragmentHandler.Action.BREAK == action)
                {
                    break;
                }
                if (ControlledFragmentHandler.Action.COMMIT == action)
                {
                    initialPosition += (offset - initialOffset);
                    initialOffset = offset;
                    subscriberPosition.setRelease(initialPosition);
                }
            }
        }
        finally
        {
            final long resultingPosition = initialPosition + (offset - initialOffset);
            if (resultingPosition > initialPosition)
            {
                subscriberPosition.setRelease(resultingPosition);
            }
        }

        return fragmentsRead;
    }

    /**
     * @return the term offset reading must stop at: the term end, or the bound when it falls within this term.
     */
    private int limitOffset(final long position, final int termOffset)
    {
        if (null == boundBuffer)
        {
            return termLength;
        }
        final long bound = boundBuffer.getLongAcquire(boundOffset);
        final long available = bound - position;
        if (available <= 0)
        {
            return termOffset;
        }
        return (int)Math.min(termLength, termOffset + available);
    }

    private void onCorruptFrame(final long position, final int frameOffset, final int frameLength, final String reason)
    {
        isClosed = true;
        errorHandler.onError(new IllegalStateException(
            "corrupt frame in image session=" + sessionId + " stream=" + streamId + " source=" + sourceIdentity +
            " at term offset " + frameOffset + " (position " + (position - (position & termLengthMask) + frameOffset) +
            "): frame length " + frameLength + ", " + reason + "; image made unavailable"));
        corruptionListener.onCorrupt(this);
    }

    public String toString()
    {
        return "LogImage{sessionId=" + sessionId + ", streamId=" + streamId + ", source=" + sourceIdentity +
            ", position=" + subscriberPosition.get() + ", closed=" + isClosed + '}';
    }
}
