package io.verbus.log;

import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.logbuffer.RawBlockHandler;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.Image;
import io.verbus.Subscription;
import io.verbus.media.ImageBound;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.Position;

import java.nio.channels.FileChannel;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * Reads one publisher's log from this subscriber's position: frame by frame within the current term, acquiring
 * each frame's length before reading the frame, and skipping padding.
 * <p>
 * A <em>bounded</em> image (a remote log) asks its media's {@link ImageBound} on every poll how far it may read:
 * the position the remote sender wrote after the data, validated by the media, read on this thread. It interprets
 * nothing at or past it (an idle poll reads the word at its own position only to bring that cache line in early, and
 * discards it). Every frame header is checked against the bound and the term end with plain integer
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
    private final Subscription subscription;
    private final UnsafeBuffer metaDataBuffer;
    private final int mtuLength;
    private final FileChannel fileChannel;
    private long finalPosition;
    private long finalEndOfStreamPosition = Long.MAX_VALUE;
    private int nextFrameTouch;
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
        this(null, correlationId, sessionId, streamId, initialTermId, termBuffers, null, 0, null, subscriberPosition,
            bound, sourceIdentity, errorHandler, corruptionListener);
    }

    /**
     * @param subscription       the image belongs to, returned by {@link #subscription()}.
     * @param correlationId      identifies the image to its owner.
     * @param sessionId          of the publisher.
     * @param streamId           of the stream.
     * @param initialTermId      of the log.
     * @param termBuffers        the three partitions.
     * @param metaDataBuffer     the log's metadata (MTU, end-of-stream position) for a local log, or null for a remote
     *                           log, whose metadata is not replicated.
     * @param mtuLength          the publisher's MTU when there is no metadata buffer.
     * @param fileChannel        the log's file for {@link #rawPoll}, or null when the log is not a file.
     * @param subscriberPosition this image's position counter, already set to the join position.
     * @param bound              the media's reader of the remote position, or null for an unbounded (local) log.
     * @param sourceIdentity     where the stream comes from.
     * @param errorHandler       told of corruption.
     * @param corruptionListener told after the image closed itself on corruption.
     */
    public LogImage(
        final Subscription subscription,
        final long correlationId,
        final int sessionId,
        final int streamId,
        final int initialTermId,
        final UnsafeBuffer[] termBuffers,
        final UnsafeBuffer metaDataBuffer,
        final int mtuLength,
        final FileChannel fileChannel,
        final Position subscriberPosition,
        final ImageBound bound,
        final String sourceIdentity,
        final ErrorHandler errorHandler,
        final CorruptionListener corruptionListener)
    {
        this.subscription = subscription;
        this.metaDataBuffer = metaDataBuffer;
        this.mtuLength = mtuLength;
        this.fileChannel = fileChannel;
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
        return isClosed ? finalPosition : subscriberPosition.get();
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

    /**
     * Marks the image closed: polls return 0 from then on. Called by the owner when it removes the image. Keeps the
     * final position and end-of-stream state, as Aeron's image does, since the counter and metadata may go.
     */
    public void close()
    {
        if (!isClosed)
        {
            markClosed(subscriberPosition.getVolatile());
        }
    }

    private void markClosed(final long finalPosition)
    {
        this.finalPosition = finalPosition;
        finalEndOfStreamPosition = endOfStreamPosition();
        isClosed = true;
    }

    /**
     * @return true when {@link #awaitData} can block until the remote writer moves this image's bound (a media bound
     * that supports it, e.g. {@code rdma:...|idle=event}, on an open image).
     */
    public boolean canAwaitData()
    {
        return !isClosed && null != bound && bound.canAwait();
    }

    /**
     * Event-driven idle for the polling thread, between polls: see {@link ImageBound#awaitAdvance}.
     *
     * @param timeoutNs longest wait.
     * @return true when woken or data is already there; false on timeout, or when this image cannot wait.
     */
    public boolean awaitData(final long timeoutNs)
    {
        return !isClosed && null != bound && bound.awaitAdvance(subscriberPosition.get(), timeoutNs);
    }

    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        if (isClosed)
        {
            return 0;
        }

        final long position = subscriberPosition.get();
        final int termOffset = (int)position & termLengthMask;
        final UnsafeBuffer termBuffer = termBuffers[LogBufferDescriptor.indexByPosition(position, positionBitsToShift)];
        final int limitOffset = limitOffset(termBuffer, position, termOffset);
        int offset = termOffset;
        int fragmentsRead = 0;

        try
        {
            while (fragmentsRead < fragmentLimit && offset < limitOffset)
            {
                final int frameLength = termBuffer.getIntVolatile(offset);
                if (!isFrameSound(termBuffer, position, offset, frameLength, limitOffset))
                {
                    break;
                }

                final int frameOffset = offset;
                final int alignedLength = FrameWriter.align(frameLength);
                offset += alignedLength;

                if (HeaderFlyweight.HDR_TYPE_PAD !=
                    termBuffer.getShort(frameOffset + HeaderFlyweight.TYPE_FIELD_OFFSET))
                {
                    ++fragmentsRead;
                    header.buffer(termBuffer);
                    header.offset(frameOffset);
                    fragmentHandler.onFragment(
                        termBuffer, frameOffset + HEADER_LENGTH, frameLength - HEADER_LENGTH, header);
                }
            }
        }
        catch (final Exception ex)
        {
            // As Aeron's Image: a handler that throws ends this poll; its fragment counts as consumed (redelivering
            // it would most likely throw again and wedge the stream) and the exception goes to the error handler.
            errorHandler.onError(ex);
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
        final UnsafeBuffer termBuffer =
            termBuffers[LogBufferDescriptor.indexByPosition(initialPosition, positionBitsToShift)];
        final int limitOffset = limitOffset(termBuffer, initialPosition, initialOffset);
        int offset = initialOffset;
        int fragmentsRead = 0;

        try
        {
            while (fragmentsRead < fragmentLimit && offset < limitOffset)
            {
                final int frameLength = termBuffer.getIntVolatile(offset);
                if (!isFrameSound(termBuffer, initialPosition, offset, frameLength, limitOffset))
                {
                    break;
                }

                final int frameOffset = offset;
                final int alignedLength = FrameWriter.align(frameLength);
                offset += alignedLength;

                if (HeaderFlyweight.HDR_TYPE_PAD ==
                    termBuffer.getShort(frameOffset + HeaderFlyweight.TYPE_FIELD_OFFSET))
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
        catch (final Exception ex)
        {
            // As Aeron's Image: a handler that throws ends this poll; its fragment counts as consumed (redelivering
            // it would most likely throw again and wedge the stream) and the exception goes to the error handler.
            errorHandler.onError(ex);
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

    public int boundedPoll(final FragmentHandler fragmentHandler, final long limitPosition, final int fragmentLimit)
    {
        if (isClosed)
        {
            return 0;
        }

        final long position = subscriberPosition.get();
        if (position >= limitPosition)
        {
            return 0;
        }
        final int termOffset = (int)position & termLengthMask;
        final int soundLimitOffset = readLimitOffset(position, termOffset);
        final int limitOffset = callerLimitOffset(soundLimitOffset, position, termOffset, limitPosition);
        final UnsafeBuffer termBuffer = termBuffers[LogBufferDescriptor.indexByPosition(position, positionBitsToShift)];
        int offset = termOffset;
        int fragmentsRead = 0;

        try
        {
            while (fragmentsRead < fragmentLimit && offset < limitOffset)
            {
                final int frameLength = termBuffer.getIntVolatile(offset);
                if (!isFrameSound(termBuffer, position, offset, frameLength, soundLimitOffset))
                {
                    break;
                }

                final int frameOffset = offset;
                offset += FrameWriter.align(frameLength);

                if (!isPaddingFrame(termBuffer, frameOffset))
                {
                    ++fragmentsRead;
                    header.buffer(termBuffer);
                    header.offset(frameOffset);
                    fragmentHandler.onFragment(
                        termBuffer, frameOffset + HEADER_LENGTH, frameLength - HEADER_LENGTH, header);
                }
            }
        }
        catch (final Exception ex)
        {
            // As Aeron's Image: a handler that throws ends this poll; its fragment counts as consumed (redelivering
            // it would most likely throw again and wedge the stream) and the exception goes to the error handler.
            errorHandler.onError(ex);
        }
        finally
        {
            final long newPosition = position + (offset - termOffset);
            if (newPosition > position && !isClosed)
            {
                subscriberPosition.setRelease(newPosition);
            }
        }

        return fragmentsRead;
    }

    public int boundedControlledPoll(
        final ControlledFragmentHandler fragmentHandler, final long limitPosition, final int fragmentLimit)
    {
        if (isClosed)
        {
            return 0;
        }

        final long position = subscriberPosition.get();
        if (position >= limitPosition)
        {
            return 0;
        }
        long initialPosition = position;
        int initialOffset = (int)initialPosition & termLengthMask;
        final int termOffset = initialOffset;
        final int soundLimitOffset = readLimitOffset(position, termOffset);
        final int limitOffset = callerLimitOffset(soundLimitOffset, position, termOffset, limitPosition);
        final UnsafeBuffer termBuffer =
            termBuffers[LogBufferDescriptor.indexByPosition(initialPosition, positionBitsToShift)];
        int offset = initialOffset;
        int fragmentsRead = 0;

        try
        {
            while (fragmentsRead < fragmentLimit && offset < limitOffset)
            {
                final int frameLength = termBuffer.getIntVolatile(offset);
                if (!isFrameSound(termBuffer, position, offset, frameLength, soundLimitOffset))
                {
                    break;
                }

                final int frameOffset = offset;
                final int alignedLength = FrameWriter.align(frameLength);
                offset += alignedLength;

                if (isPaddingFrame(termBuffer, frameOffset))
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
        catch (final Exception ex)
        {
            // As Aeron's Image: a handler that throws ends this poll; its fragment counts as consumed (redelivering
            // it would most likely throw again and wedge the stream) and the exception goes to the error handler.
            errorHandler.onError(ex);
        }
        finally
        {
            final long resultingPosition = initialPosition + (offset - initialOffset);
            if (resultingPosition > initialPosition && !isClosed)
            {
                subscriberPosition.setRelease(resultingPosition);
            }
        }

        return fragmentsRead;
    }

    public long controlledPeek(
        final long initialPosition, final ControlledFragmentHandler fragmentHandler, final long limitPosition)
    {
        if (isClosed)
        {
            return initialPosition;
        }

        validatePosition(initialPosition);
        if (initialPosition >= limitPosition)
        {
            return initialPosition;
        }

        final int termOffset = (int)initialPosition & termLengthMask;
        final int soundLimitOffset = readLimitOffset(initialPosition, termOffset);
        final int limitOffset = callerLimitOffset(soundLimitOffset, initialPosition, termOffset, limitPosition);
        final UnsafeBuffer termBuffer =
            termBuffers[LogBufferDescriptor.indexByPosition(initialPosition, positionBitsToShift)];
        int offset = termOffset;
        long resultingPosition = initialPosition;

        while (offset < limitOffset)
        {
            final int frameLength = termBuffer.getIntVolatile(offset);
            if (!isFrameSound(termBuffer, initialPosition, offset, frameLength, soundLimitOffset))
            {
                break;
            }

            final int frameOffset = offset;
            final int nextOffset = offset + FrameWriter.align(frameLength);

            if (isPaddingFrame(termBuffer, frameOffset))
            {
                offset = nextOffset;
                resultingPosition = initialPosition + (offset - termOffset);
                continue;
            }

            header.buffer(termBuffer);
            header.offset(frameOffset);
            final ControlledFragmentHandler.Action action = fragmentHandler.onFragment(
                termBuffer, frameOffset + HEADER_LENGTH, frameLength - HEADER_LENGTH, header);

            if (ControlledFragmentHandler.Action.ABORT == action)
            {
                break;
            }

            offset = nextOffset;
            if (0 != (header.flags() & FrameDescriptor.END_FRAG_FLAG))
            {
                // Only a whole message moves the result, so a peek never ends inside a fragmented message.
                resultingPosition = initialPosition + (offset - termOffset);
            }

            if (ControlledFragmentHandler.Action.BREAK == action)
            {
                break;
            }
        }

        return resultingPosition;
    }

    public int blockPoll(final BlockHandler blockHandler, final int blockLengthLimit)
    {
        if (isClosed)
        {
            return 0;
        }

        final long position = subscriberPosition.get();
        final int termOffset = (int)position & termLengthMask;
        final UnsafeBuffer termBuffer = termBuffers[LogBufferDescriptor.indexByPosition(position, positionBitsToShift)];
        final int length = scanBlock(termBuffer, position, termOffset, blockLengthLimit);

        if (length > 0)
        {
            try
            {
                final int termId = termBuffer.getInt(termOffset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET);
                blockHandler.onBlock(termBuffer, termOffset, length, sessionId, termId);
            }
            finally
            {
                if (!isClosed)
                {
                    subscriberPosition.setRelease(position + length);
                }
            }
        }

        return length;
    }

    public int rawPoll(final RawBlockHandler rawBlockHandler, final int blockLengthLimit)
    {
        if (isClosed)
        {
            return 0;
        }

        final long position = subscriberPosition.get();
        final int termOffset = (int)position & termLengthMask;
        final int partitionIndex = LogBufferDescriptor.indexByPosition(position, positionBitsToShift);
        final UnsafeBuffer termBuffer = termBuffers[partitionIndex];
        final int length = scanBlock(termBuffer, position, termOffset, blockLengthLimit);

        if (length > 0)
        {
            try
            {
                final long fileOffset = (long)termLength * partitionIndex + termOffset;
                final int termId = termBuffer.getInt(termOffset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET);
                rawBlockHandler.onBlock(fileChannel, fileOffset, termBuffer, termOffset, length, sessionId, termId);
            }
            finally
            {
                if (!isClosed)
                {
                    subscriberPosition.setRelease(position + length);
                }
            }
        }

        return length;
    }

    public boolean isEndOfStream()
    {
        if (isClosed)
        {
            return finalPosition >= finalEndOfStreamPosition;
        }
        return subscriberPosition.get() >= endOfStreamPosition();
    }

    public long endOfStreamPosition()
    {
        if (isClosed)
        {
            return finalEndOfStreamPosition;
        }
        if (null != metaDataBuffer)
        {
            return LogBufferDescriptor.endOfStreamPosition(metaDataBuffer);
        }
        return null == bound ? Long.MAX_VALUE : bound.endOfStreamPosition();
    }

    public Subscription subscription()
    {
        return subscription;
    }

    public void position(final long newPosition)
    {
        if (isClosed)
        {
            return;
        }

        validatePosition(newPosition);
        if (null != bound)
        {
            // The position is the credit the media sends to the publisher: never past what was received.
            final long consumerPosition = subscriberPosition.get();
            final long boundPosition = bound.acquire(consumerPosition);
            if (ImageBound.INVALID == boundPosition)
            {
                // The publisher's fault, not the caller's: the image closes as a poll would close it, and the
                // position stays where it was.
                onCorrupt(consumerPosition, (int)consumerPosition & termLengthMask, 0,
                    "the publisher wrote an invalid position (" + bound.invalidReason() + ")");
                return;
            }
            if (newPosition > boundPosition)
            {
                throw new IllegalArgumentException(newPosition + " position beyond what this image has received: " +
                    boundPosition);
            }
        }
        subscriberPosition.setRelease(newPosition);
    }

    public int mtuLength()
    {
        return null == metaDataBuffer ? mtuLength : LogBufferDescriptor.mtuLength(metaDataBuffer);
    }

    public int activeTransportCount()
    {
        return isClosed || null == bound ? 0 : 1;
    }

    /**
     * Aeron's validation of a new position: from the current position to the end of its term, frame aligned.
     */
    private void validatePosition(final long position)
    {
        final long currentPosition = subscriberPosition.get();
        final long limitPosition = (currentPosition - (currentPosition & termLengthMask)) + termLength;
        if (position < currentPosition || position > limitPosition)
        {
            throw new IllegalArgumentException(
                position + " position out of range: " + currentPosition + "-" + limitPosition);
        }
        if (0 != (position & (FrameDescriptor.FRAME_ALIGNMENT - 1)))
        {
            throw new IllegalArgumentException(position + " position not aligned to FRAME_ALIGNMENT");
        }
    }

    /**
     * Scans whole frames from {@code termOffset} up to {@code blockLengthLimit} bytes, Aeron's
     * {@code TermBlockScanner} rule for padding, each frame checked as {@link #poll} checks it.
     *
     * @return the length of the block, 0 when there is none.
     */
    private int scanBlock(
        final UnsafeBuffer termBuffer, final long position, final int termOffset, final int blockLengthLimit)
    {
        final int soundLimitOffset = readLimitOffset(position, termOffset);
        final int limitOffset = (int)Math.min(soundLimitOffset, (long)termOffset + Math.max(0, blockLengthLimit));
        int offset = termOffset;
        while (offset < limitOffset)
        {
            final int frameLength = termBuffer.getIntVolatile(offset);
            if (!isFrameSound(termBuffer, position, offset, frameLength, soundLimitOffset))
            {
                break;
            }
            final int alignedLength = FrameWriter.align(frameLength);
            if (isPaddingFrame(termBuffer, offset))
            {
                // Padding is delivered alone, as the first frame of a block; later it ends the block before it.
                if (termOffset == offset)
                {
                    offset += alignedLength;
                }
                break;
            }
            if (offset + alignedLength > limitOffset)
            {
                break;
            }
            offset += alignedLength;
        }
        return offset - termOffset;
    }

    /**
     * Where frames read from {@code fromPosition} (at {@code fromOffset} in its term) must end to be sound: the term
     * end, or the media's bound (acquired for the image's own position) when it falls within the term.
     *
     * @return the limit as a term offset; {@code fromOffset} when nothing may be read (or the bound was invalid and
     * the image is now closed).
     */
    private int readLimitOffset(final long fromPosition, final int fromOffset)
    {
        if (null == bound)
        {
            return termLength;
        }
        final long consumerPosition = subscriberPosition.get();
        final long boundPosition = bound.acquire(consumerPosition);
        if (ImageBound.INVALID == boundPosition)
        {
            onCorrupt(consumerPosition, (int)consumerPosition & termLengthMask, 0,
                "the publisher wrote an invalid position (" + bound.invalidReason() + ")");
            return fromOffset;
        }
        return (int)Math.min(termLength, fromOffset + Math.max(0, boundPosition - fromPosition));
    }

    /**
     * A caller's limit position narrows where frames may start, not where they may end: as in Aeron, a frame that
     * starts below the limit is delivered whole.
     */
    private static int callerLimitOffset(
        final int soundLimitOffset, final long fromPosition, final int fromOffset, final long limitPosition)
    {
        return (int)Math.min(soundLimitOffset, fromOffset + Math.max(0, Math.min(limitPosition - fromPosition,
            Integer.MAX_VALUE)));
    }

    private static boolean isPaddingFrame(final UnsafeBuffer termBuffer, final int frameOffset)
    {
        return HeaderFlyweight.HDR_TYPE_PAD == termBuffer.getShort(frameOffset + HeaderFlyweight.TYPE_FIELD_OFFSET);
    }

    /**
     * A poll that found the bound where it was reads the word the next frame will start at and keeps the value
     * unused. The publisher writes a frame before the position that covers it, so the line that holds the frame is
     * already on its way to this core while the poll still waits on the position: when the position moves, reading
     * the frame is a cache hit rather than a second transfer after the first. Nothing read here is interpreted.
     */
    private void touchNextFrame(final UnsafeBuffer termBuffer, final int termOffset)
    {
        nextFrameTouch = termBuffer.getInt(termOffset);
    }

    /**
     * @return the term offset reading must stop at: the term end, or the bound when it falls within this term; the
     * current offset when the media rejected the bound (the image is then closed).
     */
    private int limitOffset(final UnsafeBuffer termBuffer, final long position, final int termOffset)
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
            touchNextFrame(termBuffer, termOffset);
            return termOffset;
        }
        return (int)Math.min(termLength, termOffset + available);
    }

    /**
     * A frame may be read when its length, acquired before any other byte of it, covers at least a header and ends
     * within the limit. In a local log a length of 0 only means "not yet written"; below a remote bound every frame
     * must be complete, so anything else closes the image. Compared as plain ints before any alignment, so a huge
     * length can neither overflow the check nor depend on Agrona's bounds checks. Below a remote bound the header
     * must also name the term offset, term, session and stream it is read at: a ring is reused every three terms, so
     * a position block moved past what was written (a faulty or hostile writer) would otherwise hand over a stale
     * frame of three terms ago, well formed and checksummed, as new. In a local log such a header can only be what
     * two threads writing one exclusive publication at once left: the image stops there without closing, and reads
     * on once the driver's unblock check has padded over it.
     */
    private boolean isFrameSound(
        final UnsafeBuffer termBuffer, final long position, final int frameOffset, final int frameLength,
        final int limitOffset)
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
            if (null == bound)
            {
                return false; // a local log's writers broke its rules: wait for the driver to pad over it, as below
            }
            onCorrupt(position, frameOffset, frameLength, frameLength < HEADER_LENGTH ? "shorter than a header" :
                "frame runs past " + (frameLength > termLength - frameOffset ? "the term end" : "the bound"));
            return false;
        }
        final int termId = LogBufferDescriptor.computeTermIdFromPosition(position, positionBitsToShift, initialTermId);
        if (!FrameWriter.isHeaderAt(termBuffer, frameOffset, sessionId, streamId, termId))
        {
            if (null != bound)
            {
                onCorrupt(position, frameOffset, frameLength, "its header names term " +
                    termBuffer.getInt(frameOffset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET) + " offset " +
                    termBuffer.getInt(frameOffset + DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET) + " (session " +
                    termBuffer.getInt(frameOffset + DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET) + " stream " +
                    termBuffer.getInt(frameOffset + DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET) + ") where term " +
                    termId + " offset " + frameOffset + " was due: a stale or misplaced frame");
            }
            // In a local log, two threads wrote one exclusive publication at once: wait here, on the frame chain
            // the driver follows, until its unblock check pads over the corrupt stretch.
            return false;
        }
        if (null != bound)
        {
            // A log holds data and padding frames only; any other type a remote writer put below the bound would
            // reach the fragment handler (or an archive through blockPoll) as data.
            final int type = FrameWriter.frameType(termBuffer, frameOffset);
            if (!FrameWriter.isLogFrameType(type))
            {
                onCorrupt(position, frameOffset, frameLength,
                    "its type is 0x" + Integer.toHexString(type) + ", neither data nor padding");
                return false;
            }
        }
        return true;
    }

    private void onCorrupt(final long position, final int frameOffset, final int frameLength, final String reason)
    {
        // The poll stops before the corrupt frame: that is where the image ends.
        final long framePosition = position - (position & termLengthMask) + frameOffset;
        if (!isClosed)
        {
            markClosed(framePosition);
        }
        final String message = "corrupt frame in image session=" + sessionId + " stream=" + streamId + " source=" +
            sourceIdentity + " at term offset " + frameOffset + " (position " + framePosition + "): frame length " +
            frameLength + ", " + reason + "; image made unavailable";
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
