package io.verbus.media.rdma;

import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Direct mode across processes: an {@code ExclusivePublication} on {@code rdma:} whose publishing thread posts the
 * WRITEs itself, in one JVM, and one or three subscriber JVMs, with back pressure on (the publisher offers as fast
 * as it can and retries). Every message carries its sequence number, length and a CRC32, and each subscriber checks
 * every one through a {@code FragmentAssembler}: a lost, duplicated, reordered or corrupt message fails the run, and
 * so does a stall (no message out or in for {@link #STALL_MS} on either side, reported by the peer with its
 * position, limit and rdma counters), an image going unavailable, or a run outliving its time bound.
 * <p>
 * Variants: offer with and without {@code flush()} on back pressure, {@code tryClaim}/{@code commit} with aborted
 * claims, fragmented messages (up to six fragments), three subscriber processes, a subscriber joining mid-stream
 * (claims and fragments: it may join inside a fragmented message), and the tcp provider; every process in the
 * driver's SHARED threading mode, and on both providers also in INVOKER mode (each process's own loops run its
 * driver) and DEDICATED mode (an agent thread each). Four variants publish with {@code commit=imm} (the position
 * rides a WRITE_WITH_IMM, what {@code commit=auto} picks on RDMA hardware): offer + flush, claims with three
 * subscribers, a late joiner in INVOKER mode, and tcp in DEDICATED mode.
 * <p>
 * The in-suite size fits CI (each run a few seconds on 2 cores). The long form runs on demand:
 * {@code -Dverbus.soak.messages=1000000 -Dverbus.soak.runs=30} (runs per variant, every run counted, then failed
 * if any run failed), {@code -Dverbus.soak.variants=shm-offer,tcp-claim} to pick variants, and
 * {@code -Dverbus.soak.term-length=1m} for the channel's term length.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RdmaDirectModeCrossProcessTest
{
    static final String MESSAGES_PROP_NAME = "verbus.soak.messages";
    static final String RUNS_PROP_NAME = "verbus.soak.runs";
    static final String VARIANTS_PROP_NAME = "verbus.soak.variants";
    static final String TERM_LENGTH_PROP_NAME = "verbus.soak.term-length";

    private static final String SECRET = "direct-mode-soak-secret-0123456789";
    private static final long MESSAGES = Long.getLong(MESSAGES_PROP_NAME, 100_000);
    private static final int RUNS = Integer.getInteger(RUNS_PROP_NAME, 1);
    /** Small terms by default: the log is reused (and cleaned) every few hundred microseconds at full speed. */
    private static final String TERM_LENGTH = System.getProperty(TERM_LENGTH_PROP_NAME, "64k");
    private static final long STALL_MS = 10_000;
    /**
     * Bound on one run: start-up and a floor of 5k messages/s, which a machine shared with other heavy work still
     * clears. A stall is caught by the peers' {@link #STALL_MS} long before it.
     */
    private static final long RUN_BOUND_MS = 60_000 + MESSAGES / 5;
    private static final int STREAM_ID = 3101;
    private static final Pattern IMMEDIATES = Pattern.compile(" immediates=(\\d+)");

    @TempDir
    Path dir;

    /**
     * One configuration of the soak.
     *
     * @param lateJoiner true when the last subscriber joins mid-stream (after the first has a fifth of the messages)
     *                   and must get every message from its first one on.
     * @param threading  every process's driver threading mode (RdmaPeerMain's --threading).
     * @param commit     the publisher's {@code commit=} ({@code counter} or {@code imm}); the subscribers leave it to
     *                   the handshake's agreement.
     */
    record Variant(
        String name, String provider, String send, String sizes, int subscribers, boolean lateJoiner, String threading,
        String commit)
    {
        Variant(final String name, final String provider, final String send, final String sizes,
            final int subscribers, final boolean lateJoiner)
        {
            this(name, provider, send, sizes, subscribers, lateJoiner, "shared");
        }

        Variant(final String name, final String provider, final String send, final String sizes,
            final int subscribers, final boolean lateJoiner, final String threading)
        {
            this(name, provider, send, sizes, subscribers, lateJoiner, threading, "counter");
        }

        public String toString()
        {
            return name;
        }
    }

    static Stream<Variant> variants()
    {
        final List<Variant> all = List.of(
            new Variant("shm-offer", "shm", "offer", "mixed", 1, false),
            new Variant("shm-offer-flush", "shm", "flush", "mixed", 1, false),
            new Variant("shm-claim", "shm", "claim", "mixed", 1, false),
            new Variant("shm-fragmented", "shm", "offer", "fragmented", 1, false),
            new Variant("shm-3-subscribers", "shm", "offer", "mixed", 3, false),
            new Variant("shm-late-joiner", "shm", "claim", "fragmented", 2, true),
            new Variant("tcp-offer", "tcp", "offer", "mixed", 1, false),
            new Variant("tcp-claim", "tcp", "claim", "mixed", 1, false),
            new Variant("shm-claim-invoker", "shm", "claim", "fragmented", 1, false, "invoker"),
            new Variant("tcp-offer-invoker", "tcp", "offer", "mixed", 1, false, "invoker"),
            new Variant("shm-offer-dedicated", "shm", "offer", "mixed", 3, false, "dedicated"),
            new Variant("tcp-claim-dedicated", "tcp", "claim", "fragmented", 1, false, "dedicated"),
            // commit=imm: what commit=auto picks on ConnectX (mlx5), bnxt_re and rxe, so the production path.
            new Variant("shm-imm-offer-flush", "shm", "flush", "mixed", 1, false, "shared", "imm"),
            new Variant("shm-imm-claim-3-subscribers", "shm", "claim", "fragmented", 3, false, "shared", "imm"),
            new Variant("shm-imm-late-joiner", "shm", "claim", "fragmented", 2, true, "invoker", "imm"),
            new Variant("tcp-imm-offer", "tcp", "offer", "mixed", 1, false, "dedicated", "imm"));
        final String chosen = System.getProperty(VARIANTS_PROP_NAME, "");
        if (chosen.isBlank())
        {
            return all.stream();
        }
        final List<String> names = List.of(chosen.split(","));
        return all.stream().filter(variant -> names.contains(variant.name()));
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("variants")
    @Timeout(value = 6, unit = TimeUnit.HOURS) // bounds only a long form: each run ends by RUN_BOUND_MS
    void shouldDeliverEveryMessageExactlyOnceInOrderAndIntactWithNoStall(final Variant variant) throws Exception
    {
        final List<String> failures = new ArrayList<>();
        long totalMs = 0;
        for (int run = 1; run <= RUNS; run++)
        {
            final long startNs = System.nanoTime();
            final String failure = runOnce(variant, run);
            final long ms = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            totalMs += ms;
            if (null != failure)
            {
                failures.add("run " + run + ": " + failure);
            }
            if (RUNS > 1)
            {
                System.out.printf("direct-mode soak %s: run %d/%d %s (%,d messages, %,d ms)%n",
                    variant, run, RUNS, null == failure ? "OK" : "FAILED", MESSAGES, ms);
            }
        }
        System.out.printf("direct-mode soak %s: %d of %d runs of %,d messages passed (term %s, %,d ms)%n",
            variant, RUNS - failures.size(), RUNS, MESSAGES, TERM_LENGTH, totalMs);
        if (!failures.isEmpty())
        {
            fail(failures.size() + " of " + RUNS + " runs failed (" + variant + "):\n" + String.join("\n", failures));
        }
    }

    /** @return null when every subscriber got every message intact and the publisher finished, else why not. */
    private String runOnce(final Variant variant, final int run) throws Exception
    {
        final Path runDir = dir.resolve(variant.name() + "-" + run);
        final List<String> common = List.of(
            "--sizes=" + variant.sizes(), "--stall-ms=" + STALL_MS, "--driver-idle=backoff",
            "--threading=" + variant.threading());
        final String timeout = "-D" + RdmaPeerMain.TIMEOUT_PROP_NAME + "=" + (RUN_BOUND_MS / 1000 - 10);
        final List<String> publisherCommand = publisherCommand(variant, runDir, timeout, common);

        final List<Process> processes = new ArrayList<>();
        final List<PeerProcess> peers = new ArrayList<>();
        try
        {
            final PeerProcess publisher = PeerProcess.start("publisher", publisherCommand, processes, peers);
            final String portLine = publisher.await(60_000, "PORT ", "FAILED");
            if (null == portLine || !portLine.startsWith("PORT "))
            {
                return "publisher did not start: " + portLine + "\n" + publisher.tail();
            }
            final int port = Integer.parseInt(portLine.substring(5).trim());

            final List<PeerProcess> subscribers = new ArrayList<>();
            final String notStarted =
                startSubscribers(variant, runDir, timeout, common, port, subscribers, processes, peers);
            if (null != notStarted)
            {
                return notStarted;
            }

            final String problems = awaitResults(variant, publisher, subscribers, peers);
            if (null != problems)
            {
                return problems;
            }

            return awaitExits(publisher, peers);
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

    private static List<String> publisherCommand(
        final Variant variant, final Path runDir, final String timeout, final List<String> common)
    {
        final List<String> publisherCommand = PeerProcesses.javaCommand(SECRET, runDir.resolve("fabric"), timeout);
        publisherCommand.addAll(List.of("publish", runDir.resolve("pub").toString(),
            "rdma:endpoint=127.0.0.1:0|provider=" + variant.provider() + "|term-length=" + TERM_LENGTH +
                "|commit=" + variant.commit(),
            Integer.toString(STREAM_ID), Long.toString(MESSAGES), "--exclusive", "--send=" + variant.send(),
            "--subscribers=" + (variant.subscribers() - (variant.lateJoiner() ? 1 : 0))));
        if (variant.lateJoiner())
        {
            publisherCommand.add("--late-joiner-by=" + MESSAGES / 2);
        }
        publisherCommand.addAll(common);
        return publisherCommand;
    }

    /** @return null once every subscriber process is started (into {@code subscribers}), else why not. */
    private static String startSubscribers(
        final Variant variant,
        final Path runDir,
        final String timeout,
        final List<String> common,
        final int port,
        final List<PeerProcess> subscribers,
        final List<Process> processes,
        final List<PeerProcess> peers) throws IOException, InterruptedException
    {
        for (int i = 0; i < variant.subscribers(); i++)
        {
            final boolean late = variant.lateJoiner() && i == variant.subscribers() - 1;
            if (late && !subscribers.get(0).awaitProgress(MESSAGES / 5, RUN_BOUND_MS))
            {
                // Mid-stream: once the first subscriber has a fifth of the messages (the publisher holds at half
                // until the late joiner is in, so it joins between the two while messages flow).
                return "subscriber 0 did not get a fifth of the messages\n    " + subscribers.get(0).tail();
            }
            final List<String> command = PeerProcesses.javaCommand(SECRET, runDir.resolve("fabric"), timeout);
            command.addAll(List.of("subscribe", runDir.resolve("sub-" + i).toString(),
                "rdma:endpoint=127.0.0.1:" + port + "|provider=" + variant.provider(),
                Integer.toString(STREAM_ID), Long.toString(MESSAGES)));
            command.addAll(common);
            if (late)
            {
                command.add("--late-joiner");
            }
            subscribers.add(PeerProcess.start((late ? "late subscriber " : "subscriber ") + i, command, processes,
                peers));
        }
        return null;
    }

    /**
     * Every peer reports one result line; the first FAILED (or a peer that dies without a result, or the run bound)
     * ends the run, so a stall or a loss is reported within seconds, not at the bound.
     *
     * @return null once every peer reported success, else the problems with every peer's last output lines.
     */
    private static String awaitResults(
        final Variant variant,
        final PeerProcess publisher,
        final List<PeerProcess> subscribers,
        final List<PeerProcess> peers)
        throws InterruptedException
    {
        publisher.expect("PUBLISHED " + MESSAGES, "PUBLISHED");
        for (final PeerProcess subscriber : subscribers)
        {
            subscriber.expect("RECEIVED " + MESSAGES + " OK first=0", "RECEIVED");
        }
        if (variant.lateJoiner())
        {
            subscribers.get(subscribers.size() - 1).expectLateJoin(MESSAGES);
        }
        final String problems = PeerProcess.awaitAll(peers, RUN_BOUND_MS);
        if (null != problems || !"imm".equals(variant.commit()))
        {
            return problems;
        }
        // The stream must really have run on immediates: a handshake that settled on the counter would pass too.
        for (final PeerProcess subscriber : subscribers)
        {
            final Matcher immediates = IMMEDIATES.matcher(subscriber.result);
            if (!immediates.find() || Long.parseLong(immediates.group(1)) == 0)
            {
                return subscriber.name + " received no immediate with commit=imm: " + subscriber.result;
            }
        }
        return null;
    }

    /** @return null once the publisher is told DONE and every peer exits with 0, else which did not. */
    private static String awaitExits(final PeerProcess publisher, final List<PeerProcess> peers)
        throws IOException, InterruptedException
    {
        publisher.say("DONE");
        assertTrue(publisher.process.waitFor(30, TimeUnit.SECONDS), "publisher exits after DONE");
        for (final PeerProcess peer : peers)
        {
            assertTrue(peer.process.waitFor(30, TimeUnit.SECONDS), peer.name + " exits");
            if (0 != peer.process.exitValue())
            {
                return peer.name + " exited with " + peer.process.exitValue() + "\n    " + peer.tail();
            }
        }
        return null;
    }
}
