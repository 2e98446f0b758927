package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.verbus.test.MessageStream;
import org.agrona.BitUtil;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code join=recent} across processes (issue 17's done-when line): a publisher JVM ({@link RdmaPeerMain}, embedded
 * driver, so its log file is unlinked once mapped) publishes {@link #MESSAGES} sequence-numbered, CRC32-checked
 * messages on an {@code rdma:} channel to a live subscriber JVM; after half of them a third JVM subscribes with
 * {@code join=recent|join-position=0}, READs the first half from the publisher's log, and must then receive the rest
 * live: every message from 0 to the last exactly once, in order, intact. The publisher holds at the half until the
 * late joiner is admitted (RdmaPeerMain's {@code --late-joiner-by}), so the join happens after exactly that many.
 * <p>
 * The term is sized so that the whole stream lies within what the log still holds (a term less the window), and the
 * window is small, so the requested position 0 is still in the log at the join. The suite runs {@value
 * #DEFAULT_MESSAGES} messages; {@code -Dverbus.rdma.catchup.messages=1000000} runs issue 17's million.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RdmaCatchUpCrossProcessTest
{
    static final String MESSAGES_PROP_NAME = "verbus.rdma.catchup.messages";
    private static final long DEFAULT_MESSAGES = 100_000;
    private static final long MESSAGES = Long.getLong(MESSAGES_PROP_NAME, DEFAULT_MESSAGES);
    private static final long JOIN_AFTER = MESSAGES / 2;
    private static final String SECRET = "catch-up-cross-process-secret-0123456789";
    private static final int STREAM_ID = 3201;
    private static final int WINDOW_LENGTH = 4 * 1024 * 1024;
    /** The whole stream plus the window fits in one term: position 0 is still held at the join, whenever it is. */
    private static final long TERM_LENGTH = termLengthFor(MESSAGES);
    /** The handshake step: the catch-up's READs must complete within half of it (a 1M stream's half is ~107 MiB). */
    private static final String TIMEOUT = "30s";
    private static final long STALL_MS = 20_000;
    /** RdmaPeerMain's subscriber reports progress every this many messages. */
    private static final long PROGRESS_MESSAGES = 10_000;
    /** Bound on one run: start-up, the rings' pre-touch, and a floor of 5k messages/s. */
    private static final long RUN_BOUND_MS = 90_000 + MESSAGES / 5;

    private Path dir;

    @BeforeEach
    void createDir() throws IOException
    {
        // Logs, rings and the fabric's files in memory: a 1M run maps about 2.3 GB (three terms each).
        dir = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-catchup-xp-");
    }

    @AfterEach
    void deleteDir() throws IOException
    {
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
    }

    /** @return the least power-of-two term (at least 64 KiB) that holds every frame of the stream and the window. */
    static long termLengthFor(final long messages)
    {
        long bytes = WINDOW_LENGTH;
        for (long sequence = 0; sequence < messages; sequence++)
        {
            bytes += BitUtil.align(DataHeaderFlyweight.HEADER_LENGTH + MessageStream.Sizes.MIXED.lengthFor(sequence),
                FrameDescriptor.FRAME_ALIGNMENT);
        }
        return Math.max(64 * 1024, BitUtil.findNextPositivePowerOfTwo(bytes + 1));
    }

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    @Timeout(value = 2, unit = TimeUnit.HOURS) // bounds only a long form: each run ends by RUN_BOUND_MS
    void shouldDeliverEveryMessageOnceInOrderToAJoinerThatCatchesUpByReadAfterHalfOfThem(final String provider)
        throws Exception
    {
        final long startNs = System.nanoTime();
        final List<Process> processes = new ArrayList<>();
        final List<PeerProcess> peers = new ArrayList<>();
        try
        {
            final PeerProcess publisher = PeerProcess.start("publisher", command("publish", "pub",
                "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=" + TERM_LENGTH + "|window=" +
                WINDOW_LENGTH + "|timeout=" + TIMEOUT, "--subscribers=1", "--late-joiner-by=" + JOIN_AFTER),
                processes, peers);
            final String portLine = publisher.await(60_000, "PORT ", "FAILED");
            assertTrue(null != portLine && portLine.startsWith("PORT "), portLine + "\n    " + publisher.tail());
            final String endpoint = "rdma:endpoint=127.0.0.1:" + portLine.substring(5).trim() + "|provider=" +
                provider + "|timeout=" + TIMEOUT;

            final PeerProcess live = PeerProcess.start("live subscriber", command("subscribe", "live", endpoint),
                processes, peers);
            // The publisher holds at JOIN_AFTER until one more subscriber is admitted: wait until the live one has
            // every message before it, then start the late joiner.
            if (!live.awaitProgress(JOIN_AFTER, RUN_BOUND_MS))
            {
                fail("the live subscriber did not get " + JOIN_AFTER + " messages: " + live.result + "\n    " +
                    live.tail() + "\n  publisher:\n    " + publisher.tail());
            }
            final long joinNs = System.nanoTime();
            final PeerProcess late = PeerProcess.start("late joiner", command("subscribe", "late",
                endpoint + "|join=recent|join-position=0", "--late-joiner"), processes, peers);

            publisher.expect("PUBLISHED " + MESSAGES, "PUBLISHED");
            live.expect("RECEIVED " + MESSAGES + " OK first=0", "RECEIVED");
            // Caught up from message 0 by READ, then live: all of them, the first being 0 (a live join would start
            // at JOIN_AFTER or later and fail here).
            late.expect("RECEIVED " + MESSAGES + " OK first=0", "RECEIVED");
            // Its JVM's start, its ring's pre-touch, the handshake and the catch-up, and its first messages.
            final long firstProgressMs = late.awaitProgress(PROGRESS_MESSAGES, RUN_BOUND_MS) ?
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - joinNs) : -1;
            awaitResults(peers);
            final long totalMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            final String catchUp = catchUpLine(late);
            assertTrue(catchUp.startsWith("CATCH-UP bytes=") && catchUp.contains(" gap=0 "), catchUp);
            final long caughtUp = Long.parseLong(catchUp.split(" ")[1].substring("bytes=".length()));
            assertTrue(caughtUp > 0 && caughtUp % FrameDescriptor.FRAME_ALIGNMENT == 0,
                "READ the first messages from the log: " + catchUp);

            publisher.say("DONE");
            for (final PeerProcess peer : peers)
            {
                assertTrue(peer.process.waitFor(30, TimeUnit.SECONDS), peer.name + " exits");
                assertEquals(0, peer.process.exitValue(), peer.name + "\n    " + peer.tail());
            }
            System.out.printf("catch-up across processes over %s: %,d messages (term %,d, window %,d), late joiner " +
                "after %,d: %s; late joiner %s, its first %,d messages %,d ms after its JVM was started; live %s; " +
                "%,d ms in all%n", provider, MESSAGES, TERM_LENGTH, WINDOW_LENGTH, JOIN_AFTER, catchUp, late.result,
                PROGRESS_MESSAGES, firstProgressMs, live.result, totalMs);
        }
        finally
        {
            for (final Process process : processes)
            {
                process.destroyForcibly();
            }
            for (final Process process : processes)
            {
                process.waitFor(30, TimeUnit.SECONDS);
            }
        }
    }

    private List<String> command(final String role, final String peerDir, final String channel,
        final String... options)
    {
        final long subscriberTermCap = Math.max(TERM_LENGTH, 64L << 20);
        final List<String> command = PeerProcesses.javaCommand(SECRET, dir.resolve("fabric"),
            "-D" + RdmaPeerMain.TIMEOUT_PROP_NAME + "=" + (RUN_BOUND_MS / 1000 - 10),
            "-D" + SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME + "=" + subscriberTermCap,
            "-D" + SubscriberLimits.MAX_RING_MEMORY_PROP_NAME + "=" + Math.max(4 * subscriberTermCap, 512L << 20));
        command.addAll(List.of(role, dir.resolve(peerDir).toString(), channel, Integer.toString(STREAM_ID),
            Long.toString(MESSAGES), "--stall-ms=" + STALL_MS, "--driver-idle=backoff"));
        command.addAll(List.of(options));
        return command;
    }

    /** Every peer's result line, or a failure with every peer's last lines at the first FAILED or the bound. */
    private static void awaitResults(final List<PeerProcess> peers) throws InterruptedException
    {
        final String report = PeerProcess.awaitAll(peers, RUN_BOUND_MS);
        if (null != report)
        {
            fail(report);
        }
    }

    private static String catchUpLine(final PeerProcess late)
    {
        for (final String line : late.seen)
        {
            if (line.startsWith("CATCH-UP "))
            {
                return line;
            }
        }
        return "no CATCH-UP line:\n    " + late.tail();
    }
}
