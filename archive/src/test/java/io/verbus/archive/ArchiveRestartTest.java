package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The archive restarts under a running recorder. Outcome: the recording resumes (the same recording, extended from
 * where the restarted archive found it stopped), no gap, no corruption: the whole stream replays byte for byte.
 * While the archive is away the recorder retains up to a term and then back-pressures the stream.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class ArchiveRestartTest
{
    private static final int MESSAGES = 12_000;

    @TempDir
    Path dir;

    @Test
    void shouldResumeTheSameRecordingWithoutGapWhenTheArchiveProcessIsKilledAndRestarted() throws Exception
    {
        final String archiveDir = dir.resolve("archive").toString();
        final String aeronDir = dir.resolve("archive-aeron").toString();
        ChildProcess archiveProcess = ChildProcess.start(ArchiveProcessMain.class, List.of(), archiveDir, aeronDir);
        try
        {
            archiveProcess.awaitLine("READY", 60_000);
            final RecordingEvents events = new RecordingEvents();
            try (Verbus verbus = Verbus.launch(TestSupport.context(dir));
                VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                    .verbus(verbus).channel("ipc").streamId(STREAM_ID)
                    .archive(new ArchiveConnection.Context().launchArchive(false).aeronDir(aeronDir)
                        .driverTimeoutMs(3_000))
                    .reconnectIntervalNs(TimeUnit.MILLISECONDS.toNanos(200))
                    .listener(events)))
            {
                final Subscription live = verbus.addSubscription("ipc", STREAM_ID);
                final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
                TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());
                final FrameCapture capture = new FrameCapture(8 * 1024 * 1024);
                final Publisher publisher = new Publisher(publication, live, capture);

                TestSupport.await("a third published", () -> publisher.sequence() == MESSAGES / 3,
                    () -> publisher.publishUpTo(MESSAGES / 3));
                final long firstThird = publication.position();
                TestSupport.await("recorded a third",
                    () -> recorder.recordedPosition(publication.sessionId()) == firstThird);

                archiveProcess.kill();
                TestSupport.await("archive loss noticed", () -> events.saw("lost"),
                    () -> publisher.publishUpTo(MESSAGES));
                for (int i = 0; i < 2_000; i++)
                {
                    publisher.publishUpTo(MESSAGES);
                }
                // The recorder reads on into its retention (4 terms of 64k), then holds the ipc publication back at
                // its window (half a term) beyond that, give or take the message crossing the limit.
                final long bound = VerbusRecorder.Context.RETENTION_TERMS_DEFAULT * 64 * 1024 + 32 * 1024 +
                    MessageStream.MAX_RARELY_FRAGMENTED_LENGTH + 4 * 32;
                assertTrue(publisher.sequence() < MESSAGES && publication.position() - firstThird <= bound,
                    "with the archive away the recorder retains, then back-pressures the stream: " +
                    (publication.position() - firstThird) + " bytes published meanwhile");

                archiveProcess = ChildProcess.start(ArchiveProcessMain.class, List.of(), archiveDir, aeronDir);
                archiveProcess.awaitLine("READY", 60_000);
                TestSupport.await("all published", () -> publisher.sequence() == MESSAGES,
                    () -> publisher.publishUpTo(MESSAGES));
                final long endPosition = publication.position();
                TestSupport.await("recorded to the end",
                    () -> recorder.recordedPosition(publication.sessionId()) == endPosition,
                    () -> publisher.publishUpTo(MESSAGES));

                System.out.println("archive restart: recorder events " + events);
                assertTrue(events.saw("reconnected"), events.toString());
                assertTrue(events.saw("extended"), "the recording resumed as an extension: " + events);
                assertTrue(recorder.gaps().isEmpty(), recorder.gaps().toString());
                try (AeronArchive archive = recorder.connection().connectArchive())
                {
                    final List<RecordingDescriptor> recordings =
                        StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId());
                    assertEquals(1, recordings.size(), "one recording, extended: " + recordings);
                    assertEquals(0, recordings.get(0).startPosition());
                    final long frames = ReplayVerifier.verify(
                        recorder.connection(), archive, recordings.get(0), 0, endPosition, capture);
                    assertEquals(capture.frames(), frames);
                }
            }
        }
        finally
        {
            archiveProcess.close();
        }
    }

    /** Offers messages without blocking and reads the live subscription into the capture. */
    static final class Publisher
    {
        private final ExclusivePublication publication;
        private final Subscription live;
        private final FrameCapture capture;
        private final ExpandableArrayBuffer message =
            new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
        private long sequence;

        Publisher(final ExclusivePublication publication, final Subscription live, final FrameCapture capture)
        {
            this.publication = publication;
            this.live = live;
            this.capture = capture;
        }

        /** One attempt per call at each of a few messages, and a poll of the live subscription. */
        void publishUpTo(final long count)
        {
            for (int i = 0; i < 16 && sequence < count; i++)
            {
                if (publication.offer(message, 0, MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED)) > 0)
                {
                    sequence++;
                }
            }
            live.poll((buffer, offset, length, header) -> capture.add(header), 256);
        }

        long sequence()
        {
            return sequence;
        }

    }
}
