package io.verbus.archive;

/**
 * Told what a {@link VerbusRecorder} does, on the recorder's thread. Every method has an empty default; none may
 * block for long (the recorder records nothing meanwhile).
 */
public interface RecordingListener
{
    /**
     * The archive started recording one publisher session of the stream, or extended an earlier recording of it.
     *
     * @param recordingId   the archive's recording id.
     * @param streamId      of the stream.
     * @param sessionId     of the publisher.
     * @param startPosition the stream position recording starts at.
     * @param extended      true when an earlier recording that stopped exactly there goes on.
     */
    default void onRecordingStarted(
        final long recordingId,
        final int streamId,
        final int sessionId,
        final long startPosition,
        final boolean extended)
    {
    }

    /**
     * Positions of the stream that will never be in the archive.
     *
     * @param gap what is missing and why.
     */
    default void onGap(final RecordingGap gap)
    {
    }

    /**
     * A recording stopped: its image went away (publisher closed, subscription dropped) and all of it is recorded.
     *
     * @param recordingId  the recording.
     * @param stopPosition where it ends.
     */
    default void onRecordingStopped(final long recordingId, final long stopPosition)
    {
    }

    /**
     * The archive went away; the recorder keeps reading up to a term it has not recorded, then back-pressures the
     * stream, and reconnects.
     *
     * @param reason as seen by the recorder.
     */
    default void onArchiveLost(final String reason)
    {
    }

    /** The archive is back; recordings resume where the archive stopped them. */
    default void onArchiveReconnected()
    {
    }
}
