package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.aeron.FragmentAssembler;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Recording and replay of an in-process {@code ipc} stream through an embedded archive. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RecordReplayIpcTest
{
    private static final int MESSAGES = 20_000;

    @TempDir
    Path dir;

    @Test
    void shouldRecordAnIpcStreamAndReplayEveryFrameByteForByteAtTheSamePositions()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(dir));
            VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                .verbus(verbus).channel("ipc").streamId(STREAM_ID).archive(ArchiveTestSupport.embeddedArchive(dir))))
        {
            final Subscription live = verbus.addSubscription("ipc", STREAM_ID);
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
            TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());

            final FrameCapture capture = new FrameCapture(4 * 1024 * 1024);
            final TestMessages.Checker liveChecker = new TestMessages.Checker(0);
            final FragmentAssembler liveAssembler = new FragmentAssembler((buffer, offset, length, header) ->
                liveChecker.onMessage(buffer, offset, length));
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(TestMessages.MAX_LENGTH);
            long sequence = 0;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (liveChecker.received < MESSAGES && System.nanoTime() < deadlineNs)
            {
                if (sequence < MESSAGES)
                {
                    final int length = TestMessages.encode(message, sequence);
                    if (publication.offer(message, 0, length) > 0)
                    {
                        sequence++;
                    }
                }
                live.poll((buffer, offset, length, header) ->
                {
                    capture.add(header);
                    liveAssembler.onFragment(buffer, offset, length, header);
                }, 64);
            }
            assertNull(liveChecker.failure);
            assertEquals(MESSAGES, liveChecker.received);
            final long endPosition = publication.position();
            assertEquals(endPosition, capture.lastPosition());

            TestSupport.await("recorded to " + endPosition,
                () -> recorder.recordedPosition(publication.sessionId()) == endPosition);

            try (AeronArchive archive = recorder.connection().connectArchive())
            {
                final List<RecordingDescriptor> recordings =
                    StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId());
                assertEquals(1, recordings.size(), recordings.toString());
                final RecordingDescriptor recording = recordings.get(0);
                assertEquals(0, recording.startPosition());
                assertEquals(publication.initialTermId(), recording.initialTermId());
                assertEquals(publication.termBufferLength(), recording.termBufferLength());
                assertEquals("ipc", recording.verbusChannel());

                final FrameCapture.Cursor cursor = capture.cursor();
                final TestMessages.Checker replayChecker = new TestMessages.Checker(0);
                final FragmentAssembler replayAssembler = new FragmentAssembler((buffer, offset, length, header) ->
                    replayChecker.onMessage(buffer, offset, length));
                final String[] mismatch = new String[1];
                try (ArchiveReplay replay = ArchiveReplay.start(recorder.connection(), archive, recording, 0,
                    endPosition))
                {
                    ArchiveTestSupport.replayTo(replay, endPosition, (buffer, offset, length, header) ->
                    {
                        final String difference = cursor.matchNext(header);
                        if (null == mismatch[0])
                        {
                            mismatch[0] = difference;
                        }
                        replayAssembler.onFragment(buffer, offset, length, header);
                    });
                    assertTrue(replay.isDone());
                }
                assertNull(mismatch[0]);
                assertTrue(cursor.isAtEnd(), "replayed " + cursor.index() + " of " + capture.frames() + " frames");
                assertNull(replayChecker.failure);
                assertEquals(MESSAGES, replayChecker.received);
            }
        }
    }
}
