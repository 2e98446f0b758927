package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.ExclusivePublication;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.DirectBuffer;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.zip.CRC32C;

/**
 * {@code ./verbus replay}: lists recordings, or replays a position range of a recorded stream to stdout (a summary,
 * optionally every frame) or into a Verbus channel.
 */
public final class ReplayMain
{
    private static final String USAGE = """
        usage: verbus replay --list | --recording ID | --stream N [--session S] [options]
          --list                 list the recordings in the archive, with the gaps of each session
          --recording ID         replay this recording
          --stream N             replay this stream: the session of its newest recording unless --session
          --session S            the publisher session to replay, across its recordings (gaps are reported)
          --from P               first position (a frame boundary; default: the start of the first recording)
          --to P                 position to stop at (default: the end of the last recording; of a live one, where
                                 it has got to when the replay starts)
          --print N              print the first N frames (position, length, flags, session, first bytes)
          --to-channel C         republish every frame into this Verbus channel (a new publication: positions equal
                                 the recorded ones when the replay starts at 0 or C is aeron: with init-term-id,
                                 term-id, term-offset; an rdma: channel waits for a subscriber)
          --to-stream N          stream id of --to-channel (default: the recorded stream's)
          --dir D                this replayer's Verbus dir, for --to-channel (default %s-replayer)
        %s
          --help                 this text
        Prints a summary: frames, bytes, positions, a CRC32C of every frame replayed, and the replay rate.""";

    private ReplayMain()
    {
    }

