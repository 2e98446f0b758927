package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.verbus.TestSupport;

import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Replays a recording range and checks it frame for frame against a live capture positioned at the same start. */
final class ReplayVerifier
{
    private ReplayVerifier()
    {
    }

    /**
     * Replays {@code [from, to)} of a recording and compares every frame with the live capture's frames in that
     * range.
     *
     * @return the number of frames compared.
     */
    static long verify(
        final ArchiveConnection connection,
        final AeronArchive archive,
        final RecordingDescriptor recording,
        final long from,
        final long to,
        final FrameCapture live)
    {
        final FrameCapture.Cursor cursor = live.cursor();
        cursor.skipTo(from);
        final String[] mismatch = new String[1];
        final long[] frames = { 0 };
        try (ArchiveReplay replay = ArchiveReplay.start(connection, archive, recording, from, to - from))
        {
            TestSupport.await("replay of " + recording.recordingId() + " to " + to, () -> replay.position() >= to,
                () -> replay.poll((buffer, offset, length, header) ->
                {
                    frames[0]++;
                    final String difference = cursor.matchNext(header);
                    if (null == mismatch[0])
                    {
                        mismatch[0] = difference;
                    }
                }, 256));
        }
        assertNull(mismatch[0]);
        assertTrue(cursor.nextFrameEnd() > to, "every live frame up to " + to + " was replayed");
        return frames[0];
    }
}
