package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.aeron.archive.client.AeronArchiveVersion;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * {@code ./verbus archive-bench}: the recording throughput against the live stream's rate, and the replay rate.
 * A publisher and a subscriber in two Verbus instances of this process (over {@code rdma:} on shm, like two processes
 * on one host, or {@code ipc}) run three times, after an unmeasured warm-up run:
 * <ol>
 *   <li>live only: the publisher and one live subscriber;</li>
 *   <li>live while recording: the same with a recorder (own thread, embedded archive) subscribed too, which under
 *   the default {@code fc=min} also paces the publisher, so the live rate shows what recording costs;</li>
 *   <li>replay: the recording of run 2 replayed to a handler that counts.</li>
 * </ol>
 * Nothing is asserted: it prints one line per run. Numbers from a shared 2-core machine are noisy.
 */
public final class ArchiveBench
{
    private static final String USAGE = """
        usage: verbus archive-bench [--messages N] [--size BYTES] [--transport rdma|ipc] [--dir D]
          --messages N     messages per run (default 1000000)
          --size BYTES     message length (default 256)
          --transport T    rdma (shm provider, the default) or ipc
          --dir D          where the Verbus dirs and the archive go (default: a new temp dir, deleted after)""";

    private static final int STREAM_ID_BASE = 7301;

    private ArchiveBench()
    {
    }

    /**
     * @param args see the usage.
     */
    public static void main(final String[] args) throws Exception
    {
        System.exit(run(args, System.out, System.err));
    }

    static int run(final String[] args, final PrintStream out, final PrintStream err) throws Exception
    {
        final CommandLine commandLine;
        try
        {
            commandLine = CommandLine.parse(args, Set.of("--messages", "--size", "--transport", "--dir"),
                Set.of("--help"));
            if (commandLine.has("--help"))
            {
                out.println(USAGE);
                return 0;
            }
        }
        catch (final IllegalArgumentException ex)
        {
            err.println("verbus archive-bench: " + ex.getMessage());
            err.println(USAGE);
            return 2;
        }
        final long messages = commandLine.longValue("--messages", 1_000_000);
        final int size = (int)commandLine.longValue("--size", 256);
        final String transport = commandLine.value("--transport", "rdma");
        if (!List.of("rdma", "ipc").contains(transport) || size < 16 || messages < 1)
        {
            err.println("verbus archive-bench: --transport rdma|ipc, --size >= 16, --messages >= 1");
            return 2;
        }
        final boolean ownDir = !commandLine.has("--dir");
        final Path dir = ownDir ? Files.createTempDirectory("verbus-archive-bench") : Path.of(commandLine.value(
            "--dir", "."));
        try
        {
            bench(dir, messages, size, transport, out);
            return 0;
        }
        finally
        {
            if (ownDir)
            {
                IoUtil.delete(dir.toFile(), true);
            }
        }
    }

    private static void bench(
        final Path dir, final long messages, final int size, final String transport, final PrintStream out)
        throws Exception
    {
        final boolean rdma = "rdma".equals(transport);
        out.println(String.format(Locale.ROOT,
            "archive bench: %s, %d-byte messages, %d per run, Aeron Archive %s; %d CPUs, load average %.1f",
            rdma ? "rdma:provider=shm (two Verbus instances)" : "ipc", size, messages, AeronArchiveVersion.VERSION,
            Runtime.getRuntime().availableProcessors(),
            ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage()));
        try (Verbus publisherVerbus = launch(dir.resolve("publisher"));
            Verbus subscriberVerbus = rdma ? launch(dir.resolve("subscriber")) : publisherVerbus)
        {
            // An unrecorded JIT warm-up, so that the first measured run does not pay for compilation.
            runOnce(publisherVerbus, subscriberVerbus, rdma, STREAM_ID_BASE + 2, Math.max(1, messages / 2), size,
                null, out);
            final Run liveOnly = runOnce(publisherVerbus, subscriberVerbus, rdma, STREAM_ID_BASE, messages, size,
                null, out);
            out.println(liveOnly.line("live only            "));

            final ArchiveConnection.Context archive = new ArchiveConnection.Context()
                .archiveDir(dir.resolve("archive").toString())
                .aeronDir(dir.resolve("archive-aeron").toString())
                .deleteArchiveOnStart(true);
            final Run recorded = runOnce(publisherVerbus, subscriberVerbus, rdma, STREAM_ID_BASE + 1, messages, size,
                archive, out);
            out.println(recorded.line("live while recording ") + String.format(Locale.ROOT,
                " = %.0f%% of live only", 100.0 * liveOnly.liveNs() / recorded.liveNs()));
            out.println(String.format(Locale.ROOT,
                "  recording throughput: %,.0f msgs/s %.1f MB/s (recorded to the end %.1f ms after the live end)",
                messages * 1e9 / recorded.recordedNs(), recorded.bytes() * 1e3 / recorded.recordedNs(),
                (recorded.recordedNs() - recorded.liveNs()) / 1e6));
            out.println(String.format(Locale.ROOT, "  replay              : %,.0f msgs/s %.1f MB/s",
                messages * 1e9 / recorded.replayNs(), recorded.bytes() * 1e3 / recorded.replayNs()));
        }
    }

