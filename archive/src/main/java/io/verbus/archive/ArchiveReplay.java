package io.verbus.archive;

import io.aeron.Aeron;
import io.aeron.ChannelUriStringBuilder;
import io.aeron.archive.client.AeronArchive;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * One replay of a recorded Verbus stream from the archive, polled like an image: every frame arrives as it was
 * published, header included, at its original stream position.
 * <p>
 * The archive replays on a publication of its own, which rewrites each frame's session id and stream id to the
 * replay's; everything else (term id, term offset, flags, reserved value, payload) and every position are the
 * recording's. Each frame is therefore copied into a buffer of this replay and its session id and stream id are put
 * back before the handler sees it, so {@code header.sessionId()}, {@code header.position()} and every byte equal the
 * live stream's (and a {@code FragmentAssembler} keyed by session sees one session across replay and live).
 * <p>
 * Polled by one thread. Starting it is one control round trip to the archive.
 */
public final class ArchiveReplay implements AutoCloseable
{
    /** Replay until the recording's stop, or follow it while it is still being recorded. */
    public static final long TO_END = AeronArchive.NULL_LENGTH;

    /** Largest frame that can be restored: Aeron's maximum MTU. */
    static final int MAX_FRAME_LENGTH = 64 * 1024;

    private final AeronArchive archive;
    private final RecordingDescriptor recording;
    private final long fromPosition;
    private final long limitPosition;
    private final long replaySessionId;
    /** Null for an empty range: nothing was asked of the archive. */
    private final io.aeron.Subscription subscription;
    private final UnsafeBuffer frameBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(MAX_FRAME_LENGTH));
    private final Header restoredHeader;
    private final FragmentHandler restoringHandler = this::onFragment;
    private final ControlledFragmentHandler restoringControlledHandler = this::onControlledFragment;
    private io.aeron.Image image;
    private FragmentHandler handler;
    private ControlledFragmentHandler controlledHandler;
    private boolean isClosed;

    /**
     * Asks the archive to replay and subscribes to the replay.
     *
     * @param connection   the archive connection (its Aeron client receives the replay).
     * @param archive      a control session of that connection; the replay is stopped through it on close.
     * @param recording    to replay.
     * @param fromPosition a frame boundary within the recording, e.g. its start position.
     * @param length       bytes to replay, or {@link #TO_END}.
     * @return the replay, delivering once the archive has connected it. An empty range (length 0, or
     * {@link #TO_END} from a stopped recording's stop position) gives a replay that is done at once, without a
     * request to the archive, which refuses a replay that starts at its limit: the recorder leaves an empty
     * recording when it is dropped again as soon as it rejoins.
     * @throws IllegalArgumentException when the range lies outside the recording.
     */
    public static ArchiveReplay start(
        final ArchiveConnection connection,
        final AeronArchive archive,
        final RecordingDescriptor recording,
        final long fromPosition,
        final long length)
    {
        final long stopPosition = recording.isActive() ? Long.MAX_VALUE : recording.stopPosition();
        if (fromPosition < recording.startPosition() || fromPosition > stopPosition ||
            (TO_END != length && (length < 0 || fromPosition + length > stopPosition)))
        {
            throw new IllegalArgumentException("replay of [" + fromPosition + ", " +
                (TO_END == length ? "end" : Long.toString(fromPosition + length)) + ") is outside " +
                recording.describe());
        }
        return new ArchiveReplay(connection, archive, recording, fromPosition, length);
    }

    private ArchiveReplay(
        final ArchiveConnection connection,
        final AeronArchive archive,
        final RecordingDescriptor recording,
        final long fromPosition,
        final long length)
    {
        this.archive = archive;
        this.recording = recording;
        this.fromPosition = fromPosition;
        final boolean empty = 0 == length || (TO_END == length && !recording.isActive() &&
            fromPosition == recording.stopPosition());
        this.limitPosition = empty ? fromPosition : TO_END == length ? Long.MAX_VALUE : fromPosition + length;
        this.restoredHeader = new Header(
            recording.initialTermId(), LogBufferDescriptor.positionBitsToShift(recording.termBufferLength()));
        if (empty)
        {
            this.replaySessionId = Aeron.NULL_VALUE;
            this.subscription = null;
            return;
        }
        final ArchiveConnection.Context context = connection.context();
        this.replaySessionId = archive.startReplay(
            recording.recordingId(), fromPosition, length, context.replayChannel(), context.replayStreamId());
        try
        {
            final String channel = new ChannelUriStringBuilder(context.replayChannel())
                .sessionId((int)replaySessionId)
                .build();
            this.subscription = connection.aeron().addSubscription(channel, context.replayStreamId());
        }
        catch (final RuntimeException ex)
        {
            archive.stopReplay(replaySessionId);
            throw ex;
        }
    }

    /** @return the recording replayed. */
    public RecordingDescriptor recording()
    {
        return recording;
    }

    /** @return the position the replay started at. */
    public long fromPosition()
    {
        return fromPosition;
    }

    /** @return where a bounded replay ends, or {@link Long#MAX_VALUE} when it follows the recording. */
    public long limitPosition()
    {
        return limitPosition;
    }

    /** @return the stream position up to which frames were delivered. */
    public long position()
    {
        return null == image ? fromPosition : image.position();
    }

    /** @return true once the archive's replay has connected (at once for an empty range). */
    public boolean isConnected()
    {
        return null == subscription || null != image || null != findImage();
    }

    /** @return true once a bounded replay delivered everything, or the replay ended (closed image). */
    public boolean isDone()
    {
        if (isClosed || null == subscription)
        {
            return true;
        }
        final io.aeron.Image image = findImage();
        return null != image && (image.position() >= limitPosition || image.isClosed() || image.isEndOfStream());
    }

    /**
     * Delivers up to {@code fragmentLimit} frames, restored to the live stream's header.
     *
     * @return the number of frames delivered.
     */
    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        final io.aeron.Image image = findImage();
        if (null == image)
        {
            return 0;
        }
        handler = fragmentHandler;
        return image.boundedPoll(restoringHandler, limitPosition, fragmentLimit);
    }

    /**
     * Like {@link #poll} but the handler steers each frame (ABORT leaves it for the next poll).
     *
     * @return the number of frames consumed.
     */
    public int controlledPoll(final ControlledFragmentHandler fragmentHandler, final int fragmentLimit)
    {
        final io.aeron.Image image = findImage();
        if (null == image)
        {
            return 0;
        }
        controlledHandler = fragmentHandler;
        return image.boundedControlledPoll(restoringControlledHandler, limitPosition, fragmentLimit);
    }

    private io.aeron.Image findImage()
    {
        if (null == image && !isClosed && null != subscription)
        {
            image = subscription.imageBySessionId((int)replaySessionId);
        }
        return image;
    }

    private void onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        handler.onFragment(frameBuffer, HEADER_LENGTH, restore(header), restoredHeader);
    }

    private ControlledFragmentHandler.Action onControlledFragment(
        final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        return controlledHandler.onFragment(frameBuffer, HEADER_LENGTH, restore(header), restoredHeader);
    }

    /** Copies the frame and puts back the recorded stream's session id and stream id; returns the payload length. */
    private int restore(final Header header)
    {
        final int frameLength = header.frameLength();
        frameBuffer.putBytes(0, header.buffer(), header.offset(), frameLength);
        frameBuffer.putInt(DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET, recording.sessionId());
        frameBuffer.putInt(DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET, recording.streamId());
        restoredHeader.buffer(frameBuffer);
        restoredHeader.offset(0);
        restoredHeader.fragmentedFrameLength(header.fragmentedFrameLength());
        return frameLength - HEADER_LENGTH;
    }

    /** Stops the replay at the archive unless it ended, and closes the subscription. Idempotent. */
    public void close()
    {
        if (isClosed)
        {
            return;
        }
        isClosed = true;
        final io.aeron.Image image = this.image;
        final boolean ended = null != image && (image.position() >= limitPosition || image.isEndOfStream());
        if (null != subscription && !ended && !archive.context().aeron().isClosed())
        {
            try
            {
                archive.stopReplay(replaySessionId);
            }
            catch (final RuntimeException ignore)
            {
                // the archive may have ended the replay or gone away already
            }
        }
        CloseHelper.quietClose(subscription);
    }
}