    /**
     * @param args see {@code --help}.
     */
    public static void main(final String[] args)
    {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * @return exit status: 0 done, 1 failed, 2 bad arguments.
     */
    static int run(final String[] args, final PrintStream out, final PrintStream err)
    {
        final CommandLine commandLine;
        try
        {
            commandLine = CommandLine.parse(args,
                Set.of("--recording", "--stream", "--session", "--from", "--to", "--print", "--to-channel",
                    "--to-stream", "--dir"),
                Set.of("--list", "--help"));
            if (commandLine.has("--help"))
            {
                out.println(usage());
                return 0;
            }
            if (!commandLine.has("--list") && !commandLine.has("--recording") && !commandLine.has("--stream"))
            {
                throw new IllegalArgumentException("one of --list, --recording or --stream is required");
            }
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("verbus replay: " + ex.getMessage());
            err.println(usage());
            return 2;
        }

        try (ArchiveConnection connection = ArchiveConnection.connect(commandLine.archiveContext());
            AeronArchive archive = connection.connectArchive())
        {
            out.println("verbus replay: " + connection.describe());
            if (commandLine.has("--list"))
            {
                list(archive, out);
                return 0;
            }
            final List<RecordingDescriptor> recordings = select(archive, commandLine);
            if (recordings.isEmpty())
            {
                err.println("verbus replay: no such recording in the archive (try --list)");
                return 1;
            }
            return replay(connection, archive, recordings, commandLine, out, err);
        }
        catch (final RuntimeException ex)
        {
            err.println("verbus replay: " + ex.getMessage());
            return 1;
        }
    }

    private static void list(final AeronArchive archive, final PrintStream out)
    {
        final List<RecordingDescriptor> all = StreamRecordings.all(archive);
        if (all.isEmpty())
        {
            out.println("no recordings");
            return;
        }
        for (final RecordingDescriptor recording : all)
        {
            out.println(recording.describe());
        }
        final List<String> sessions = new ArrayList<>();
        for (final RecordingDescriptor recording : all)
        {
            final String key = recording.streamId() + "/" + recording.sessionId();
            if (recording.isVerbusRecording() && !sessions.contains(key))
            {
                sessions.add(key);
                for (final RecordingGap gap : StreamRecordings.gaps(
                    StreamRecordings.ofSession(archive, recording.streamId(), recording.sessionId())))
                {
                    out.println(gap);
                }
            }
        }
    }

    private static List<RecordingDescriptor> select(final AeronArchive archive, final CommandLine commandLine)
    {
        if (commandLine.has("--recording"))
        {
            final RecordingDescriptor recording =
                StreamRecordings.byId(archive, commandLine.longValue("--recording", -1));
            return null == recording ? List.of() : List.of(recording);
        }
        final int streamId = (int)commandLine.longValue("--stream", 0);
        final int sessionId;
        if (commandLine.has("--session"))
        {
            sessionId = (int)commandLine.longValue("--session", 0);
        }
        else
        {
            final RecordingDescriptor latest = StreamRecordings.latest(archive, streamId);
            if (null == latest)
            {
                return List.of();
            }
            sessionId = latest.sessionId();
        }
        return StreamRecordings.ofSession(archive, streamId, sessionId);
    }

    private static int replay(
        final ArchiveConnection connection,
        final AeronArchive archive,
        final List<RecordingDescriptor> recordings,
        final CommandLine commandLine,
        final PrintStream out,
        final PrintStream err)
    {
        final RecordingDescriptor first = recordings.get(0);
        final RecordingDescriptor last = recordings.get(recordings.size() - 1);
        final long from = commandLine.longValue("--from", -1);
        // The end of the last recording: where a live one has got to now, so a replay next to a running recorder
        // ends (following it live would never print the summary).
        final long livePosition = last.isActive() ? archive.getRecordingPosition(last.recordingId()) : -1;
        final long lastEnd = last.isActive() ? Math.max(livePosition, last.startPosition()) : last.stopPosition();
        final boolean toGiven = null != commandLine.value("--to", null);
        final long to = commandLine.longValue("--to", lastEnd);
        if (from > lastEnd)
        {
            err.println("verbus replay: --from " + from + " is past the end of the recordings (" + lastEnd +
                (last.isActive() ? ", the live recording's position now)" : ")"));
            return 2;
        }
        if (from >= 0 && to <= from && toGiven)
        {
            err.println("verbus replay: --to " + to + " must be past --from " + from);
            return 2;
        }
        final FrameSummary summary = new FrameSummary(out, (int)commandLine.longValue("--print", 0));
        final List<RecordingGap> gaps = new ArrayList<>();
        out.println("verbus replay: stream=" + first.streamId() + " session=" + first.sessionId() + " from " +
            (from < 0 ? "the start" : Long.toString(from)) + " to " +
            (toGiven ? Long.toString(to) : "the end (" + to + ")") + " over " + recordings.size() + " recording(s)");

        try (SessionReplay replay = new SessionReplay(connection, archive, recordings, from, to, (gap) ->
        {
            gaps.add(gap);
            out.println("verbus replay: GAP " + gap);
        }))
        {
            final String toChannel = commandLine.value("--to-channel", null);
            final long startNs = System.nanoTime();
            if (null == toChannel)
            {
                while (!replay.isDone())
                {
                    if (0 == replay.poll(summary, 256))
                    {
                        Thread.yield();
                    }
                }
            }
            else
            {
                final int streamId = (int)commandLine.longValue("--to-stream", first.streamId());
                final String dir = commandLine.value("--dir", Verbus.Context.defaultDir() + "-replayer");
                try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir).threadingMode(ThreadingMode.SHARED)
                    .termLength(first.termBufferLength()));
                    ExclusivePublication publication = verbus.addExclusivePublication(toChannel, streamId))
                {
                    out.println("verbus replay: republishing into " + toChannel + " stream " + streamId +
                        "; waiting for a subscriber");
                    while (!publication.isConnected())
                    {
                        Thread.sleep(10);
                    }
                    final ReplayPublisher publisher = new ReplayPublisher(publication);
                    final ControlledFragmentHandler handler = (buffer, offset, length, header) ->
                    {
                        final ControlledFragmentHandler.Action action =
                            publisher.onFragment(buffer, offset, length, header);
                        if (ControlledFragmentHandler.Action.CONTINUE == action)
                        {
                            summary.onFragment(buffer, offset, length, header);
                        }
                        return action;
                    };
                    while (!replay.isDone())
                    {
                        if (0 == replay.controlledPoll(handler, 256))
                        {
                            publication.flush();
                            Thread.yield();
                        }
                    }
                    publication.flush();
                    out.println("verbus replay: republished " + publisher.framesPublished() + " frames, target at " +
                        "position " + publication.position());
                }
            }
            summary.print(System.nanoTime() - startNs, gaps.size());
            final long expectedEnd = Math.min(to, lastEnd);
            if (replay.position() < expectedEnd)
            {
                err.println("verbus replay: the replay ended at position " + replay.position() + ", short of " +
                    expectedEnd + ": its image closed early (the archive stopped or went away?)");
                return 1;
            }
            return 0;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            err.println("verbus replay: interrupted");
            return 1;
        }
    }

    private static String usage()
    {
        return USAGE.formatted(Verbus.Context.defaultDir(), CommandLine.ARCHIVE_USAGE);
    }

    /** Counts, checksums and optionally prints the replayed frames. */
    private static final class FrameSummary implements FragmentHandler
    {
        private final PrintStream out;
        private final int printLimit;
        private final CRC32C crc = new CRC32C();
        private final byte[] frameBytes = new byte[ArchiveReplay.MAX_FRAME_LENGTH];
        private long frames;
        private long messages;
        private long bytes;
        private long firstPosition = -1;
        private long lastPosition = -1;

        FrameSummary(final PrintStream out, final int printLimit)
        {
            this.out = out;
            this.printLimit = printLimit;
        }

        public void onFragment(
            final DirectBuffer buffer, final int offset, final int length, final io.aeron.logbuffer.Header header)
        {
            final int frameLength = header.frameLength();
            header.buffer().getBytes(header.offset(), frameBytes, 0, frameLength);
            crc.update(frameBytes, 0, frameLength);
            if (firstPosition < 0)
            {
                firstPosition = header.position() -
                    org.agrona.BitUtil.align(frameLength, io.aeron.logbuffer.FrameDescriptor.FRAME_ALIGNMENT);
            }
            lastPosition = header.position();
            frames++;
            bytes += frameLength;
            if (0 != (header.flags() & io.aeron.logbuffer.FrameDescriptor.END_FRAG_FLAG))
            {
                messages++;
            }
            if (frames <= printLimit)
            {
                final StringBuilder hex = new StringBuilder();
                for (int i = 0; i < Math.min(16, length); i++)
                {
                    hex.append(String.format(Locale.ROOT, "%02x", buffer.getByte(offset + i)));
                }
                out.println(String.format(Locale.ROOT,
                    "frame position=%d length=%d flags=0x%02x session=%d stream=%d term-id=%d term-offset=%d %s",
                    header.position(), frameLength, header.flags(), header.sessionId(), header.streamId(),
                    header.termId(), header.termOffset(), hex));
            }
        }

        void print(final long elapsedNs, final int gaps)
        {
            final double seconds = Math.max(elapsedNs, 1) / 1e9;
            out.println(String.format(Locale.ROOT,
                "verbus replay: %d frames, %d messages, %d bytes, positions [%d, %d), crc32c %08x, %d gap(s); " +
                "%.0f msgs/s, %.1f MB/s in %.0f ms", frames, messages, bytes, Math.max(firstPosition, 0),
                Math.max(lastPosition, 0), crc.getValue(), gaps, messages / seconds, bytes / seconds / 1e6,
                TimeUnit.NANOSECONDS.toMillis(elapsedNs) * 1.0));
        }
    }
}
