package io.verbus.archive;

import io.aeron.FragmentAssembler;
import io.aeron.archive.client.AeronArchive;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** Recording and replay of an in-process {@code ipc} stream through an embedded archive. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RecordReplayIpcTest
{
    private static final int MESSAGES = 20_000;

    @TempDir
    Path dir;

    @Test
    void shouldGiveAReplayOfAnEmptyRangeThatIsDoneAtOnce()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(dir));
            VerbusRecorder recorder = ArchiveTestSupport.ipcRecorder(verbus, dir))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
            TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());
            ArchiveTestSupport.offerMessages(publication, 100);
            final int sessionId = publication.sessionId();
            final long endPosition = publication.position();
            TestSupport.await("recorded", () -> recorder.recordedPosition(sessionId) == endPosition);
            publication.close();

            try (AeronArchive archive = recorder.connection().connectArchive())
            {
                final RecordingDescriptor[] stopped = new RecordingDescriptor[1];
                TestSupport.await("the recording stopped", () ->
                {
                    stopped[0] = StreamRecordings.ofSession(archive, STREAM_ID, sessionId).get(0);
                    return !stopped[0].isActive();
                });
                final RecordingDescriptor recording = stopped[0];
                assertEquals(endPosition, recording.stopPosition());

                // Aeron Archive refuses a replay that starts at its limit; these ask nothing of it and are done.
                assertEmptyAndDone(ArchiveReplay.start(recorder.connection(), archive, recording, endPosition,
                    ArchiveReplay.TO_END), endPosition);
                assertEmptyAndDone(ArchiveReplay.start(recorder.connection(), archive, recording, endPosition, 0),
                    endPosition);
                assertEmptyAndDone(ArchiveReplay.start(recorder.connection(), archive, recording, 0, 0), 0);
            }
        }
    }

    private static void assertEmptyAndDone(final ArchiveReplay replay, final long position)
    {
        try (replay)
        {
            assertTrue(replay.isConnected());
            assertTrue(replay.isDone());
            assertEquals(0, replay.poll((buffer, offset, length, header) -> fail("a frame from an empty range"), 16));
            assertEquals(position, replay.position());
            assertEquals(position, replay.limitPosition());
        }
    }

    @Test
    void shouldRecordAnIpcStreamAndReplayEveryFrameByteForByteAtTheSamePositions()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(dir));
            VerbusRecorder recorder = ArchiveTestSupport.ipcRecorder(verbus, dir))
        {
            final Subscription live = verbus.addSubscription("ipc", STREAM_ID);
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
            TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());

            final FrameCapture capture = new FrameCapture(4 * 1024 * 1024);
            final MessageStream.Checker liveChecker = new MessageStream.Checker(0, RARELY_FRAGMENTED);
            final FragmentAssembler liveAssembler = new FragmentAssembler((buffer, offset, length, header) ->
                liveChecker.onMessage(buffer, offset, length));
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
            long sequence = 0;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (liveChecker.received < MESSAGES && System.nanoTime() < deadlineNs)
            {
                if (sequence < MESSAGES)
                {
                    final int length = MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED);
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
                final MessageStream.Checker replayChecker = new MessageStream.Checker(0, RARELY_FRAGMENTED);
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

    @Test
    void shouldRepublishAReplayIntoAVerbusChannelWithTheRecordedFramesAndPositions()
    {
        final int messages = 3_000;
        final int targetStreamId = STREAM_ID + 1;
        try (Verbus verbus = Verbus.launch(TestSupport.context(dir));
            VerbusRecorder recorder = ArchiveTestSupport.ipcRecorder(verbus, dir))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
            TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
            for (long sequence = 0; sequence < messages; )
            {
                if (publication.offer(message, 0, MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED)) > 0)
                {
                    sequence++;
                }
            }
            final long endPosition = publication.position();
            TestSupport.await("recorded", () -> recorder.recordedPosition(publication.sessionId()) == endPosition);

            final Subscription target = verbus.addSubscription("ipc", targetStreamId);
            final ExclusivePublication targetPublication = verbus.addExclusivePublication("ipc", targetStreamId);
            final FrameCapture replayed = new FrameCapture(1024 * 1024);
            final FrameCapture republished = new FrameCapture(1024 * 1024);
            final MessageStream.Checker checker = new MessageStream.Checker(0, RARELY_FRAGMENTED);
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
                checker.onMessage(buffer, offset, length));
            try (AeronArchive archive = recorder.connection().connectArchive();
                ArchiveReplay replay = ArchiveReplay.start(recorder.connection(), archive,
                    StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId()).get(0), 0, endPosition))
            {
                final ReplayPublisher replayPublisher = new ReplayPublisher(targetPublication);
                TestSupport.await("republished", () -> checker.received == messages || null != checker.failure, () ->
                {
                    replay.controlledPoll((buffer, offset, length, header) ->
                    {
                        final io.aeron.logbuffer.ControlledFragmentHandler.Action action =
                            replayPublisher.onFragment(buffer, offset, length, header);
                        if (io.aeron.logbuffer.ControlledFragmentHandler.Action.CONTINUE == action)
                        {
                            replayed.add(header);
                        }
                        return action;
                    }, 64);
                    target.poll((buffer, offset, length, header) ->
                    {
                        republished.add(header);
                        assembler.onFragment(buffer, offset, length, header);
                    }, 64);
                });
            }
            assertNull(checker.failure, () -> checker.failure + "; first frame difference: " +
                firstDifference(replayed, republished));
            assertEquals(messages, checker.received);
            assertEquals(endPosition, targetPublication.position(), "the target log ends where the recording does");
            assertEquals(replayed.frames(), republished.frames());
            assertNull(firstDifference(replayed, republished));
        }
    }

    private static String firstDifference(final FrameCapture expected, final FrameCapture actual)
    {
        final FrameCapture.Cursor expectedCursor = expected.cursor();
        final FrameCapture.Cursor actualCursor = actual.cursor();
        for (long i = 0, frames = Math.min(expected.frames(), actual.frames()); i < frames; i++)
        {
            final String difference = expectedCursor.matchNextIgnoringIds(actualCursor);
            if (null != difference)
            {
                return difference;
            }
        }
        return null;
    }
}
