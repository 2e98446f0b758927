package io.verbus.archive;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.Image;
import org.agrona.BitUtil;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * Records one Verbus image (one publisher session of the stream) into one Aeron Archive recording, with the
 * recording's positions equal to the stream's.
 * <p>
 * Frames are copied out of the image into a <em>retention</em> buffer of a few terms, each term at its own place,
 * written to an Aeron {@link ExclusivePublication} that starts at the same position with the stream's session id,
 * initial term id and term length, as raw blocks ({@code offerBlock}); the archive records that publication. The
 * padding frame a Verbus log writes at a term end is never delivered by {@code poll}: the image's position jumps to
 * the next term, and the recorder writes the same padding with {@code appendPadding}. So the recording holds the
 * stream's log byte for byte (data frames exactly; padding frames with the same length and type).
 * <p>
 * Bytes stay in the retention buffer until the archive reports them recorded, and the image is read no further than
 * the retention beyond that: the recorder reads at the live rate while the archive writes behind it, and an archive
 * slower than that for longer than the retention back-pressures the Verbus stream instead of losing data. If the
 * archive goes away, what it had not recorded is still here, and is written again from the archive's stop position to
 * a new publication that extends the same recording.
 * <p>
 * Owned by the recorder agent's thread; nothing here is shared.
 */
final class ImageRecorder implements ControlledFragmentHandler
{
    /** Where the recorder is with this image. */
    enum State
    {
        /** Waiting for the recording of this session's previous image to stop, or to retry a start. */
        NEW,
        /** Start or extend requested, publication added, waiting for the archive's signal. */
        STARTING,
        /** The archive records the publication. */
        RECORDING,
        /** The archive was lost: retaining what it has not recorded, waiting for it to come back. */
        SUSPENDED,
        /** The image has gone and everything was recorded; the publication is closed, the recording stopping. */
        CLOSING,
        /** Finished. */
        DONE
    }

    /** Frames read from the image per poll. */
    static final int FRAGMENT_LIMIT = 256;

    /** Largest block handed to one {@code offerBlock}. */
    static final int MAX_BLOCK_LENGTH = 1024 * 1024;

    private final Image image;
    private final int sessionId;
    private final int streamId;
    private final int initialTermId;
    private final int termLength;
    private final int termLengthMask;
    private final int mtuLength;
    private final int retainedLength;
    private final int retainedMask;
    private final UnsafeBuffer retained;
    private ExclusivePublication publication;
    private long subscriptionId = Aeron.NULL_VALUE;
    private long recordingId = Aeron.NULL_VALUE;
    private int recordingPositionCounterId = Aeron.NULL_VALUE;
    private boolean extendsRecording;
    private boolean extendRefused;
    private long consumedPosition;
    private long offeredPosition;
    private long confirmedPosition;
    private long pollLimitPosition;
    private long stateChangeNs;
    private long nextPositionQueryNs;
    private long stopPosition = Aeron.NULL_VALUE;
    private long countedPosition;
    private long notConnectedSinceNs = Aeron.NULL_VALUE;
    private RecordingGap pendingGap;
    private boolean warnedFrameBeyondMtu;
    private volatile long publishedRecordedPosition = -1;
    private State state = State.NEW;

    /**
     * @param image          to record.
     * @param retentionTerms terms of retention (a power of two): how far the recorder may read ahead of what the
     *                       archive has recorded.
     * @param mtuLength      of the recording publication.
     * @param nowNs          now.
     */
    ImageRecorder(final Image image, final int retentionTerms, final int mtuLength, final long nowNs)
    {
        this.mtuLength = mtuLength;
        this.stateChangeNs = nowNs;
        this.image = image;
        this.sessionId = image.sessionId();
        this.streamId = image.streamId();
        this.initialTermId = image.initialTermId();
        this.termLength = image.termBufferLength();
        this.termLengthMask = termLength - 1;
        this.retainedLength = termLength * retentionTerms;
        this.retainedMask = retainedLength - 1;
        this.retained = new UnsafeBuffer(ByteBuffer.allocateDirect(retainedLength));
        final long joinPosition = image.position();
        this.consumedPosition = joinPosition;
        this.offeredPosition = joinPosition;
        this.confirmedPosition = joinPosition;
        this.countedPosition = joinPosition;
    }

    /** Makes the recorded position visible to other threads: once per duty cycle, -1 before recording started. */
    void publishRecordedPosition()
    {
        if (Aeron.NULL_VALUE != recordingId)
        {
            publishedRecordedPosition = confirmedPosition;
        }
    }

