package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.DatagramSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * Recording into an existing archive reached only through its UDP control channel (as on another host): the
 * recorder runs its own media driver, records over UDP, learns the recorded position by asking the archive, and
 * replays over UDP; the replay is byte for byte the live stream.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RemoteArchiveTest
{
    private static final int MESSAGES = 6_000;

    @TempDir
    Path dir;

    @Test
    void shouldRecordIntoAnExistingArchiveGivenByItsControlChannelAndReplayFromIt() throws Exception
    {
        final String control = "aeron:udp?endpoint=localhost:" + freeUdpPort();
        try (ArchiveConnection remoteArchive = ArchiveConnection.connect(ArchiveTestSupport.embeddedArchive(dir)
            .controlChannel(control));
            Verbus verbus = Verbus.launch(TestSupport.context(dir));
            VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                .verbus(verbus).channel("ipc").streamId(STREAM_ID)
                .archive(new ArchiveConnection.Context()
                    .launchArchive(false)
                    .controlChannel(control)
                    .aeronDir(dir.resolve("recorder-aeron").toString())
                    .recordingChannel("aeron:udp?endpoint=localhost:" + freeUdpPort())
                    .replayChannel("aeron:udp?endpoint=localhost:" + freeUdpPort()))))
        {
            assertFalse(recorder.connection().sharesArchiveDriver());
            final Subscription live = verbus.addSubscription("ipc", STREAM_ID);
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
            TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());
            final FrameCapture capture = new FrameCapture(4 * 1024 * 1024);
            final ArchiveRestartTest.Publisher publisher = new ArchiveRestartTest.Publisher(publication, live, capture);
            TestSupport.await("published", () -> publisher.sequence() == MESSAGES,
                () -> publisher.publishUpTo(MESSAGES));
            final long endPosition = publication.position();
            TestSupport.await("recorded to the end", () ->
                recorder.recordedPosition(publication.sessionId()) == endPosition, () -> publisher.publishUpTo(0));

            try (AeronArchive archive = recorder.connection().connectArchive())
            {
                final List<RecordingDescriptor> recordings =
                    StreamRecordings.ofSession(archive, STREAM_ID, publication.sessionId());
                assertEquals(1, recordings.size(), recordings.toString());
                assertEquals("ipc", recordings.get(0).verbusChannel());
                ReplayVerifier.verify(recorder.connection(), archive, recordings.get(0), 0, endPosition, capture);
            }
            try (AeronArchive local = remoteArchive.connectArchive())
            {
                assertEquals(1, StreamRecordings.ofStream(local, STREAM_ID).size(), "the remote archive holds it");
            }
        }
    }

    static int freeUdpPort() throws Exception
    {
        try (DatagramSocket socket = new DatagramSocket(0))
        {
            return socket.getLocalPort();
        }
    }
}
