package io.verbus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application thread whose interrupt flag is set (an executor shutting down, a cancelled task) adds publications
 * and subscriptions, offers and polls as any other, and keeps its flag. A log is created (embedded driver) or mapped
 * (a standalone driver's client) on the thread that adds it, through a {@code FileChannel}, which an interrupted
 * caller closes: before {@code InterruptImmuneIo} a client's {@code addExclusivePublication} failed "cannot map the
 * driver's log" on such a thread, and an {@code aeron:} add (Aeron's client maps its log the same way) failed with
 * {@code ClosedByInterruptException}.
 */
class InterruptedThreadTest
{
    private static final int MESSAGES = 1_000;

    @TempDir
    Path tempDir;

    @AfterEach
    void clearInterrupt()
    {
        Thread.interrupted();
    }

    @Test
    void shouldAddOfferAndPollOnAnInterruptedThreadWithTheEmbeddedDriver()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            exchange(verbus);
        }
    }

    @Test
    void shouldAddOfferAndPollOnAnInterruptedThreadAsAStandaloneDriversClient()
    {
        try (MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus client = Verbus.connect(new Verbus.Context().dir(tempDir.resolve("verbus").toString())
                .driverTimeoutMs(2_000)))
        {
            exchange(client);
        }
    }

    @Test
    void shouldLaunchAndConnectOnAnInterruptedThread()
    {
        Thread.currentThread().interrupt();
        try (MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir.resolve("standalone")));
            Verbus client = Verbus.connect(new Verbus.Context()
                .dir(tempDir.resolve("standalone").resolve("verbus").toString()).driverTimeoutMs(2_000));
            Verbus embedded = Verbus.launch(TestSupport.context(tempDir.resolve("embedded"))))
        {
            assertTrue(Thread.currentThread().isInterrupted(), "launch and connect keep the interrupt");
            exchange(client);
            exchange(embedded);
        }
    }

    @Test
    void shouldAddOfferAndPollAeronChannelsOnAnInterruptedThread()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            exchange(verbus, "aeron:ipc");
        }
    }

    private static void exchange(final Verbus verbus)
    {
        exchange(verbus, "ipc");
    }

    private static void exchange(final Verbus verbus, final String channel)
    {
        Thread.currentThread().interrupt();
        final Subscription subscription = verbus.addSubscription(channel, 21);
        final ExclusivePublication publication = verbus.addExclusivePublication(channel, 21);
        final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        final long[] next = {0};
        int sent = 0;
        final long deadlineNs = System.nanoTime() + 30_000_000_000L;
        while (next[0] < MESSAGES && System.nanoTime() < deadlineNs)
        {
            buffer.putLong(0, sent);
            if (sent < MESSAGES && publication.offer(buffer, 0, 8) > 0)
            {
                sent++;
            }
            subscription.poll((b, o, l, h) ->
            {
                assertEquals(next[0], b.getLong(o), "in order");
                next[0]++;
            }, 10);
        }
        assertEquals(MESSAGES, next[0]);
        assertTrue(Thread.currentThread().isInterrupted(), "the interrupt is kept");
    }
}
