package io.verbus.tools;

import io.verbus.tools.WritePingPongEnd.PollMode;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The two-process WRITE ping-pong's protocol (QP exchange over TCP, phases, both poll modes) on provider=tcp, with
 * the server on a thread of this JVM: on a host without an RDMA device. The Soft-RoCE guest runs it as two
 * processes on provider=verbs. Asserts that every round trip completed, never a latency.
 */
class VerbsWritePingPongTest
{
    /**
     * Far beyond the 3 s these phases take: on a starved host (a loaded machine, a niced build) the default 30 s
     * measurement bound ended a phase early, and this test is about every round trip, not time.
     */
    private static final VerbsWritePingPong.TimeBounds UNHURRIED = new VerbsWritePingPong.TimeBounds(
        TimeUnit.MINUTES.toNanos(3), TimeUnit.MINUTES.toNanos(3));

    @Test
    @Timeout(value = 420, unit = TimeUnit.SECONDS)
    void shouldCompleteEveryRoundTripInBothPollModesBetweenClientAndServer() throws Exception
    {
        try (ServerSocket listener = new ServerSocket())
        {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            final CompletableFuture<Void> server = CompletableFuture.runAsync(() -> serve(listener));

            final List<VerbsWritePingPong.Phase> phases = VerbsWritePingPong.runClient("127.0.0.1",
                listener.getLocalPort(), "tcp", 64, 50, 300, UNHURRIED,
                List.of(PollMode.COUNTER, PollMode.LAST_BYTES));

            server.get(60, TimeUnit.SECONDS);
            assertEquals(2, phases.size());
            assertEquals("counter", phases.get(0).mode());
            assertEquals("last-bytes", phases.get(1).mode());
            for (final VerbsWritePingPong.Phase phase : phases)
            {
                assertEquals(300, phase.halfRoundTripNs().length);
                assertEquals(64, phase.sizeBytes());
                assertTrue(phase.halfRoundTripNs()[0] > 0);
                assertTrue(phase.percentileNs(50) <= phase.percentileNs(99.9));
                assertTrue(phase.line().startsWith("WRITE-PINGPONG poll=" + phase.mode() + " size=64 iterations=300 "),
                    phase.line());
            }
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldEndEachPhaseAtItsTimeBoundAndStopTheServerThere() throws Exception
    {
        try (ServerSocket listener = new ServerSocket())
        {
            listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            final CompletableFuture<Void> server = CompletableFuture.runAsync(() -> serve(listener));
            final int iterations = 100_000_000;
            final long boundNs = TimeUnit.MILLISECONDS.toNanos(200);

            final List<VerbsWritePingPong.Phase> phases = VerbsWritePingPong.runClient("127.0.0.1",
                listener.getLocalPort(), "tcp", 64, iterations, iterations,
                new VerbsWritePingPong.TimeBounds(boundNs, boundNs), List.of(PollMode.COUNTER, PollMode.LAST_BYTES));

            server.get(60, TimeUnit.SECONDS);
            assertEquals(2, phases.size());
            for (final VerbsWritePingPong.Phase phase : phases)
            {
                final int measured = phase.halfRoundTripNs().length;
                assertTrue(measured > 0 && measured < iterations, phase.mode() + " measured " + measured);
            }
        }
    }

    @Test
    void shouldTakePercentilesAsTheSortedSampleAtTheCeilingRank()
    {
        final long[] sorted = new long[1000];
        for (int i = 0; i < sorted.length; i++)
        {
            sorted[i] = (i + 1) * 1000L;
        }
        final VerbsWritePingPong.Phase phase = new VerbsWritePingPong.Phase("counter", 64, "d", 64, sorted);
        assertEquals(500_000L, phase.percentileNs(50));
        assertEquals(990_000L, phase.percentileNs(99));
        assertEquals(999_000L, phase.percentileNs(99.9));
        assertTrue(phase.line().contains("p50=500.00 p99=990.00 p99.9=999.00 max=1000.00"), phase.line());
    }

    @Test
    void shouldRejectAnUnknownPollMode()
    {
        assertThrows(IllegalArgumentException.class, () -> PollMode.of("doorbell"));
        assertEquals(PollMode.COUNTER, PollMode.of("counter"));
    }

    private static void serve(final ServerSocket listener)
    {
        try
        {
            VerbsWritePingPong.serve(listener, "tcp");
        }
        catch (final Exception ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
