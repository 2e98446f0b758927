package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;

/**
 * One entry of the archive's catalog, as the recorder and replayers read it. Positions are Verbus stream positions:
 * a recording of session {@code sessionId} starts at {@code startPosition} of that stream and, once stopped, ends at
 * {@code stopPosition} ({@link AeronArchive#NULL_POSITION} while it is being recorded).
 *
 * @param recordingId       the archive's id.
 * @param startTimestampMs  when recording started, epoch ms.
 * @param stopTimestampMs   when it stopped, epoch ms, or {@link AeronArchive#NULL_TIMESTAMP}.
 * @param startPosition     the stream position of its first byte.
 * @param stopPosition      the stream position after its last byte, or {@link AeronArchive#NULL_POSITION} when
 *                          active.
 * @param initialTermId     of the recorded stream.
 * @param segmentFileLength of the archive's files for it.
 * @param termBufferLength  of the recorded stream.
 * @param mtuLength         of the recording publication.
 * @param sessionId         of the recorded stream (the Verbus publisher's session id).
 * @param streamId          of the recorded stream.
 * @param originalChannel   the recording publication's channel; its alias names the Verbus channel.
 * @param sourceIdentity    as the archive saw it.
 */
public record RecordingDescriptor(
    long recordingId,
    long startTimestampMs,
    long stopTimestampMs,
    long startPosition,
    long stopPosition,
    int initialTermId,
    int segmentFileLength,
    int termBufferLength,
    int mtuLength,
    int sessionId,
    int streamId,
    String originalChannel,
    String sourceIdentity)
{
    /** @return true while the archive is still recording it (its stop position is not yet known). */
    public boolean isActive()
    {
        return AeronArchive.NULL_POSITION == stopPosition;
    }

    /** @return the Verbus channel the recorder subscribed to, or null for a recording Verbus did not make. */
    public String verbusChannel()
    {
        return RecordingChannel.verbusChannelOf(originalChannel);
    }

    /** @return true when it was made by a Verbus recorder. */
    public boolean isVerbusRecording()
    {
        return null != verbusChannel();
    }

    /**
     * @param other another recording.
     * @return true when both hold the same stream: same session, stream, initial term id and term length, so their
     * positions are positions of one log.
     */
    public boolean sameStreamAs(final RecordingDescriptor other)
    {
        return sessionId == other.sessionId && streamId == other.streamId && initialTermId == other.initialTermId &&
            termBufferLength == other.termBufferLength;
    }

    /** @return one line for the command line. */
    public String describe()
    {
        return "recording " + recordingId + ": stream=" + streamId + " session=" + sessionId + " positions [" +
            startPosition + ", " + (isActive() ? "active" : Long.toString(stopPosition)) + ") term-length=" +
            termBufferLength + " initial-term-id=" + initialTermId + " mtu=" + mtuLength + " channel=" +
            verbusChannel();
    }
}
