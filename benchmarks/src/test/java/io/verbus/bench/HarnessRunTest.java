package io.verbus.bench;

import io.verbus.bench.contender.AeronContender;
import io.verbus.bench.contender.CrossProcessContender;
import io.verbus.bench.contender.FabricSendReceiveContender;
import io.verbus.bench.contender.FabricWriteContender;
import io.verbus.bench.contender.FloorContender;
import io.verbus.bench.contender.MessageHeader;
import io.verbus.bench.contender.NotRunContender;
import io.verbus.bench.contender.SimplePingPongPair;
import io.verbus.bench.contender.TcpBusyPollContender;
import io.verbus.bench.contender.TcpSocketContender;
import io.verbus.bench.contender.VerbusContender;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Tiny bounded runs that prove the harness completes and accounts for every contender. They never look at how fast
 * anything was: the machine is shared, and waiting threads back off instead of spinning.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class HarnessRunTest
{
    private static final long MAX_ROUND_TRIPS = 200;
    /**
     * Bounds each message of these tiny runs: long enough for a cold JVM's first messages on the rdma path (classes
     * loaded and code compiled as they go; 300 ms was once too short in a fresh clone's full suite, "could not send
     * message 1"), short enough that the stalling contender's test ends in seconds.
     */
    private static final long STALL_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);

    private final ByteArrayOutputStream log = new ByteArrayOutputStream();

    @Test
    void shouldRecordEveryRoundTripOfATinyBoundedTcpRun()
    {
        final List<BenchResult> results = run("--sizes", "32,256").latency(new TcpSocketContender());

        assertEquals(2, results.size());
        for (final BenchResult result : results)
        {
            assertTrue(result.ok(), result.statusText());
            assertTrue(
                result.messages() > 0 && result.messages() <= MAX_ROUND_TRIPS, "round trips " + result.messages());
            assertEquals(result.messages(), result.histogram().getTotalCount());
            assertEquals("kernel TCP, loopback, blocking, TCP_NODELAY", result.provider());
        }
        assertEquals(32, results.get(0).sizeBytes());
        assertEquals(256, results.get(1).sizeBytes());
    }

    @Test
    void shouldCountMessagesOfATinyBoundedThroughputRun()
    {
        final List<BenchResult> results = run("--throughput-sizes", "64,4096").throughput(new TcpSocketContender());

        assertEquals(2, results.size());
        for (final BenchResult result : results)
        {
            assertTrue(result.ok(), result.statusText());
            assertTrue(result.messages() > 0);
            assertTrue(result.elapsedNs() > 0);
            assertTrue(result.messagesPerSecond() > 0);
        }
    }

    @Test
    void shouldRecordOneTailPerBurstOverTcpAndTheRdmaMediaInDirectMode()
    {
        final BenchRun run = run("--sizes", "32");
        for (final Contender contender : List.of(
            new TcpSocketContender(), new VerbusContender(VerbusContender.Variant.RDMA_SHM_DIRECT)))
        {
            final BenchResult result = run.burst(contender).getFirst();

            assertTrue(result.ok(), contender.name() + " " + result.statusText());
            assertEquals(BenchResult.BURST, result.part());
            assertEquals(BurstTailRunner.BURSTS, result.histogram().getTotalCount(), "one tail per measured burst");
            assertEquals(BurstTailRunner.BURSTS, result.messages());
        }
    }

    @Test
    void shouldCarryBothPartsOverTheNioBusyPollVariant()
    {
        final BenchRun run = run("--sizes", "1024", "--throughput-sizes", "1024");

        assertTrue(run.latency(new TcpBusyPollContender()).getFirst().ok());
        assertTrue(run.throughput(new TcpBusyPollContender()).getFirst().ok());
    }

    @Test
    void shouldBounceTheCacheLineAndFillTheRingOfTheFloor()
    {
        final BenchRun run = run("--sizes", "32", "--throughput-sizes", "4096");

        final BenchResult latency = run.latency(new FloorContender()).getFirst();
        final BenchResult throughput = run.throughput(new FloorContender()).getFirst();

        assertTrue(latency.ok(), latency.statusText());
        assertEquals(latency.messages(), latency.histogram().getTotalCount());
        assertTrue(throughput.ok(), throughput.statusText());
    }

    @Test
    void shouldRunEveryContenderOncePerRoundAndReportOneRowPerSize()
    {
        final BenchRun run = run("--sizes", "32,256", "--throughput-sizes", "4096", "--rounds", "3",
            "--only", "latency,throughput");

        final BenchReport report = run.run(List.of(new FloorContender(), new TcpSocketContender()));

        assertEquals(2 * 2 + 2, report.results().size(), "one row per contender, part and size, not per round");
        final String text = log.toString(StandardCharsets.UTF_8);
        assertTrue(text.contains("bench: latency round 3 of 3"), text);
        assertTrue(text.contains("bench: throughput round 3 of 3"), text);
        // Rounds interleave the contenders: the floor's second round comes after the socket's first.
        assertTrue(text.indexOf("bench: latency tcp-socket") < text.lastIndexOf("bench: latency floor"), text);
        assertTrue(text.contains("bench: latency floor 256 B by round: "), text);
        assertTrue(report.plan().contains("3 rounds"), report.plan());
    }

    @Test
    void shouldPingPongThroughARealEmbeddedAeronDriver()
    {
        final BenchRun run = run("--sizes", "32", "--throughput-sizes", "4096");
        final AeronContender ipc = new AeronContender(AeronContender.Media.IPC);

        final BenchResult latency = run.latency(ipc).getFirst();
        final BenchResult throughput = run.throughput(ipc).getFirst();

        assertTrue(latency.ok(), latency.statusText());
        assertTrue(latency.messages() > 0);
        assertTrue(throughput.ok(), throughput.statusText());
        assertTrue(ipc.provider().startsWith("aeron 1.51.0 embedded MediaDriver"), ipc.provider());
    }

    @Test
    void shouldPingPongThroughVerbusNativeIpcAndTheRdmaMediaOverShm()
    {
        final BenchRun run = run("--sizes", "32", "--throughput-sizes", "1024");

        for (final VerbusContender.Variant variant : List.of(
            VerbusContender.Variant.IPC,
            VerbusContender.Variant.RDMA_SHM_DIRECT,
            VerbusContender.Variant.RDMA_SHM_IMM,
            VerbusContender.Variant.RDMA_SHM_AGENT))
        {
            final VerbusContender contender = new VerbusContender(variant);
            final BenchResult latency = run.latency(contender).getFirst();
            final BenchResult throughput = run.throughput(contender).getFirst();

            assertTrue(latency.ok(), variant + " " + latency.statusText());
            assertEquals(latency.messages(), latency.histogram().getTotalCount());
            assertTrue(throughput.ok(), variant + " " + throughput.statusText());
            assertTrue(throughput.messages() > 0, variant + " messages");
        }
    }

    @Test
    void shouldPingPongAndStreamBetweenTwoProcessesOverAeronIpcAndTheRdmaMediaOverShm()
    {
        final BenchRun run = run("--sizes", "32", "--throughput-sizes", "1024");

        for (final CrossProcessContender.Kind kind : List.of(CrossProcessContender.Kind.AERON_IPC,
            CrossProcessContender.Kind.VERBUS_RDMA_SHM_DIRECT, CrossProcessContender.Kind.VERBUS_RDMA_SHM_AGENT))
        {
            final CrossProcessContender contender = new CrossProcessContender(kind, -1);
            final BenchResult latency = run.latency(contender).getFirst();
            final BenchResult throughput = run.throughput(contender).getFirst();

            assertTrue(latency.ok(), kind + " " + latency.statusText());
            assertEquals(latency.messages(), latency.histogram().getTotalCount(), "every echo was checked");
            assertTrue(throughput.ok(), kind + " " + throughput.statusText());
            assertTrue(throughput.messages() > 0, kind + " messages counted by the child");
        }
    }

    @Test
    void shouldReproduceTheSeedMethodsOverTheShmProvider()
    {
        final BenchRun run = run("--sizes", "256", "--throughput-sizes", "4096");

        for (final Contender contender :
            List.of(new FabricSendReceiveContender("shm"), new FabricWriteContender("shm")))
        {
            final BenchResult latency = run.latency(SeedComparison.LATENCY_PART, contender).getFirst();
            final BenchResult throughput = run.throughput(SeedComparison.THROUGHPUT_PART, contender).getFirst();

            assertTrue(latency.ok(), contender.name() + " " + latency.statusText());
            assertEquals(SeedComparison.LATENCY_PART, latency.part());
            assertTrue(latency.cpuNsPerMessage() >= 0, "CPU time per round trip is measured");
            assertTrue(throughput.ok(), contender.name() + " " + throughput.statusText());
            assertTrue(throughput.cpuNsPerMessage() >= 0, "CPU time per message is measured");
        }
    }

    @Test
    void shouldNameWhyVerbsCannotRunHere()
    {
        final String[] devices = new File("/sys/class/infiniband").list();
        final boolean deviceHere = null != devices && devices.length > 0;
        final String reason = new VerbusContender(VerbusContender.Variant.RDMA_VERBS).unavailableReason();
        final String seedReason = new FabricWriteContender("verbs").unavailableReason();
        final String twoProcessReason = new CrossProcessContender(
            CrossProcessContender.Kind.VERBUS_RDMA_VERBS_DIRECT, -1).unavailableReason();

        if (!deviceHere)
        {
            assertTrue(null != reason && reason.startsWith("no RDMA device on this host"), String.valueOf(reason));
            assertTrue(null != seedReason && seedReason.startsWith("no RDMA device on this host"), seedReason);
            assertTrue(null != twoProcessReason && twoProcessReason.startsWith("no RDMA device on this host"),
                twoProcessReason);
        }
        else
        {
            assertTrue(null == reason || reason.contains("not in this build"), reason);
        }
        assertNull(new VerbusContender(VerbusContender.Variant.RDMA_SHM_DIRECT).unavailableReason());
        assertNull(new FabricWriteContender("tcp").unavailableReason());
        assertNull(new CrossProcessContender(CrossProcessContender.Kind.VERBUS_RDMA_SHM_DIRECT, -1)
            .unavailableReason());
    }

    @Test
    void shouldListContenderThatCannotRunAsNotRunForEverySize()
    {
        final BenchRun run = run("--sizes", "32,256,1024", "--throughput-sizes", "32,4096");
        final NotRunContender verbs = new NotRunContender("verbus-rdma-verbs", "rdma verbs",
            "no RDMA device on this host");

        final List<BenchResult> latency = run.latency(verbs);
        final List<BenchResult> throughput = run.throughput(verbs);

        assertEquals(3, latency.size());
        assertEquals(2, throughput.size());
        for (final BenchResult result : List.of(latency.get(0), latency.get(2), throughput.get(1)))
        {
            assertEquals(BenchResult.Status.NOT_RUN, result.status());
            assertEquals("not run: no RDMA device on this host", result.statusText());
            assertNull(result.histogram());
        }
    }

    @Test
    void shouldListContenderLeftOutByTheFilterAsNotSelected()
    {
        final BenchResult result = run("--sizes", "32", "--contenders", "^aeron").latency(new TcpSocketContender())
            .getFirst();

        assertEquals("not run: not selected by --contenders", result.statusText());
    }

    @Test
    void shouldFailContenderWhoseEchoNeverComesWithinTheStallTimeout()
    {
        final long startNs = System.nanoTime();
        final List<BenchResult> results = run("--sizes", "32,256").latency(new SilentContender());
        final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);

        assertEquals(BenchResult.Status.FAILED, results.get(0).status());
        assertTrue(results.get(0).reason().matches(".*no echo of message [0-9]+ within 2000 ms.*"),
            results.get(0).reason());
        assertEquals("failed: an earlier size failed", results.get(1).statusText());
        assertTrue(elapsedMs < 10_000, "bounded by the stall timeout, took " + elapsedMs + " ms");
    }

    @Test
    void shouldDropALateEchoOfAStalledWarmUpAndMeasureTheRunsAfterIt()
    {
        final LateEchoContender contender = new LateEchoContender();
        final List<BenchResult> results = run("--sizes", "32,256").latency(contender);

        assertTrue(contender.heldEchoReleased, "the warm-up's third echo came after its stall timeout");
        assertEquals(2, results.size());
        for (final BenchResult result : results)
        {
            // Before sequences grew across runs, the first size's first round trip met the late echo: "echo carried
            // sequence 3 but 1 was sent".
            assertTrue(result.ok(), result.statusText());
            assertEquals(result.messages(), result.histogram().getTotalCount());
        }
    }

    @Test
    void shouldFailThroughputWhoseSubscriberNeverReceives()
    {
        final BenchResult result = run("--throughput-sizes", "32").throughput(new SilentContender()).getFirst();

        assertEquals(BenchResult.Status.FAILED, result.status());
        assertTrue(result.reason().contains("subscriber received nothing for 2000 ms"), result.reason());
    }

    @Test
    void shouldReportSetUpFailureWithItsCauseForEverySize()
    {
        final List<BenchResult> results = run("--sizes", "32,256").latency(new BrokenContender());

        assertEquals(2, results.size());
        for (final BenchResult result : results)
        {
            assertEquals("failed: set-up failed: cannot bind: address in use", result.statusText());
        }
        assertTrue(log.toString(StandardCharsets.UTF_8).contains("broken failed"));
    }

    @Test
    void shouldPinTheMeasuringThreadsWhenTheCpusExistAndRunUnpinnedOtherwise()
    {
        final RunSettings pinned = RunSettings.from(BenchOptions.parse("--cpus", "0,1"));
        final RunSettings unpinned = RunSettings.from(BenchOptions.parse("--no-pin"));

        if (Runtime.getRuntime().availableProcessors() >= 2)
        {
            assertTrue(pinned.pinned());
            assertEquals(0, pinned.pingerCpu());
            assertEquals(1, pinned.pongerCpu());
        }
        assertFalse(unpinned.pinned());
        assertEquals(-1, unpinned.pingerCpu());
    }

    @Test
    void shouldYieldInsteadOfSpinningForContendersWithHelperThreads()
    {
        final RunSettings settings = RunSettings.from(BenchOptions.parse("--no-pin"));
        final Contender withHelperThreads = new Contender()
        {
            @Override
            public String name()
            {
                return "with-helper-threads";
            }

            @Override
            public String provider()
            {
                return "a software NIC thread on the data path";
            }

            @Override
            public boolean runsHelperThreads()
            {
                return true;
            }

            @Override
            public PingPongPair openPingPong(final int maxLength)
            {
                throw new UnsupportedOperationException();
            }

            @Override
            public StreamPair openStream(final int maxLength)
            {
                throw new UnsupportedOperationException();
            }
        };

        assertTrue(settings.idleStrategy().get() instanceof org.agrona.concurrent.BusySpinIdleStrategy);
        assertTrue(settings.forContender(withHelperThreads).idleStrategy().get()
            instanceof org.agrona.concurrent.YieldingIdleStrategy);
        assertTrue(settings.forContender(new FabricWriteContender("shm")).idleStrategy().get()
            instanceof org.agrona.concurrent.BusySpinIdleStrategy);
        // The tcp provider's polling threads are its NIC (issue 13): nothing else needs the CPU while they wait.
        assertTrue(settings.forContender(new FabricWriteContender("tcp")).idleStrategy().get()
            instanceof org.agrona.concurrent.BusySpinIdleStrategy);
        assertTrue(settings.forContender(new VerbusContender(VerbusContender.Variant.RDMA_TCP)).idleStrategy().get()
            instanceof org.agrona.concurrent.BusySpinIdleStrategy);
    }

    @Test
    void shouldDescribeThreadsAndLoadInTheReport()
    {
        final BenchRun run = run("--sizes", "32", "--only", "latency", "--contenders", "^floor$");

        final BenchReport report = run.run(List.of(new FloorContender(), new TcpSocketContender()));

        assertEquals(2, report.results().size());
        assertTrue(report.results().get(0).ok());
        assertEquals("not run: not selected by --contenders", report.results().get(1).statusText());
        assertTrue(report.pinning().contains("not pinned"), report.pinning());
        assertFalse(report.machine().cpuModel().isEmpty());
    }

    private BenchRun run(final String... extraArgs)
    {
        final String[] args = new String[extraArgs.length + 6];
        System.arraycopy(
            new String[]{ "--warmup-ms", "20", "--measure-ms", "100", "--throughput-ms", "50" }, 0, args, 0, 6);
        System.arraycopy(extraArgs, 0, args, 6, extraArgs.length);
        final BenchOptions options = BenchOptions.parse(args);
        final RunSettings settings = new RunSettings(
            options.warmupNs(), options.measureNs(), MAX_ROUND_TRIPS, options.throughputNs(), 100_000,
            STALL_TIMEOUT_NS, -1, -1, BackoffIdleStrategy::new);
        return new BenchRun(options, settings, new PrintStream(log, true, StandardCharsets.UTF_8));
    }

    /** Accepts every message and never answers. */
    private static final class SilentContender implements Contender
    {
        @Override
        public String name()
        {
            return "silent";
        }

        @Override
        public String provider()
        {
            return "nothing";
        }

        @Override
        public PingPongPair openPingPong(final int maxLength)
        {
            final Pinger pinger = new Pinger()
            {
                @Override
                public boolean send(final long sequence, final int length)
                {
                    return true;
                }

                @Override
                public boolean pollEcho(final long sequence)
                {
                    return false;
                }
            };
            return new SimplePingPongPair(pinger, () -> 0, () -> { });
        }

        @Override
        public StreamPair openStream(final int maxLength)
        {
            return new StreamPair()
            {
                @Override
                public StreamPublisher publisher()
                {
                    return length -> true;
                }

                @Override
                public StreamSubscriber subscriber()
                {
                    return length -> 0;
                }

                @Override
                public void close()
                {
                }
            };
        }
    }

    /**
     * Echoes every message in order, in memory, except that it holds the third ping it ever sees for longer than the
     * stall timeout, so the warm-up run fails waiting for it and the echo arrives during the first measured run.
     */
    private static final class LateEchoContender implements Contender
    {
        private static final int HELD_PING = 3;
        private static final long HOLD_NS = STALL_TIMEOUT_NS + TimeUnit.MILLISECONDS.toNanos(300);

        private volatile boolean heldEchoReleased;

        @Override
        public String name()
        {
            return "late-echo";
        }

        @Override
        public String provider()
        {
            return "in memory, one echo held past the stall timeout";
        }

        @Override
        public PingPongPair openPingPong(final int maxLength)
        {
            final Queue<Long> pings = new ConcurrentLinkedQueue<>();
            final Queue<Long> echoes = new ConcurrentLinkedQueue<>();
            final Pinger pinger = new Pinger()
            {
                @Override
                public boolean send(final long sequence, final int length)
                {
                    pings.add(sequence);
                    return true;
                }

                @Override
                public boolean pollEcho(final long sequence)
                {
                    final Long echoed = echoes.poll();
                    return null != echoed && MessageHeader.isEchoOf(sequence, echoed);
                }
            };
            final Ponger ponger = new Ponger()
            {
                private int seen;
                private Long held;
                private long releaseNs;

                @Override
                public int echo()
                {
                    if (null != held)
                    {
                        if (System.nanoTime() - releaseNs < 0)
                        {
                            return 0;
                        }
                        echoes.add(held);
                        held = null;
                        heldEchoReleased = true;
                        return 1;
                    }
                    final Long ping = pings.poll();
                    if (null == ping)
                    {
                        return 0;
                    }
                    if (++seen == HELD_PING)
                    {
                        held = ping;
                        releaseNs = System.nanoTime() + HOLD_NS;
                        return 0;
                    }
                    echoes.add(ping);
                    return 1;
                }
            };
            return new SimplePingPongPair(pinger, ponger, () -> { });
        }

        @Override
        public StreamPair openStream(final int maxLength)
        {
            throw new UnsupportedOperationException("latency only");
        }
    }

    /** Cannot even be set up. */
    private static final class BrokenContender implements Contender
    {
        @Override
        public String name()
        {
            return "broken";
        }

        @Override
        public String provider()
        {
            return "nothing";
        }

        @Override
        public PingPongPair openPingPong(final int maxLength) throws IOException
        {
            throw new IOException("cannot bind: address in use");
        }

        @Override
        public StreamPair openStream(final int maxLength) throws IOException
        {
            throw new IOException("cannot bind: address in use");
        }
    }
}
