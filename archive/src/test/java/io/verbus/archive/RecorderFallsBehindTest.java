package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.verbus.ExclusivePublication;
import io.verbus.Image;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A recorder that falls behind the live stream (here: its duty cycle stalls while the publisher and a live
 * subscriber go on). Outcomes, per flow control of the rdma publication:
 * <ul>
 *   <li>{@code fc=min}: the recorder back-pressures the publisher (it gets no further than the window beyond the
 *   recorder); once the recorder runs again everything is recorded, no gap.</li>
 *   <li>{@code fc=max} (here {@code fc=tagged}, which is max for the untagged recorder): the publisher follows the
 *   live subscriber and drops the recorder's connection before overrunning it; the recorder records what it had,
 *   rejoins at the publisher's position, reports the gap and records on in a new recording; both recordings replay
 *   byte for byte as the live stream was.</li>
 * </ul>
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RecorderFallsBehindTest
{
    private static final int MESSAGES = 9_000;
    private static final int TERM_LENGTH = 64 * 1024;

    @TempDir
    Path dir;

    @Test
    void shouldBackPressureTheStreamAndLoseNothingUnderFcMin() throws Exception
    {
        try (RdmaTestSupport rdma = new RdmaTestSupport(dir.resolve("fabric"));
            Verbus verbus = Verbus.launch(TestSupport.context(dir)))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|fc=min", STREAM_ID);
            final String channel = "rdma:endpoint=127.0.0.1:" + StreamPublisherMainPort.of(verbus) + "|provider=shm";
            final Subscription live = verbus.addSubscription(channel, STREAM_ID);
            final FrameCapture capture = new FrameCapture(8 * 1024 * 1024);
            final ArchiveRestartTest.Publisher publisher = new ArchiveRestartTest.Publisher(publication, live, capture);
            final RecordingEvents events = new RecordingEvents();
            try (VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                .verbus(verbus).channel(channel).streamId(STREAM_ID).archive(ArchiveTestSupport.embeddedArchive(dir))
                .ownThread(false).listener(events)))
            {
                TestSupport.await("both subscribers", () -> 1 == live.imageCount() && publication.isConnected() &&
                    1 == recorder.subscription().imageCount(), recorder::doWork);
                TestSupport.await("a third", () -> publisher.sequence() == MESSAGES / 3, () ->
                {
                    publisher.publishUpTo(MESSAGES / 3);
                    recorder.doWork();
                });

                final long recordedAtStall = recorder.recordedPosition(publication.sessionId());
                // The recorder stalls: publish until the publisher has not moved for 300 ms (it is held back).
                publishUntilHeldBack(publication, publisher);
                final long stalledAt = publication.position();
                assertTrue(publisher.sequence() < MESSAGES, "held back before the end of the stream");
                // At most: the recorder's retention (read, not yet recorded), the publication's window (half a term)
                // beyond what the recorder read, and the message that crossed the limit.
                final long bound = VerbusRecorder.Context.RETENTION_TERMS_DEFAULT * TERM_LENGTH + TERM_LENGTH / 2 +
                    MessageStream.MAX_RARELY_FRAGMENTED_LENGTH + 4 * 32;
                assertTrue(stalledAt - recordedAtStall <= bound,
                    "held within the window of the recorder: " + (stalledAt - recordedAtStall) + " bytes ahead");

                TestSupport.await("all published and recorded", () -> publisher.sequence() == MESSAGES &&
                    recorder.recordedPosition(publication.sessionId()) == publication.position(), () ->
                    {
                        publisher.publishUpTo(MESSAGES);
                        recorder.doWork();
                    });
                assertTrue(recorder.gaps().isEmpty(), recorder.gaps().toString());
                try (AeronArchive archive = recorder.connection().connectArchive())
                {
                    final List<RecordingDescriptor> recordings =
                        StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId());
                    assertEquals(1, recordings.size(), recordings.toString());
                    ReplayVerifier.verify(recorder.connection(), archive, recordings.get(0), 0,
                        publication.position(), capture);
                }
            }
        }
    }

    @Test
    void shouldReportTheTailAsAGapWhenTheImageClosesBeforeTheStalledRecorderReadIt() throws Exception
    {
        try (RdmaTestSupport rdma = new RdmaTestSupport(dir.resolve("fabric"));
            Verbus verbus = Verbus.launch(TestSupport.context(dir)))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|fc=min", STREAM_ID);
            final String channel = "rdma:endpoint=127.0.0.1:" + StreamPublisherMainPort.of(verbus) +
                "|provider=shm|heartbeat=50ms|timeout=1s";
            final Subscription live = verbus.addSubscription(channel, STREAM_ID);
            final FrameCapture capture = new FrameCapture(8 * 1024 * 1024);
            final ArchiveRestartTest.Publisher publisher = new ArchiveRestartTest.Publisher(publication, live, capture);
            final RecordingEvents events = new RecordingEvents();
            try (VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                .verbus(verbus).channel(channel).streamId(STREAM_ID).archive(ArchiveTestSupport.embeddedArchive(dir))
                .ownThread(false).listener(events)))
            {
                TestSupport.await("both subscribers", () -> 1 == live.imageCount() && publication.isConnected() &&
                    1 == recorder.subscription().imageCount(), recorder::doWork);
                TestSupport.await("a third", () -> publisher.sequence() == MESSAGES / 3, () ->
                {
                    publisher.publishUpTo(MESSAGES / 3);
                    recorder.doWork();
                });
                // The recorder stalls; the publisher goes on until the recorder holds it back, then closes.
                publishUntilHeldBack(publication, publisher);
                final long endPosition = publication.position();
                publication.close();
                // The recorder's image keeps the stream's end for the channel timeout (1 s), then goes unread.
                TestSupport.await("the recorder's image closed", () -> 0 == recorder.subscription().imageCount());

                TestSupport.await("the recording stopped", () -> events.events.stream()
                    .anyMatch((event) -> event.startsWith("stopped")), recorder::doWork);
                final List<RecordingGap> tail = recorder.gaps().stream()
                    .filter((gap) -> gap.toPosition() == endPosition).toList();
                assertEquals(1, tail.size(), "the unread tail up to " + endPosition + " is a gap: " + recorder.gaps());
                assertTrue(tail.get(0).fromPosition() < endPosition, tail.toString());
                assertTrue(tail.get(0).reason().contains("closed before the recorder read it"), tail.toString());
            }
        }
    }

    @Test
    void shouldReportEachGapAndRecordOnInANewRecordingWhenDroppedUnderFcMax() throws Exception
    {
        try (RdmaTestSupport rdma = new RdmaTestSupport(dir.resolve("fabric"));
            Verbus verbus = Verbus.launch(TestSupport.context(dir)))
        {
            // fc=tagged is fc=max for the untagged recorder, while the tagged live subscriber (the reference the
            // recordings are checked against) sets the pace and is never dropped itself.
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|fc=tagged|gtag=7|heartbeat=50ms|timeout=1s",
                STREAM_ID);
            final String channel = "rdma:endpoint=127.0.0.1:" + StreamPublisherMainPort.of(verbus) +
                "|provider=shm|heartbeat=50ms|timeout=1s";
            final Subscription live = verbus.addSubscription(channel + "|gtag=7", STREAM_ID);
            final FrameCapture capture = new FrameCapture(8 * 1024 * 1024);
            final ArchiveRestartTest.Publisher publisher = new ArchiveRestartTest.Publisher(publication, live, capture);
            final RecordingEvents events = new RecordingEvents();
            try (VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                .verbus(verbus).channel(channel).streamId(STREAM_ID).archive(ArchiveTestSupport.embeddedArchive(dir))
                .ownThread(false).listener(events)))
            {
                TestSupport.await("both subscribers", () -> 1 == live.imageCount() && publication.isConnected() &&
                    1 == recorder.subscription().imageCount(), recorder::doWork);
                TestSupport.await("a third", () -> publisher.sequence() == MESSAGES / 3, () ->
                {
                    publisher.publishUpTo(MESSAGES / 3);
                    recorder.doWork();
                });

                // The recorder stalls; the live subscriber sets the pace and the publisher runs terms ahead. (Under
                // fc=max it may also have been dropped before, whenever it fell a term behind: its current image.)
                TestSupport.await("the recorder subscribed", () -> 1 == recorder.subscription().imageCount(), () ->
                {
                    publisher.publishUpTo(0);
                    recorder.doWork();
                });
                final Image stalledImage = recorder.subscription().images().get(0);
                final int gapsBeforeStall = recorder.gaps().size();
                TestSupport.await("the recorder dropped", stalledImage::isClosed,
                    () -> publisher.publishUpTo(2 * MESSAGES / 3));
                final long droppedAt = publication.position();
                TestSupport.await("recording again", () -> recorder.gaps().size() > gapsBeforeStall, () ->
                {
                    publisher.publishUpTo(0);
                    recorder.doWork();
                });

                TestSupport.await("all published and recorded", () -> publisher.sequence() == MESSAGES &&
                    recorder.recordedPosition(publication.sessionId()) == publication.position(), () ->
                    {
                        publisher.publishUpTo(MESSAGES);
                        recorder.doWork();
                    });
                final long endPosition = publication.position();

                // Dropped at least by the stall (and, under fc=max, whenever else it could not keep pace): every
                // gap is reported once, the catalog shows the same gaps, and recordings and gaps tile the stream.
                final List<RecordingGap> reported = recorder.gaps();
                assertTrue(!reported.isEmpty() && reported.get(reported.size() - 1).toPosition() >= droppedAt,
                    events.toString());
                try (AeronArchive archive = recorder.connection().connectArchive())
                {
                    final List<RecordingDescriptor> recordings =
                        StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId());
                    final List<RecordingGap> catalogGaps = StreamRecordings.gaps(recordings);
                    assertEquals(reported.size(), catalogGaps.size(), reported + " vs " + catalogGaps);
                    assertEquals(reported.size() + 1, recordings.size(), recordings.toString());
                    long covered = 0;
                    for (int i = 0; i < recordings.size(); i++)
                    {
                        final RecordingDescriptor recording = recordings.get(i);
                        assertEquals(covered, recording.startPosition(), "recording " + i + " starts where the " +
                            "previous gap ends");
                        final long stop = recording.isActive() ? endPosition : recording.stopPosition();
                        ReplayVerifier.verify(recorder.connection(), archive, recording, recording.startPosition(),
                            stop, capture);
                        covered = stop;
                        if (i < reported.size())
                        {
                            assertEquals(covered, reported.get(i).fromPosition());
                            assertEquals(catalogGaps.get(i).fromPosition(), reported.get(i).fromPosition());
                            assertEquals(catalogGaps.get(i).toPosition(), reported.get(i).toPosition());
                            covered = reported.get(i).toPosition();
                        }
                    }
                    assertEquals(endPosition, covered);
                }
                System.out.println("recorder dropped under fc=max: " + events);
            }
        }
    }

    /** Publishes until the publication has not moved for 300 ms: the stalled recorder holds it back (fc=min). */
    private static void publishUntilHeldBack(
        final ExclusivePublication publication, final ArchiveRestartTest.Publisher publisher)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long lastPosition = publication.position();
        long lastMoveNs = System.nanoTime();
        while (System.nanoTime() - lastMoveNs < TimeUnit.MILLISECONDS.toNanos(300))
        {
            assertTrue(System.nanoTime() < deadlineNs, "the publisher was never held back by the recorder");
            publisher.publishUpTo(MESSAGES);
            if (publication.position() != lastPosition)
            {
                lastPosition = publication.position();
                lastMoveNs = System.nanoTime();
            }
            Thread.yield();
        }
    }
}