    /** @return the recorded position as last published; any thread. */
    long publishedRecordedPosition()
    {
        return publishedRecordedPosition;
    }

    /** @return bytes the archive recorded since the last call (for the rate counter). */
    long takeNewlyRecordedBytes()
    {
        final long bytes = confirmedPosition - countedPosition;
        countedPosition = confirmedPosition;
        return Math.max(bytes, 0);
    }

    Image image()
    {
        return image;
    }

    int sessionId()
    {
        return sessionId;
    }

    int streamId()
    {
        return streamId;
    }

    int initialTermId()
    {
        return initialTermId;
    }

    int termLength()
    {
        return termLength;
    }

    State state()
    {
        return state;
    }

    long stateChangeNs()
    {
        return stateChangeNs;
    }

    void state(final State state, final long nowNs)
    {
        this.state = state;
        this.stateChangeNs = nowNs;
    }

    long subscriptionId()
    {
        return subscriptionId;
    }

    long recordingId()
    {
        return recordingId;
    }

    boolean extendsRecording()
    {
        return extendsRecording;
    }

    /** A gap found when the recording was requested, reported once it has started (requests may be retried). */
    void pendingGap(final RecordingGap gap)
    {
        pendingGap = gap;
    }

    /** @return the gap to report now that the recording started, or null; cleared. */
    RecordingGap takePendingGap()
    {
        final RecordingGap gap = pendingGap;
        pendingGap = null;
        return gap;
    }

    /** @return true once the archive refused to extend the previous recording: the next start is a new recording. */
    boolean extendRefused()
    {
        return extendRefused;
    }

    void extendRefused(final boolean extendRefused)
    {
        this.extendRefused = extendRefused;
    }

    /** @return how far the image has been read (into the retention buffer). */
    long consumedPosition()
    {
        return consumedPosition;
    }

    /** @return how far the recording publication has been written. */
    long offeredPosition()
    {
        return offeredPosition;
    }

    /** @return how far the archive has recorded: everything below is safe, everything above is still retained. */
    long confirmedPosition()
    {
        return confirmedPosition;
    }

    /** @return the stop position the archive signalled, or {@link Aeron#NULL_VALUE}. */
    long stopPosition()
    {
        return stopPosition;
    }

    int recordingPositionCounterId()
    {
        return recordingPositionCounterId;
    }

    long nextPositionQueryNs()
    {
        return nextPositionQueryNs;
    }

    void nextPositionQueryNs(final long nextPositionQueryNs)
    {
        this.nextPositionQueryNs = nextPositionQueryNs;
    }

    /** @return true when the image went away and everything read from it is recorded. */
    boolean isDrained()
    {
        return image.isClosed() && confirmedPosition == consumedPosition;
    }

    /**
     * Starts writing to a recording publication. The archive was asked to start or extend a recording at
     * {@code position}, which must lie within what this recorder still retains.
     *
     * @param publication    created with {@link RecordingChannel} at {@code position}.
     * @param subscriptionId the archive's recording subscription, to match its signals.
     * @param position       where the publication starts.
     * @param extending      true when it extends an existing recording.
     * @param nowNs          now.
     */
    void attach(
        final ExclusivePublication publication,
        final long subscriptionId,
        final long position,
        final boolean extending,
        final long nowNs)
    {
        if (position < confirmedPosition || position > consumedPosition)
        {
            throw new IllegalStateException("recording publication at " + position + " outside the retained range [" +
                confirmedPosition + ", " + consumedPosition + "] of stream=" + streamId + " session=" + sessionId);
        }
        if (publication.position() != position)
        {
            throw new IllegalStateException("recording publication starts at " + publication.position() +
                ", expected " + position);
        }
        this.publication = publication;
        this.subscriptionId = subscriptionId;
        this.extendsRecording = extending;
        this.offeredPosition = position;
        this.confirmedPosition = position;
        this.recordingPositionCounterId = Aeron.NULL_VALUE;
        this.stopPosition = Aeron.NULL_VALUE;
        this.notConnectedSinceNs = Aeron.NULL_VALUE;
        state(State.STARTING, nowNs);
    }

