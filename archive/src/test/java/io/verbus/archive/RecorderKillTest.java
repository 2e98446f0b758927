package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code ./verbus record} (its main, in its own JVM, with its embedded archive) is killed with SIGKILL mid-stream
 * while the rdma publisher goes on; a new recorder is started at once on the same archive and Aeron dirs. Outcome:
 * the gap is reported (by the new recorder and by the catalog, with the same positions), recording resumes in a new
 * recording from where the new recorder joined, and both recordings are intact: each replays byte for byte as the
 * live stream was in its range, the killed one up to the position the archive recovered (at least what it had
 * reported recorded).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RecorderKillTest
{
    private static final int MESSAGES = 15_000;

    @TempDir
    Path dir;

    @Test
    void shouldReportTheGapAndResumeInANewRecordingWhenTheRecorderIsKilledMidStream() throws Exception
    {
        final String archiveDir = dir.resolve("archive").toString();
        try (RdmaTestSupport rdma = new RdmaTestSupport(dir.resolve("fabric"));
            Verbus verbus = Verbus.launch(TestSupport.context(dir)))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|heartbeat=50ms|timeout=1s", STREAM_ID);
            final String channel = "rdma:endpoint=127.0.0.1:" + StreamPublisherMainPort.of(verbus) +
                "|provider=shm|heartbeat=50ms|timeout=1s";
            final Subscription live = verbus.addSubscription(channel, STREAM_ID);
            final FrameCapture capture = new FrameCapture(8 * 1024 * 1024);
            final ArchiveRestartTest.Publisher publisher = new ArchiveRestartTest.Publisher(publication, live, capture);

            long lastReportedRecorded;
            try (ChildProcess firstRecorder = startRecorder(rdma, channel, archiveDir, "1"))
            {
                firstRecorder.awaitLine("verbus record: started recording", 60_000);
                TestSupport.await("a third published", () -> publisher.sequence() == MESSAGES / 3,
                    () -> publisher.publishUpTo(MESSAGES / 3));
                final long firstThird = publication.position();
                lastReportedRecorded = awaitRecorded(firstRecorder, firstThird);
                firstRecorder.kill();
            }

            TestSupport.await("two thirds published", () -> publisher.sequence() == 2 * MESSAGES / 3,
                () -> publisher.publishUpTo(2 * MESSAGES / 3));
            final long rejoinedNoEarlierThan = publication.position();

            final long endPosition;
            final List<String> secondTranscript;
            try (ChildProcess secondRecorder = startRecorder(rdma, channel, archiveDir, "2"))
            {
                final String gapLine = secondRecorder.awaitLine("verbus record: GAP", 60_000);
                secondRecorder.awaitLine("verbus record: started recording", 60_000);
                TestSupport.await("all published", () -> publisher.sequence() == MESSAGES,
                    () -> publisher.publishUpTo(MESSAGES));
                endPosition = publication.position();
                awaitRecorded(secondRecorder, endPosition);
                assertTrue(secondRecorder.terminate(30_000), "the recorder stops on SIGTERM");
                secondTranscript = new ArrayList<>(secondRecorder.transcript());
                secondTranscript.add(gapLine);
            }

            try (ArchiveConnection connection = ArchiveConnection.connect(new ArchiveConnection.Context()
                .archiveDir(archiveDir).aeronDir(dir.resolve("verify-aeron").toString()));
                AeronArchive archive = connection.connectArchive())
            {
                final List<RecordingDescriptor> recordings =
                    StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId());
                assertEquals(2, recordings.size(), recordings.toString());
                final RecordingDescriptor killed = recordings.get(0);
                final RecordingDescriptor resumed = recordings.get(1);
                assertEquals(0, killed.startPosition());
                assertTrue(killed.stopPosition() >= lastReportedRecorded,
                    "the archive recovered at least what was reported recorded: " + killed.describe());
                assertTrue(resumed.startPosition() >= rejoinedNoEarlierThan, resumed.describe());
                assertEquals(endPosition, resumed.stopPosition());

                final List<RecordingGap> gaps = StreamRecordings.gaps(recordings);
                assertEquals(1, gaps.size(), gaps.toString());
                assertEquals(killed.stopPosition(), gaps.get(0).fromPosition());
                assertEquals(resumed.startPosition(), gaps.get(0).toPosition());
                final String reported = "positions [" + killed.stopPosition() + ", " + resumed.startPosition() + ")";
                assertTrue(secondTranscript.stream().anyMatch((line) -> line.contains(reported)),
                    "the new recorder reported " + reported + ": " + secondTranscript);

                ReplayVerifier.verify(connection, archive, killed, 0, killed.stopPosition(), capture);
                ReplayVerifier.verify(connection, archive, resumed, resumed.startPosition(), endPosition, capture);
                System.out.println("recorder kill -9: recording " + killed.recordingId() + " recovered to " +
                    killed.stopPosition() + " (reported recorded " + lastReportedRecorded + "), gap " + gaps.get(0) +
                    ", recording " + resumed.recordingId() + " from " + resumed.startPosition() + " to " + endPosition);
            }
        }
    }

    private ChildProcess startRecorder(
        final RdmaTestSupport rdma, final String channel, final String archiveDir, final String incarnation)
        throws Exception
    {
        return ChildProcess.start(RecordMain.class, rdma.childProperties(),
            "--channel", channel, "--stream", Integer.toString(STREAM_ID),
            "--dir", dir.resolve("recorder-" + incarnation).toString(),
            // One Aeron dir for both, as a supervisor restarting the command has: the second starts within the
            // killed driver's activity timeout (5 s), so it first finds that driver looking alive (before 2026-12-04
            // it joined it, timed out reaching its archive and exited 1).
            "--archive-dir", archiveDir, "--aeron-dir", dir.resolve("recorder-aeron").toString(),
            "--status-interval", "1");
    }

    /** Waits until the recorder's status line says it recorded at least up to a position; returns what it said. */
    private static long awaitRecorded(final ChildProcess recorder, final long position) throws Exception
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadlineNs)
        {
            final String line = recorder.awaitLine("recorded position ", 10_000);
            final long recorded = Long.parseLong(line.substring("recorded position ".length(), line.indexOf(',')));
            if (recorded >= position)
            {
                return recorded;
            }
        }
        throw new AssertionError("the recorder did not report recording up to " + position);
    }
}
