package io.verbus.archive;

import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.concurrent.ShutdownSignalBarrier;

import java.io.PrintStream;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./verbus record}: records a Verbus stream into an Aeron Archive until interrupted (or for a duration),
 * printing what it records and a status line every few seconds.
 */
public final class RecordMain
{
    private static final String USAGE = """
        usage: verbus record --channel CHANNEL --stream ID [options]
          --channel C            the Verbus channel to record, e.g. rdma:endpoint=10.0.0.1:40123|provider=auto or
                                 aeron:udp?endpoint=... (ipc is in-process: record it with the VerbusRecorder API)
          --stream N             its stream id
          --dir D                this recorder's Verbus dir, for ./verbus stat (default %s-recorder)
          --duration S           stop after S seconds (default: until interrupted)
          --status-interval S    seconds between status lines (default 5; 0 for none)
        %s
          --help                 this text""";

    /** How long a launch waits for a crashed archive's mark file to expire (Aeron's liveness timeout is 10 s). */
    static final long ARCHIVE_MARK_FILE_WAIT_NS = TimeUnit.SECONDS.toNanos(30);

    private RecordMain()
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
                Set.of("--channel", "--stream", "--dir", "--duration", "--status-interval"), Set.of("--help"));
            if (commandLine.has("--help"))
            {
                out.println(usage());
                return 0;
            }
            commandLine.required("--channel");
            commandLine.required("--stream");
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("verbus record: " + ex.getMessage());
            err.println(usage());
            return 2;
        }

        final String channel = commandLine.required("--channel");
        final int streamId = (int)commandLine.longValue("--stream", 0);
        final long durationS = commandLine.longValue("--duration", 0);
        final long statusIntervalS = commandLine.longValue("--status-interval", 5);
        final String dir = commandLine.value("--dir", Verbus.Context.defaultDir() + "-recorder");
        final ShutdownSignalBarrier barrier = 0 == durationS ? new ShutdownSignalBarrier() : null;

        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir).threadingMode(ThreadingMode.SHARED));
            VerbusRecorder recorder = launchRecorder(verbus, channel, streamId, commandLine, out))
        {
            out.println("verbus record: stream " + streamId + " of " + channel + " into " +
                recorder.connection().describe() + "; counters: ./verbus stat --dir " + dir);
            final CountDownLatch stop = new CountDownLatch(1);
            if (null != barrier)
            {
                Thread.ofPlatform().daemon().start(() ->
                {
                    barrier.await();
                    stop.countDown();
                });
            }
            final long endNs = 0 == durationS ?
                Long.MAX_VALUE : System.nanoTime() + TimeUnit.SECONDS.toNanos(durationS);
            final RecorderStatus status = new RecorderStatus(verbus);
            while (System.nanoTime() < endNs)
            {
                final long waitS = statusIntervalS > 0 ? statusIntervalS : 1;
                if (stop.await(Math.min(TimeUnit.SECONDS.toNanos(waitS), endNs - System.nanoTime()),
                    TimeUnit.NANOSECONDS))
                {
                    break;
                }
                if (statusIntervalS > 0)
                {
                    out.println(status.line());
                }
            }
            out.println("verbus record: stopping; " + status.line());
            return 0;
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            return 0;
        }
        catch (final RuntimeException ex)
        {
            err.println("verbus record: " + ex.getMessage());
            return 1;
        }
        finally
        {
            if (null != barrier)
            {
                barrier.close();
            }
        }
    }

    /**
     * Launches the recorder. An archive dir whose previous archive crashed stays marked active for Aeron's liveness
     * timeout (10 s): the launch is retried meanwhile rather than failing a restart right after a crash.
     */
    private static VerbusRecorder launchRecorder(
        final Verbus verbus, final String channel, final int streamId, final CommandLine commandLine,
        final PrintStream out) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + ARCHIVE_MARK_FILE_WAIT_NS;
        while (true)
        {
            final ArchiveConnection.Context archive = commandLine.archiveContext();
            try
            {
                return VerbusRecorder.launch(new VerbusRecorder.Context()
                    .verbus(verbus)
                    .channel(channel)
                    .streamId(streamId)
                    .archive(archive)
                    .listener(new PrintingListener(out)));
            }
            catch (final RuntimeException ex)
            {
                final String message = String.valueOf(ex.getMessage());
                final boolean markFile = message.contains("active mark file");
                // A recorder restarted right after a kill -9 finds its dead driver's heartbeat still fresh, joins it
                // and times out reaching its archive: retried, the driver counts as stopped once the heartbeat is
                // stale, and this recorder launches its own.
                final boolean staleDriver = commandLine.joinsDriverFoundRunning(archive);
                if ((!markFile && !staleDriver) || System.nanoTime() > deadlineNs)
                {
                    throw ex;
                }
                out.println(markFile ?
                    "verbus record: the archive dir is still marked active by an archive that stopped without " +
                    "closing (crashed?); retrying until its mark file expires" :
                    "verbus record: no archive answered at the media driver running in " + archive.aeronDir() +
                    " (" + message + "); retrying: a driver killed moments ago still looks alive for " +
                    ArchiveConnection.DRIVER_ACTIVE_TIMEOUT_MS + " ms");
                Thread.sleep(1_000);
            }
        }
    }

    private static String usage()
    {
        return USAGE.formatted(Verbus.Context.defaultDir(), CommandLine.ARCHIVE_USAGE);
    }

    /** Prints what the recorder tells. */
    private record PrintingListener(PrintStream out) implements RecordingListener
    {
        public void onRecordingStarted(
            final long recordingId, final int streamId, final int sessionId, final long startPosition,
            final boolean extended)
        {
            out.println("verbus record: " + (extended ? "extending" : "started") + " recording " + recordingId +
                " of stream=" + streamId + " session=" + sessionId + " at position " + startPosition);
        }

        public void onGap(final RecordingGap gap)
        {
            out.println("verbus record: GAP " + gap);
        }

        public void onRecordingStopped(final long recordingId, final long stopPosition)
        {
            out.println("verbus record: recording " + recordingId + " stopped at position " + stopPosition);
        }

        public void onArchiveLost(final String reason)
        {
            out.println("verbus record: archive lost (" + reason + "); retaining and reconnecting");
        }

        public void onArchiveReconnected()
        {
            out.println("verbus record: archive reconnected");
        }
    }

    /** One status line from the recorder's counters. */
    private static final class RecorderStatus
    {
        private final Verbus verbus;

        RecorderStatus(final Verbus verbus)
        {
            this.verbus = verbus;
        }

        String line()
        {
            final long[] values = new long[6];
            verbus.countersReader().forEach((counterId, typeId, keyBuffer, label) ->
            {
                final int index = typeId - ArchiveCounters.RECORDING_POSITION_TYPE_ID;
                if (index >= 0 && index < values.length)
                {
                    values[index] = verbus.countersReader().getCounterValue(counterId);
                }
            });
            return String.format(Locale.ROOT,
                "recorded position %d, %.1f MB/s, %d bytes read not yet recorded, %d gaps (%d bytes), " +
                "archive lost %d times", values[0], values[2] / 1e6, values[1], values[3], values[4], values[5]);
        }
    }
}
