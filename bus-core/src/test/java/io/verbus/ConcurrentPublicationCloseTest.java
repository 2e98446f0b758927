package io.verbus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Concurrent publications of one channel and stream share a log, which closes with the last of them. A publication
 * closed by two threads at once (a shutdown hook and a finally block) must count out once: counted twice, it would
 * close the shared log under a publication that is still open, whose offers would then be lost past the end of the
 * stream or refused as NOT_CONNECTED forever.
 */
class ConcurrentPublicationCloseTest
{
    private static final int ROUNDS = 2_000;

    @TempDir
    Path tempDir;

    @Test
    void shouldKeepTheSharedLogOpenWhenAnotherPublicationIsClosedByTwoThreadsAtOnce() throws Exception
    {
        final ExecutorService closers = Executors.newFixedThreadPool(2);
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 11);
            final Publication survivor = verbus.addPublication("ipc", 11);
            TestSupport.await("connected", survivor::isConnected);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
            final long[] received = new long[1];

            for (int round = 1; round <= ROUNDS; round++)
            {
                final Publication closedTwice = verbus.addPublication("ipc", 11);
                assertEquals(survivor.sessionId(), closedTwice.sessionId(), "the two share one log");
                final AtomicInteger start = new AtomicInteger();
                final Future<?> first = closers.submit(() -> awaitThenClose(start, closedTwice));
                final Future<?> second = closers.submit(() -> awaitThenClose(start, closedTwice));
                first.get(10, TimeUnit.SECONDS);
                second.get(10, TimeUnit.SECONDS);
                assertTrue(closedTwice.isClosed());

                assertFalse(survivor.isClosed());
                assertTrue(survivor.isConnected(), "round " + round + ": the survivor's log was closed under it");
                buffer.putLong(0, round);
                final int expected = round;
                TestSupport.await("round " + round + ": the survivor's offer",
                    () -> survivor.offer(buffer, 0, 8) > 0);
                TestSupport.await("round " + round + ": the survivor's message arrives",
                    () -> received[0] == expected,
                    () -> subscription.poll((b, o, l, h) -> received[0] = b.getLong(o), 10));
            }
        }
        finally
        {
            closers.shutdownNow();
        }
    }

    /** Both threads spin until both are there, so their closes start within a few hundred nanoseconds. */
    private static void awaitThenClose(final AtomicInteger start, final Publication publication)
    {
        start.incrementAndGet();
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (start.get() < 2 && System.nanoTime() < deadlineNs)
        {
            Thread.onSpinWait();
        }
        publication.close();
    }
}
