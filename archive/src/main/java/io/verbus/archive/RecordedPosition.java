package io.verbus.archive;

import io.aeron.Aeron;
import io.aeron.archive.client.AeronArchive;
import io.aeron.archive.status.RecordingPos;
import org.agrona.concurrent.status.CountersReader;

import java.util.concurrent.TimeUnit;

/**
 * How far the archive has recorded a recording: its position counter when this process shares the archive's media
 * driver (one volatile read), else a position query to the archive a few times a second; the stop position once it
 * has stopped.
 */
final class RecordedPosition
{
    /** How often a remote archive is asked. */
    static final long QUERY_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);

    private final ArchiveConnection connection;
    private final AeronArchive archive;
    private long recordingId = Aeron.NULL_VALUE;
    private int counterId = Aeron.NULL_VALUE;
    private long position = AeronArchive.NULL_POSITION;
    private long stopPosition = AeronArchive.NULL_POSITION;
    private long nextQueryNs;

    RecordedPosition(final ArchiveConnection connection, final AeronArchive archive)
    {
        this.connection = connection;
        this.archive = archive;
    }

    /**
     * @param recording the recording, as last listed.
     * @param nowNs     now.
     * @return its recorded position, or its stop position once stopped.
     */
    long of(final RecordingDescriptor recording, final long nowNs)
    {
        if (!recording.isActive())
        {
            return recording.stopPosition();
        }
        if (recording.recordingId() != recordingId)
        {
            recordingId = recording.recordingId();
            counterId = Aeron.NULL_VALUE;
            position = recording.startPosition();
            stopPosition = AeronArchive.NULL_POSITION;
            nextQueryNs = nowNs;
        }
        if (AeronArchive.NULL_POSITION != stopPosition)
        {
            return stopPosition;
        }
        if (connection.sharesArchiveDriver())
        {
            final CountersReader counters = connection.countersReader();
            if (Aeron.NULL_VALUE == counterId)
            {
                counterId = RecordingPos.findCounterIdByRecording(counters, recordingId, archive.archiveId());
            }
            if (Aeron.NULL_VALUE != counterId)
            {
                final long value = counters.getCounterValue(counterId);
                if (RecordingPos.isActive(counters, counterId, recordingId))
                {
                    position = Math.max(position, value);
                    return position;
                }
                counterId = Aeron.NULL_VALUE;
            }
        }
        else if (nowNs - nextQueryNs < 0)
        {
            return position;
        }
        nextQueryNs = nowNs + QUERY_INTERVAL_NS;
        final long queried = archive.getRecordingPosition(recordingId);
        if (AeronArchive.NULL_POSITION != queried)
        {
            position = Math.max(position, queried);
            return position;
        }
        stopPosition = archive.getStopPosition(recordingId);
        return AeronArchive.NULL_POSITION != stopPosition ? stopPosition : position;
    }
}
