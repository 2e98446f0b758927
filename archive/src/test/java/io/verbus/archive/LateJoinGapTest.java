package io.verbus.archive;

import io.aeron.FragmentAssembler;
import io.aeron.archive.client.AeronArchive;
import io.aeron.logbuffer.Header;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.DirectBuffer;
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
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A late joiner whose replay, still short of the position where its live image joined, meets a recording gap that
 * spans that position (the recorder stopped, the joiner attached live, the recorder came back further on): it
 * reports the unrecorded range up to the join, delivers every message the first recording holds and every message
 * from the join on, once and in order, and merges into live.
 * <p>
 * The archive runs on its own (as an archive host would), so the recorders come and go while the joiner keeps its
 * control session; the joiner is not polled between attaching live and the second recording's start, so its replay
 * meets the gap only once the second recording exists.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class LateJoinGapTest
{
    /** Recorded by the first recorder. */
    private static final int RECORDED_FIRST = 300;
    /** Published with no recorder, before the joiner attaches live. */
    private static final int UNRECORDED_BEFORE_JOIN = 100;
    /** Published with no recorder, after the joiner attached live (so past its join). */
    private static final int UNRECORDED_AFTER_JOIN = 100;
    /** Recorded by the second recorder. */
    private static final int RECORDED_SECOND = 200;
    private static final int MESSAGES =
        RECORDED_FIRST + UNRECORDED_BEFORE_JOIN + UNRECORDED_AFTER_JOIN + RECORDED_SECOND;

    @TempDir
    Path dir;

    private final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
    /** The publication's position after each message. */
    private final long[] positionAfter = new long[MESSAGES];
    private int sequence;
    /** Checks the messages below the join (all from the first recording), and those from the join on. */
    private final MessageStream.Checker beforeGap = new MessageStream.Checker(0, RARELY_FRAGMENTED);
    private final MessageStream.Checker fromJoin =
        new MessageStream.Checker(RECORDED_FIRST + UNRECORDED_BEFORE_JOIN, RARELY_FRAGMENTED);

    @Test
    void shouldMergeIntoLiveAndReportTheGapUpToTheJoinWhenTheReplayJumpsPastIt() throws Exception
    {
        final String control = "aeron:udp?endpoint=localhost:" + RemoteArchiveTest.freeUdpPort();
        try (ArchiveConnection archiveHost =
            ArchiveConnection.connect(ArchiveTestSupport.embeddedArchive(dir).controlChannel(control));
            Verbus verbus = Verbus.launch(TestSupport.context(dir)))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc:term-length=1m", STREAM_ID);
            final Subscription live = verbus.addSubscription("ipc", STREAM_ID);
            TestSupport.await("live subscriber", publication::isConnected);

            final long firstRecordingStop;
            try (VerbusRecorder first = recorder(verbus, control, "first"))
            {
                TestSupport.await("first recorder image", () -> 1 == first.subscription().imageCount());
                publish(publication, live, RECORDED_FIRST);
                firstRecordingStop = publication.position();
                TestSupport.await("first recording to " + firstRecordingStop,
                    () -> first.recordedPosition(publication.sessionId()) == firstRecordingStop,
                    () -> live.poll((buffer, offset, length, header) -> {}, 256));
            }
            publish(publication, live, RECORDED_FIRST + UNRECORDED_BEFORE_JOIN);

            // A merge window wider than the stream: the joiner attaches live on its first polls, far behind.
            final LateJoinSubscription joiner = LateJoinSubscription.join(new LateJoinSubscription.Context()
                .verbus(verbus).connection(archiveHost).channel("ipc").streamId(STREAM_ID)
                .sessionId(publication.sessionId()).fromPosition(0).mergeWindowBytes(64L * 1024 * 1024));
            final FragmentAssembler assembler = new FragmentAssembler(this::onMessage);
            TestSupport.await("live attached", () -> joiner.liveJoinPosition() >= 0, () -> joiner.poll(assembler, 1));
            final long joinPosition = joiner.liveJoinPosition();
            assertEquals(positionAfter[RECORDED_FIRST + UNRECORDED_BEFORE_JOIN - 1], joinPosition);
            assertTrue(joiner.position() < firstRecordingStop, "still in the first recording: " + joiner);

            publish(publication, live, RECORDED_FIRST + UNRECORDED_BEFORE_JOIN + UNRECORDED_AFTER_JOIN);
            final long secondRecordingStart = publication.position();
            try (VerbusRecorder second = recorder(verbus, control, "second"))
            {
                TestSupport.await("second recorder image", () -> 1 == second.subscription().imageCount());
                publish(publication, live, MESSAGES);
                final long endPosition = publication.position();
                TestSupport.await("second recording to " + endPosition,
                    () -> second.recordedPosition(publication.sessionId()) == endPosition,
                    () -> live.poll((buffer, offset, length, header) -> {}, 256));
                try (AeronArchive archive = archiveHost.connectArchive())
                {
                    final List<RecordingDescriptor> recordings =
                        StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId());
                    assertEquals(2, recordings.size(), recordings.toString());
                    assertEquals(secondRecordingStart, recordings.get(1).startPosition(), recordings.toString());
                }

                final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while ((!joiner.isMerged() || joiner.position() < endPosition) && null == failure() &&
                    System.nanoTime() < deadlineNs)
                {
                    if (0 == joiner.poll(assembler, 64))
                    {
                        Thread.yield();
                    }
                }
                assertNull(failure());
                assertTrue(joiner.isMerged(), "merged into live: " + joiner);
                assertEquals(endPosition, joiner.position(), joiner.toString());
                assertEquals(RECORDED_FIRST, beforeGap.received, "every message of the first recording");
                assertEquals(UNRECORDED_AFTER_JOIN + RECORDED_SECOND, fromJoin.received, "every message from the join");
                assertEquals(List.of(new RecordingGap(STREAM_ID, publication.sessionId(), firstRecordingStop,
                    joinPosition, "no recording holds these positions")), joiner.gaps());
                assertFalse(publication.isClosed());
                joiner.close();
            }
        }
    }

    private void onMessage(
        final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final long messageSequence = buffer.getLong(offset);
        (messageSequence < RECORDED_FIRST + UNRECORDED_BEFORE_JOIN ? beforeGap : fromJoin)
            .onMessage(buffer, offset, length);
    }

    private String failure()
    {
        return null != beforeGap.failure ? beforeGap.failure : fromJoin.failure;
    }

    /** Publishes up to sequence {@code count}, draining the live subscriber that keeps the ipc stream connected. */
    private void publish(final ExclusivePublication publication, final Subscription live, final int count)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long result = 0;
        while (sequence < count)
        {
            result = publication.offer(message, 0, MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED));
            if (result > 0)
            {
                positionAfter[sequence++] = result;
            }
            else if (System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("message " + sequence + " not taken: " + result);
            }
            live.poll((buffer, offset, length, header) -> {}, 256);
        }
    }

    private VerbusRecorder recorder(final Verbus verbus, final String control, final String name) throws Exception
    {
        return VerbusRecorder.launch(new VerbusRecorder.Context()
            .verbus(verbus).channel("ipc").streamId(STREAM_ID)
            .archive(new ArchiveConnection.Context()
                .launchArchive(false)
                .controlChannel(control)
                .aeronDir(dir.resolve(name + "-recorder-aeron").toString())
                .recordingChannel("aeron:udp?endpoint=localhost:" + RemoteArchiveTest.freeUdpPort())
                .replayChannel("aeron:udp?endpoint=localhost:" + RemoteArchiveTest.freeUdpPort())));
    }
}
