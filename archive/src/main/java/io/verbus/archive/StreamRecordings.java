package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * Reads the archive's catalog as Verbus streams: the recordings of one session of one stream, in stream order, and
 * the gaps between them. Each call is one or a few control round trips; none is meant for a hot path.
 */
public final class StreamRecordings
{
    /** Catalog entries fetched per request. */
    static final int PAGE_LENGTH = 256;

    private StreamRecordings()
    {
    }

    /**
     * @param archive to ask.
     * @return every recording in the catalog (Verbus's or not), in recording id order.
     */
    public static List<RecordingDescriptor> all(final AeronArchive archive)
    {
        final List<RecordingDescriptor> recordings = new ArrayList<>();
        long fromRecordingId = 0;
        while (true)
        {
            final int before = recordings.size();
            final int found = archive.listRecordings(fromRecordingId, PAGE_LENGTH,
                (controlSessionId, correlationId, recordingId, startTimestamp, stopTimestamp, startPosition,
                stopPosition, initialTermId, segmentFileLength, termBufferLength, mtuLength, sessionId, streamId,
                strippedChannel, originalChannel, sourceIdentity) -> recordings.add(new RecordingDescriptor(
                    recordingId, startTimestamp, stopTimestamp, startPosition, stopPosition, initialTermId,
                    segmentFileLength, termBufferLength, mtuLength, sessionId, streamId, originalChannel,
                    sourceIdentity)));
            if (found < PAGE_LENGTH || recordings.size() == before)
            {
                return recordings;
            }
            fromRecordingId = recordings.get(recordings.size() - 1).recordingId() + 1;
        }
    }

    /**
     * @param archive  to ask.
     * @param streamId of the stream.
     * @return the Verbus recordings of the stream, every session, in recording id order.
     */
    public static List<RecordingDescriptor> ofStream(final AeronArchive archive, final int streamId)
    {
        final List<RecordingDescriptor> recordings = new ArrayList<>();
        for (final RecordingDescriptor recording : all(archive))
        {
            if (recording.streamId() == streamId && recording.isVerbusRecording())
            {
                recordings.add(recording);
            }
        }
        return recordings;
    }

    /**
     * @param archive   to ask.
     * @param streamId  of the stream.
     * @param sessionId of the publisher.
     * @return that session's recordings ordered by start position (then recording id).
     */
    public static List<RecordingDescriptor> ofSession(
        final AeronArchive archive, final int streamId, final int sessionId)
    {
        final List<RecordingDescriptor> recordings = new ArrayList<>();
        for (final RecordingDescriptor recording : ofStream(archive, streamId))
        {
            if (recording.sessionId() == sessionId)
            {
                recordings.add(recording);
            }
        }
        recordings.sort(Comparator.comparingLong(RecordingDescriptor::startPosition)
            .thenComparingLong(RecordingDescriptor::recordingId));
        return recordings;
    }

    /**
     * @param archive     to ask.
     * @param recordingId to look up.
     * @return the recording, or null when the catalog has no such id.
     */
    public static RecordingDescriptor byId(final AeronArchive archive, final long recordingId)
    {
        final RecordingDescriptor[] found = new RecordingDescriptor[1];
        archive.listRecording(recordingId,
            (controlSessionId, correlationId, id, startTimestamp, stopTimestamp, startPosition, stopPosition,
            initialTermId, segmentFileLength, termBufferLength, mtuLength, sessionId, streamId, strippedChannel,
            originalChannel, sourceIdentity) -> found[0] = new RecordingDescriptor(
                id, startTimestamp, stopTimestamp, startPosition, stopPosition, initialTermId, segmentFileLength,
                termBufferLength, mtuLength, sessionId, streamId, originalChannel, sourceIdentity));
        return found[0];
    }

    /**
     * @param archive  to ask.
     * @param streamId of the stream.
     * @return the newest Verbus recording of the stream (highest recording id), or null.
     */
    public static RecordingDescriptor latest(final AeronArchive archive, final int streamId)
    {
        final List<RecordingDescriptor> recordings = ofStream(archive, streamId);
        return recordings.isEmpty() ? null : recordings.get(recordings.size() - 1);
    }

    /**
     * @param sessionRecordings one session's recordings ordered by start position ({@link #ofSession}).
     * @return the position ranges between them that no recording holds, in order.
     */
    public static List<RecordingGap> gaps(final List<RecordingDescriptor> sessionRecordings)
    {
        final List<RecordingGap> gaps = new ArrayList<>();
        long coveredTo = Long.MIN_VALUE;
        for (final RecordingDescriptor recording : sessionRecordings)
        {
            if (coveredTo != Long.MIN_VALUE && recording.startPosition() > coveredTo)
            {
                gaps.add(new RecordingGap(recording.streamId(), recording.sessionId(), coveredTo,
                    recording.startPosition(), "between recordings (the recorder was not subscribed)"));
            }
            if (recording.isActive())
            {
                return gaps;
            }
            coveredTo = Math.max(coveredTo, recording.stopPosition());
        }
        return gaps;
    }

    /**
     * @param sessionRecordings one session's recordings ordered by start position.
     * @param position          a stream position.
     * @return the first recording holding the position (or starting there), or null.
     */
    public static RecordingDescriptor covering(final List<RecordingDescriptor> sessionRecordings, final long position)
    {
        for (final RecordingDescriptor recording : sessionRecordings)
        {
            if (recording.startPosition() <= position && (recording.isActive() || position < recording.stopPosition()))
            {
                return recording;
            }
        }
        return null;
    }
}
