package io.verbus.log;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.Image;
import io.verbus.media.ImageBound;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.Position;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * Reads one publisher's log from this subscriber's position: frame by frame within the current term, acquiring
 * each frame's length before reading the frame, and skipping padding.
 * <p>
 * A <em>bounded</em> image (a remote log) asks its media's {@link ImageBound} on every poll how far it may read:
 * the position the remote sender wrote after the data, validated by the media, read on this thread. It reads
 * nothing at or past it. Every frame header is checked against the bound and the term end with plain integer
 * comparisons (never relying on Agrona's bounds checks, which a deployment may switch off): a frame that is shorter
 * than a header, runs past either, or is missing below the bound marks the image corrupt, as does a bound the media
 * rejects. It then goes unavailable (error reported, listener told, the media told so it drops the connection) and
 * never reads again; nothing outside the term is read.
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
    private final ImageBound bound;
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
     * @param bound              the media's reader of the remote position, or null for an unbounded (local) log.
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
        final ImageBound bound,
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
        this.bound = bound;
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
        return null != bound;
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
                if (!isFrameSound(position, offset, frameLength, limitOffset))
                {
                    break;
                }

                final int frameOffset = offset;
                final int alignedLength = FrameWriter.align(frameLength);
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
                if (!isFrameSound(initialPosition, offset, frameLength, limitOffset))
                {
                    break;
                }

                final int frameOffset = offset;
                final int alignedLength = FrameWriter.align(frameLength);
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
     * @return the term offset reading must stop at: the term end, or the bound when it falls within this term; the
     * current offset when the media rejected the bound (the image is then closed).
     */
    private int limitOffset(final long position, final int termOffset)
    {
        if (null == bound)
        {
            return termLength;
        }
        final long boundPosition = bound.acquire(position);
        if (ImageBound.INVALID == boundPosition)
        {
            onCorrupt(position, termOffset, 0, "the publisher wrote an invalid position (" + bound.invalidReason() +
                ")");
            return termOffset;
        }
        final long available = boundPosition - position;
        if (available <= 0)
        {
            return termOffset;
        }
        return (int)Math.min(termLength, termOffset + available);
    }

    /**
     * A frame may be read when its length, acquired before any other byte of it, covers at least a header and ends
     * within the limit. In a local log a length of 0 only means "not yet written"; below a remote bound every frame
     * must be complete, so anything else closes the image. Compared as plain ints before any alignment, so a huge
     * length can neither overflow the check nor depend on Agrona's bounds checks.
     */
    private boolean isFrameSound(final long position, final int frameOffset, final int frameLength, final int limitOffset)
    {
        if (frameLength <= 0)
        {
            if (null != bound)
            {
                onCorrupt(position, frameOffset, frameLength, "missing frame below the bound");
            }
            return false;
        }
        if (frameLength < HEADER_LENGTH || frameLength > limitOffset - frameOffset)
        {
            onCorrupt(position, frameOffset, frameLength, frameLength < HEADER_LENGTH ? "shorter than a header" :
                "frame runs past " + (frameLength > termLength - frameOffset ? "the term end" : "the bound"));
            return false;
        }
        return true;
    }

    private void onCorrupt(final long position, final int frameOffset, final int frameLength, final String reason)
    {
        isClosed = true;
        final String message = "corrupt frame in image session=" + sessionId + " stream=" + streamId + " source=" +
            sourceIdentity + " at term offset " + frameOffset + " (position " +
            (position - (position & termLengthMask) + frameOffset) + "): frame length " + frameLength + ", " + reason +
            "; image made unavailable";
        errorHandler.onError(new IllegalStateException(message));
        if (null != bound)
        {
            bound.onImageCorrupt(message);
        }
        corruptionListener.onCorrupt(this);
    }

    public String toString()
    {
        return "LogImage{sessionId=" + sessionId + ", streamId=" + streamId + ", source=" + sourceIdentity +
            ", position=" + subscriberPosition.get() + ", closed=" + isClosed + '}';
    }
}
