package io.verbus.archive;

/**
 * Stream positions a recorder did not record: {@code [fromPosition, toPosition)} of one session of one stream. It
 * arises when the recorder's subscription was dropped and rejoined further on (under {@code fc=max}), or the recorder
 * was not running. The recordings on either side are intact.
 *
 * @param streamId     of the stream.
 * @param sessionId    of the publisher.
 * @param fromPosition where the earlier recording stopped.
 * @param toPosition   where the next recording starts.
 * @param reason       what the recorder knows about why.
 */
public record RecordingGap(int streamId, int sessionId, long fromPosition, long toPosition, String reason)
{
    /** @return the number of bytes of the stream missing. */
    public long length()
    {
        return toPosition - fromPosition;
    }

    public String toString()
    {
        return "gap in stream=" + streamId + " session=" + sessionId + ": positions [" + fromPosition + ", " +
            toPosition + ") not recorded (" + length() + " bytes): " + reason;
    }
}
