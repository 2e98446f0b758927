package io.verbus.archive;

import io.aeron.FragmentAssembler;
import io.aeron.archive.client.AeronArchive;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The done-when test: an {@code rdma:} stream over shm published by another process is recorded, replayed,
 * and every replayed frame is compared byte for byte, with its position, to the frame a live subscriber received
 * (and every message's sequence and checksum checked). CI size by default; the full million with
 * {@code -Dverbus.archive.test.messages=1000000}. Prints the live, recording and replay rates (never asserted).
 */
@Timeout(value = 900, unit = TimeUnit.SECONDS)
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RecordRdmaCrossProcessTest
{
    /** Property giving the number of messages. */
    static final String MESSAGES_PROP_NAME = "verbus.archive.test.messages";
    static final long MESSAGES = Long.getLong(MESSAGES_PROP_NAME, 100_000);

    @TempDir
    Path dir;

    @Test
    void shouldRecordAnRdmaStreamFromAnotherProcessAndReplayEveryFrameAndPositionAsReceivedLive() throws Exception
    {
        try (RdmaTestSupport rdma = new RdmaTestSupport(dir.resolve("fabric"));
            ChildProcess publisher = ChildProcess.start(StreamPublisherMain.class, rdma.childProperties(),
                dir.resolve("publisher").toString(), "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=256k",
                Integer.toString(STREAM_ID), Long.toString(MESSAGES), "0"))
        {
            final String[] hello = publisher.awaitLine("PORT", 60_000).split(" ");
            final String channel = "rdma:endpoint=127.0.0.1:" + hello[1] + "|provider=shm";
            final int sessionId = Integer.parseInt(hello[3]);

            try (Verbus verbus = Verbus.launch(TestSupport.context(dir).idleStrategy("backoff"));
                VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                    .verbus(verbus).channel(channel).streamId(STREAM_ID)
                    .archive(ArchiveTestSupport.embeddedArchive(dir))))
            {
                final Subscription live = verbus.addSubscription(channel, STREAM_ID);
                TestSupport.await("live and recorder connected",
                    () -> 1 == live.imageCount() && 1 == recorder.subscription().imageCount());

                final FrameCapture capture = new FrameCapture(64 * 1024 * 1024);
                final MessageStream.Checker liveChecker = new MessageStream.Checker(0, RARELY_FRAGMENTED);
                final FragmentAssembler liveAssembler = new FragmentAssembler((buffer, offset, length, header) ->
                    liveChecker.onMessage(buffer, offset, length));
                publisher.send("GO");
                final long startNs = System.nanoTime();
                final long deadlineNs = startNs + TimeUnit.SECONDS.toNanos(600);
                while (liveChecker.received < MESSAGES && null == liveChecker.failure && System.nanoTime() < deadlineNs)
                {
                    if (0 == live.poll((buffer, offset, length, header) ->
                    {
                        capture.add(header);
                        liveAssembler.onFragment(buffer, offset, length, header);
                    }, 256))
                    {
                        Thread.yield();
                    }
                }
                final long liveNs = System.nanoTime() - startNs;
                assertNull(liveChecker.failure);
                assertEquals(MESSAGES, liveChecker.received);
                final String[] published = publisher.awaitLine("PUBLISHED", 60_000).split(" ");
                final long endPosition = Long.parseLong(published[3]);
                assertEquals(endPosition, capture.lastPosition(), "live subscriber ends at the publisher's position");

                TestSupport.await("recorded to " + endPosition,
                    () -> recorder.recordedPosition(sessionId) == endPosition);
                final long recordedNs = System.nanoTime() - startNs;

                try (AeronArchive archive = recorder.connection().connectArchive())
                {
                    final List<RecordingDescriptor> recordings =
                        StreamRecordings.ofSession(archive, STREAM_ID, sessionId);
                    assertEquals(1, recordings.size(), recordings.toString());
                    final RecordingDescriptor recording = recordings.get(0);
                    assertEquals(0, recording.startPosition(), "the recorder joined before the first message");
                    assertEquals(channel, recording.verbusChannel());

                    final FrameCapture.Cursor cursor = capture.cursor();
                    final MessageStream.Checker replayChecker = new MessageStream.Checker(0, RARELY_FRAGMENTED);
                    final FragmentAssembler replayAssembler = new FragmentAssembler((buffer, offset, length, header) ->
                        replayChecker.onMessage(buffer, offset, length));
                    final String[] mismatch = new String[1];
                    final long replayStartNs = System.nanoTime();
                    try (ArchiveReplay replay = ArchiveReplay.start(recorder.connection(), archive, recording, 0,
                        endPosition))
                    {
                        while (replay.position() < endPosition && System.nanoTime() < deadlineNs)
                        {
                            if (0 == replay.poll((buffer, offset, length, header) ->
                            {
                                final String difference = cursor.matchNext(header);
                                if (null == mismatch[0])
                                {
                                    mismatch[0] = difference;
                                }
                                replayAssembler.onFragment(buffer, offset, length, header);
                            }, 256))
                            {
                                Thread.yield();
                            }
                        }
                    }
                    final long replayNs = System.nanoTime() - replayStartNs;
                    assertNull(mismatch[0]);
                    assertTrue(cursor.isAtEnd(), "replayed " + cursor.index() + " of " + capture.frames() + " frames");
                    assertNull(replayChecker.failure);
                    assertEquals(MESSAGES, replayChecker.received);

                    System.out.println(String.format(Locale.ROOT,
                        "archive cross-process: %d messages, %d frames, %.1f MB over rdma/shm; live %.0f msgs/s " +
                        "(%.1f MB/s); recorded to the end %.0f msgs/s (%.1f MB/s, %.0f ms after the live end); " +
                        "replay %.0f msgs/s (%.1f MB/s); every frame byte-identical at the same position",
                        MESSAGES, capture.frames(), endPosition / 1e6,
                        MESSAGES * 1e9 / liveNs, endPosition * 1e3 / liveNs,
                        MESSAGES * 1e9 / recordedNs, endPosition * 1e3 / recordedNs, (recordedNs - liveNs) / 1e6,
                        MESSAGES * 1e9 / replayNs, endPosition * 1e3 / replayNs));
                }
            }
            publisher.send("DONE");
            assertTrue(publisher.waitFor(30_000));
        }
    }
}