    /**
     * The archive signalled START or EXTEND for this recorder's subscription.
     *
     * @param recordingId the recording.
     * @param counterId   its position counter when visible from this process, else {@link Aeron#NULL_VALUE}.
     * @param nowNs       now.
     */
    void onRecordingStarted(final long recordingId, final int counterId, final long nowNs)
    {
        this.recordingId = recordingId;
        this.recordingPositionCounterId = counterId;
        if (State.STARTING == state)
        {
            state(State.RECORDING, nowNs);
        }
    }

    /** The archive signalled STOP for this recorder's recording at a position. */
    void onRecordingStopped(final long position)
    {
        stopPosition = position;
        recordingPositionCounterId = Aeron.NULL_VALUE;
        onRecordedPosition(position);
    }

    /**
     * The archive has recorded up to a position: retention below it is released.
     *
     * @param recordedPosition as read from the archive.
     */
    void onRecordedPosition(final long recordedPosition)
    {
        if (recordedPosition > confirmedPosition)
        {
            confirmedPosition = Math.min(recordedPosition, offeredPosition);
        }
    }

    /**
     * The archive was lost: forget the publication (its driver may be gone) and keep what was not recorded.
     *
     * @param nowNs now.
     */
    void suspend(final long nowNs)
    {
        closePublication();
        recordingPositionCounterId = Aeron.NULL_VALUE;
        state(State.SUSPENDED, nowNs);
    }

    /**
     * Reads new frames from the image into the retention buffer, no further than the retention beyond what the archive
     * has recorded.
     *
     * @return the number of frames read.
     */
    int poll()
    {
        if (image.isClosed())
        {
            return 0;
        }
        pollLimitPosition = confirmedPosition + retainedLength;
        if (consumedPosition >= pollLimitPosition)
        {
            return 0;
        }

        final int fragments = image.controlledPoll(this, FRAGMENT_LIMIT);
        final long imagePosition = image.position();
        if (imagePosition > consumedPosition)
        {
            skipPaddingTo(imagePosition);
        }
        return fragments;
    }

