package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.CloseHelper;

import java.util.List;
import java.util.function.Consumer;

/**
 * Replays a position range of one publisher session across its recordings, in stream order: one
 * {@link ArchiveReplay} after another, telling the gap listener of each range no recording holds. Polled by one
 * thread, like an image.
 */
public final class SessionReplay implements AutoCloseable
{
    private final ArchiveConnection connection;
    private final AeronArchive archive;
    private final List<RecordingDescriptor> recordings;
    private final long toPosition;
    private final Consumer<RecordingGap> gapListener;
    private ArchiveReplay current;
    private int nextIndex;
    private long position;
    private boolean isDone;

    /**
     * @param connection   to receive replays on.
     * @param archive      a control session of it.
     * @param recordings   one session's recordings ordered by start position ({@link StreamRecordings#ofSession}).
     * @param fromPosition first position to replay (a frame boundary), or -1 for the first recording's start.
     * @param toPosition   position to stop at, or {@link Long#MAX_VALUE} for the end of the last recording.
     * @param gapListener  told of each range in {@code [fromPosition, toPosition)} no recording holds.
     */
    public SessionReplay(
        final ArchiveConnection connection,
        final AeronArchive archive,
        final List<RecordingDescriptor> recordings,
        final long fromPosition,
        final long toPosition,
        final Consumer<RecordingGap> gapListener)
    {
        if (recordings.isEmpty())
        {
            throw new IllegalArgumentException("no recordings to replay");
        }
        this.connection = connection;
        this.archive = archive;
        this.recordings = List.copyOf(recordings);
        this.position = fromPosition < 0 ? recordings.get(0).startPosition() : fromPosition;
        this.toPosition = toPosition;
        this.gapListener = gapListener;
    }

    /** @return the stream position replayed up to. */
    public long position()
    {
        return null == current ? position : Math.max(position, current.position());
    }

    /** @return true when the range has been replayed (or no recording holds the rest of it). */
    public boolean isDone()
    {
        return isDone;
    }

    /**
     * @return frames delivered.
     */
    public int poll(final FragmentHandler handler, final int fragmentLimit)
    {
        if (!advance())
        {
            return 0;
        }
        return current.poll(handler, fragmentLimit);
    }

    /**
     * @return frames consumed.
     */
    public int controlledPoll(final ControlledFragmentHandler handler, final int fragmentLimit)
    {
        if (!advance())
        {
            return 0;
        }
        return current.controlledPoll(handler, fragmentLimit);
    }

    /** Finishes a completed replay and starts the next recording's; false when there is nothing to poll. */
    private boolean advance()
    {
        if (isDone)
        {
            return false;
        }
        if (null != current)
        {
            if (!current.isDone())
            {
                return true;
            }
            position = Math.max(position, current.position());
            CloseHelper.close(current);
            current = null;
        }
        while (nextIndex < recordings.size() && position < toPosition)
        {
            final RecordingDescriptor recording = recordings.get(nextIndex++);
            final long stop = recording.isActive() ? Long.MAX_VALUE : recording.stopPosition();
            if (stop <= position || recording.startPosition() == stop)
            {
                continue;
            }
            if (recording.startPosition() > position)
            {
                gapListener.accept(new RecordingGap(recording.streamId(), recording.sessionId(), position,
                    Math.min(recording.startPosition(), toPosition), "no recording holds these positions"));
                position = recording.startPosition();
                if (position >= toPosition)
                {
                    break;
                }
            }
            final long end = Math.min(stop, toPosition);
            current = ArchiveReplay.start(connection, archive, recording, position,
                Long.MAX_VALUE == end ? ArchiveReplay.TO_END : end - position);
            return true;
        }
        if (position < toPosition && Long.MAX_VALUE != toPosition)
        {
            final RecordingDescriptor last = recordings.get(recordings.size() - 1);
            gapListener.accept(new RecordingGap(last.streamId(), last.sessionId(), position, toPosition,
                "beyond the last recording"));
        }
        isDone = true;
        return false;
    }

    public void close()
    {
        CloseHelper.close(current);
        current = null;
        isDone = true;
    }
}
