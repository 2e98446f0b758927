package io.verbus.archive;

import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** A recording listener that keeps what it was told, for tests to wait on and assert. */
final class RecordingEvents implements RecordingListener
{
    final List<String> events = new CopyOnWriteArrayList<>();
    final List<RecordingGap> gaps = new CopyOnWriteArrayList<>();

    public void onRecordingStarted(
        final long recordingId, final int streamId, final int sessionId, final long startPosition,
        final boolean extended)
    {
        events.add((extended ? "extended " : "started ") + recordingId + " at " + startPosition);
    }

    public void onGap(final RecordingGap gap)
    {
        gaps.add(gap);
        events.add("gap " + gap.fromPosition() + " " + gap.toPosition());
    }

    public void onRecordingStopped(final long recordingId, final long stopPosition)
    {
        events.add("stopped " + recordingId + " at " + stopPosition);
    }

    public void onArchiveLost(final String reason)
    {
        events.add("lost");
    }

    public void onArchiveReconnected()
    {
        events.add("reconnected");
    }

    boolean saw(final String prefix)
    {
        for (final String event : events)
        {
            if (event.startsWith(prefix))
            {
                return true;
            }
        }
        return false;
    }

    public String toString()
    {
        return events.toString();
    }
}