    public Action onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final int frameLength = header.frameLength();
        final int alignedLength = BitUtil.align(frameLength, FrameDescriptor.FRAME_ALIGNMENT);
        final long frameEndPosition = header.position();
        final long frameStartPosition = frameEndPosition - alignedLength;
        if (frameEndPosition > pollLimitPosition)
        {
            return Action.ABORT;
        }
        if (frameStartPosition != consumedPosition)
        {
            skipPaddingTo(frameStartPosition);
        }
        if (frameLength > mtuLength && !warnedFrameBeyondMtu)
        {
            warnedFrameBeyondMtu = true;
            System.getLogger(ImageRecorder.class.getName()).log(System.Logger.Level.WARNING, "stream=" + streamId +
                " session=" + sessionId + " has a frame of " + frameLength + " bytes, above the recording MTU of " +
                mtuLength + ": it is recorded, but a replay over UDP cannot carry it (raise the recording MTU)");
        }
        retained.putBytes((int)frameStartPosition & retainedMask, header.buffer(), header.offset(), alignedLength);
        consumedPosition = frameEndPosition;
        return Action.CONTINUE;
    }

    /**
     * The image stepped over the padding frame at a term end: keep a padding header in its place so that the
     * writer reproduces it.
     */
    private void skipPaddingTo(final long nextTermPosition)
    {
        final long paddingLength = nextTermPosition - consumedPosition;
        if (0 != (nextTermPosition & termLengthMask) || paddingLength <= 0 || paddingLength >= termLength ||
            (consumedPosition >> Long.numberOfTrailingZeros(termLength)) + 1 !=
            nextTermPosition >> Long.numberOfTrailingZeros(termLength))
        {
            throw new IllegalStateException("image of stream=" + streamId + " session=" + sessionId + " moved from " +
                consumedPosition + " to " + nextTermPosition + ", which is not padding to a term end");
        }
        writePaddingHeader((int)consumedPosition & retainedMask, (int)paddingLength);
        consumedPosition = nextTermPosition;
    }

    private void writePaddingHeader(final int termOffset, final int paddingLength)
    {
        retained.putInt(termOffset + HeaderFlyweight.FRAME_LENGTH_FIELD_OFFSET, paddingLength);
        retained.putShort(termOffset + HeaderFlyweight.TYPE_FIELD_OFFSET, (short)HeaderFlyweight.HDR_TYPE_PAD);
    }

    /**
     * Writes what was read but not yet written to the recording publication: runs of data frames as blocks, padding
     * as padding.
     *
     * @return the number of bytes written.
     */
    int offer()
    {
        if (null == publication || (State.STARTING != state && State.RECORDING != state))
        {
            return 0;
        }

        final long startPosition = offeredPosition;
        while (offeredPosition < consumedPosition)
        {
            final int termOffset = (int)offeredPosition & termLengthMask;
            final int retainedOffset = (int)offeredPosition & retainedMask;
            final int frameLength = retained.getInt(retainedOffset + HeaderFlyweight.FRAME_LENGTH_FIELD_OFFSET);
            final int frameType = retained.getShort(retainedOffset + HeaderFlyweight.TYPE_FIELD_OFFSET) & 0xFFFF;
            final long result;
            final long expectedPosition;
            if (HeaderFlyweight.HDR_TYPE_PAD == frameType)
            {
                final int chunkLength = paddingChunkLength(frameLength);
                if (chunkLength < frameLength)
                {
                    writePaddingHeader(retainedOffset + chunkLength, frameLength - chunkLength);
                }
                expectedPosition = offeredPosition + chunkLength;
                result = publication.appendPadding(chunkLength - HEADER_LENGTH);
            }
            else
            {
                final int blockLength = dataBlockLength(termOffset, retainedOffset);
                expectedPosition = offeredPosition + blockLength;
                result = publication.offerBlock(retained, retainedOffset, blockLength);
            }

            if (result < 0)
            {
                break;
            }
            if (result != expectedPosition)
            {
                throw new IllegalStateException("recording publication of stream=" + streamId + " session=" +
                    sessionId + " moved to " + result + ", expected " + expectedPosition);
            }
            offeredPosition = result;
        }
        return (int)(offeredPosition - startPosition);
    }

    /** Padding is appended as frames of at most a maximum message each (appendPadding's limit). */
    private int paddingChunkLength(final int paddingLength)
    {
        final int maxChunk = (publication.maxMessageLength() & ~(FrameDescriptor.FRAME_ALIGNMENT - 1));
        return paddingLength - HEADER_LENGTH <= maxChunk ? paddingLength : maxChunk + HEADER_LENGTH;
    }

    /**
     * @return the length of the run of data frames from a term offset (at an offset of the retention buffer, where
     * each term lies contiguous): within the term, what was read, and the window.
     */
    private int dataBlockLength(final int termOffset, final int retainedOffset)
    {
        final long window = Math.max(publication.availableWindow(), 0);
        final long readable = consumedPosition - offeredPosition;
        final int limit = (int)Math.min(Math.min(readable, termLength - termOffset), MAX_BLOCK_LENGTH);
        int length = 0;
        while (length < limit)
        {
            final int frameOffset = retainedOffset + length;
            final int frameType = retained.getShort(frameOffset + HeaderFlyweight.TYPE_FIELD_OFFSET) & 0xFFFF;
            if (HeaderFlyweight.HDR_TYPE_PAD == frameType)
            {
                break;
            }
            final int alignedLength = BitUtil.align(
                retained.getInt(frameOffset + HeaderFlyweight.FRAME_LENGTH_FIELD_OFFSET),
                FrameDescriptor.FRAME_ALIGNMENT);
            if (length > 0 && length + alignedLength > window)
            {
                break;
            }
            length += alignedLength;
        }
        return length;
    }

    /**
     * @param nowNs   now.
     * @param graceNs how long the publication may be without the archive's subscription before it counts as lost
     *                (its connected flag trails the archive's START signal by a driver duty cycle).
     * @return true when the recording publication is closed, or has not been connected to the archive for the grace.
     */
    boolean isPublicationLost(final long nowNs, final long graceNs)
    {
        if (null == publication)
        {
            return false;
        }
        if (publication.isClosed())
        {
            return true;
        }
        if (publication.isConnected())
        {
            notConnectedSinceNs = Aeron.NULL_VALUE;
            return false;
        }
        if (Aeron.NULL_VALUE == notConnectedSinceNs)
        {
            notConnectedSinceNs = nowNs;
        }
        return nowNs - notConnectedSinceNs > graceNs;
    }

    /** Closes the recording publication (the archive then stops the recording, which was started with autoStop). */
    void closePublication()
    {
        CloseHelper.quietClose(publication);
        publication = null;
    }

    public String toString()
    {
        return "ImageRecorder{stream=" + streamId + ", session=" + sessionId + ", state=" + state + ", recording=" +
            recordingId + ", consumed=" + consumedPosition + ", offered=" + offeredPosition + ", confirmed=" +
            confirmedPosition + '}';
    }
}
