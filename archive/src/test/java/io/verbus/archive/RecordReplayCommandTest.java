package io.verbus.archive;

import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code ./verbus record} and {@code ./verbus replay} as a user runs them, against an rdma/shm publisher. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RecordReplayCommandTest
{
    private static final int MESSAGES = 5_000;

    @TempDir
    Path dir;

    @Test
    void shouldRecordWithTheRecordCommandThenListAndReplayWithTheReplayCommand() throws Exception
    {
        try (RdmaTestSupport ignored = new RdmaTestSupport(dir.resolve("fabric"));
            Verbus verbus = Verbus.launch(TestSupport.context(dir)))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", STREAM_ID);
            final String channel = "rdma:endpoint=127.0.0.1:" + StreamPublisherMainPort.of(verbus) + "|provider=shm";
            final Subscription live = verbus.addSubscription(channel, STREAM_ID);
            final String[] archiveArgs = {
                "--archive-dir", dir.resolve("archive").toString(), "--aeron-dir", dir.resolve("aeron").toString() };

            final ByteArrayOutputStream recordOutput = new ByteArrayOutputStream();
            final PrintStream recordOut = new PrintStream(recordOutput, true, StandardCharsets.UTF_8);
            final int[] recordStatus = { -1 };
            final Thread recordThread = Thread.ofPlatform().start(() -> recordStatus[0] = RecordMain.run(concat(
                new String[] { "--channel", channel, "--stream", Integer.toString(STREAM_ID), "--dir",
                    dir.resolve("recorder").toString(), "--duration", "10", "--status-interval", "1" }, archiveArgs),
                recordOut, recordOut));
            TestSupport.await("recording started", () -> output(recordOutput).contains("started recording"));
            TestSupport.await("two subscribers", () -> 1 == live.imageCount() && publication.isConnected());

            final CRC32C liveCrc = new CRC32C();
            final byte[] frame = new byte[ArchiveReplay.MAX_FRAME_LENGTH];
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
            final long[] liveMessages = { 0 };
            long sequence = 0;
            while (liveMessages[0] < MESSAGES)
            {
                if (sequence < MESSAGES &&
                    publication.offer(message, 0, MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED)) > 0)
                {
                    sequence++;
                }
                live.poll((buffer, offset, length, header) ->
                {
                    header.buffer().getBytes(header.offset(), frame, 0, header.frameLength());
                    liveCrc.update(frame, 0, header.frameLength());
                    if (0 != (header.flags() & io.aeron.logbuffer.FrameDescriptor.END_FRAG_FLAG))
                    {
                        liveMessages[0]++;
                    }
                }, 64);
            }
            final long endPosition = publication.position();
            TestSupport.await("recorded to the end", () -> output(recordOutput).contains(
                "recorded position " + endPosition + ","));
            // Beside the running recorder, as the README shows: the replay ends where the live recording has got to
            // (before 2026-12-04 it followed the live recording and never printed its summary).
            final String whileRecording = runWithin(20_000,
                concat(new String[] { "--stream", Integer.toString(STREAM_ID) }, archiveArgs));
            assertTrue(whileRecording.contains(MESSAGES + " messages"), whileRecording);
            assertTrue(output(recordOutput).contains("recorded position"), "the recorder was still running");
            recordThread.join(30_000);
            assertEquals(0, recordStatus[0], output(recordOutput));

            final String list = run(concat(new String[] { "--list" }, archiveArgs));
            assertTrue(list.contains("stream=" + STREAM_ID + " session=" + publication.sessionId() +
                " positions [0, " + endPosition + ")"), list);
            assertTrue(list.contains("channel=" + channel), list);

            final String replay = run(concat(
                new String[] { "--stream", Integer.toString(STREAM_ID), "--print", "2" }, archiveArgs));
            assertTrue(replay.contains(MESSAGES + " messages"), replay);
            assertTrue(replay.contains("positions [0, " + endPosition + ")"), replay);
            assertTrue(replay.contains(String.format(Locale.ROOT, "crc32c %08x", liveCrc.getValue())),
                "the replayed frames' checksum equals the live frames' (" +
                String.format(Locale.ROOT, "%08x", liveCrc.getValue()) + "): " + replay);
            assertTrue(replay.contains("frame position="), replay);

            // A range the recordings cannot serve is an error, not an empty replay that exits 0.
            final String pastEnd = runExpecting(2, concat(new String[] {
                "--stream", Integer.toString(STREAM_ID), "--from", Long.toString(endPosition + 32) }, archiveArgs));
            assertTrue(pastEnd.contains("is past the end of the recordings (" + endPosition + ")"), pastEnd);
            final String backwards = runExpecting(2, concat(new String[] {
                "--stream", Integer.toString(STREAM_ID), "--from", "64", "--to", "64" }, archiveArgs));
            assertTrue(backwards.contains("--to 64 must be past --from 64"), backwards);
        }
    }

    private static String runWithin(final long timeoutMs, final String[] args) throws InterruptedException
    {
        final String[] output = new String[1];
        final Thread replay = Thread.ofPlatform().start(() -> output[0] = run(args));
        replay.join(timeoutMs);
        assertFalse(replay.isAlive(), "the replay did not end within " + timeoutMs + " ms");
        return output[0];
    }

    private static String runExpecting(final int expectedStatus, final String[] args)
    {
        final ByteArrayOutputStream output = new ByteArrayOutputStream();
        final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);
        assertEquals(expectedStatus, ReplayMain.run(args, out, out), output(output));
        return output(output);
    }

    private static String run(final String[] args)
    {
        final ByteArrayOutputStream output = new ByteArrayOutputStream();
        final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);
        final int status = ReplayMain.run(args, out, out);
        assertEquals(0, status, output(output));
        return output(output);
    }

    private static String output(final ByteArrayOutputStream output)
    {
        synchronized (output)
        {
            return output.toString(StandardCharsets.UTF_8);
        }
    }

    private static String[] concat(final String[] first, final String[] second)
    {
        final String[] all = new String[first.length + second.length];
        System.arraycopy(first, 0, all, 0, first.length);
        System.arraycopy(second, 0, all, first.length, second.length);
        return all;
    }
}