    private static Verbus launch(final Path dir)
    {
        return Verbus.launch(new Verbus.Context().dir(dir.toString()).threadingMode(ThreadingMode.SHARED)
            .idleStrategy("backoff"));
    }

    /** One run's timings: the live stream, the recording (to the end) and its replay. */
    private record Run(long messages, long bytes, long liveNs, long recordedNs, long replayNs)
    {
        String line(final String name)
        {
            return String.format(Locale.ROOT, "  %s: %,.0f msgs/s %.1f MB/s", name, messages * 1e9 / liveNs,
                bytes * 1e3 / liveNs);
        }
    }

    private static Run runOnce(
        final Verbus publisherVerbus,
        final Verbus subscriberVerbus,
        final boolean rdma,
        final int streamId,
        final long messages,
        final int size,
        final ArchiveConnection.Context archive,
        final PrintStream out) throws Exception
    {
        final Publication publication = publisherVerbus.addPublication(
            rdma ? "rdma:endpoint=127.0.0.1:0|provider=shm" : "ipc", streamId);
        final String channel = rdma ? "rdma:endpoint=127.0.0.1:" + controlPort(publisherVerbus) + "|provider=shm" :
            "ipc";
        final Subscription live = subscriberVerbus.addSubscription(channel, streamId);
        final VerbusRecorder recorder = null == archive ? null : VerbusRecorder.launch(new VerbusRecorder.Context()
            .verbus(subscriberVerbus).channel(channel).streamId(streamId).archive(archive));
        try
        {
            final int subscribers = null == recorder ? 1 : 2;
            awaitTrue(() -> live.imageCount() == 1 &&
                (null == recorder || recorder.subscription().imageCount() == 1) && publication.isConnected());
            if (rdma && subscribers == 2)
            {
                Thread.sleep(100);    // both connections admitted before the first message
            }

            final long[] received = { 0 };
            final long startNs = System.nanoTime();
            final Thread publisher = Thread.ofPlatform().name("bench-publisher").start(() ->
            {
                final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(size));
                for (long sequence = 0; sequence < messages; )
                {
                    message.putLong(0, sequence);
                    if (publication.offer(message, 0, size) > 0)
                    {
                        sequence++;
                    }
                    else
                    {
                        Thread.yield();
                    }
                }
            });
            while (received[0] < messages)
            {
                if (0 == live.poll((buffer, offset, length, header) -> received[0]++, 256))
                {
                    Thread.yield();
                }
            }
            final long liveNs = System.nanoTime() - startNs;
            publisher.join();
            final long endPosition = publication.position();
            if (null == recorder)
            {
                return new Run(messages, endPosition, liveNs, 0, 0);
            }

            awaitTrue(() -> recorder.recordedPosition(publication.sessionId()) == endPosition);
            final long recordedNs = System.nanoTime() - startNs;
            final long replayNs;
            try (AeronArchive archiveClient = recorder.connection().connectArchive())
            {
                final RecordingDescriptor recording =
                    StreamRecordings.ofSession(archiveClient, streamId, publication.sessionId()).get(0);
                final long replayStartNs = System.nanoTime();
                try (ArchiveReplay replay = ArchiveReplay.start(
                    recorder.connection(), archiveClient, recording, recording.startPosition(), endPosition))
                {
                    while (replay.position() < endPosition)
                    {
                        if (0 == replay.poll((buffer, offset, length, header) -> { }, 1024))
                        {
                            Thread.yield();
                        }
                    }
                }
                replayNs = System.nanoTime() - replayStartNs;
            }
            return new Run(messages, endPosition, liveNs, recordedNs, replayNs);
        }
        finally
        {
            if (null != recorder)
            {
                recorder.close();
            }
            live.close();
            publication.close();
        }
    }

    private static int controlPort(final Verbus verbus)
    {
        // The rdma media shows the port a publication on port 0 listens on as a counter labelled so.
        final int[] port = { -1 };
        verbus.countersReader().forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (label.startsWith("rdma control port"))
            {
                port[0] = (int)verbus.countersReader().getCounterValue(counterId);
            }
        });
        return port[0];
    }

    private static void awaitTrue(final java.util.function.BooleanSupplier condition) throws InterruptedException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("archive bench: timed out");
            }
            Thread.sleep(1);
        }
    }
}
