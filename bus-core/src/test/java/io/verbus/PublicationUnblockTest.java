package io.verbus;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.counters.CounterTypes;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A concurrent publication left with a hole (a claim never committed or aborted, a writer thread that died
 * mid-claim) is unblocked by the conductor after {@code publicationUnblockTimeoutNs}: later messages are delivered,
 * the publication is not back pressured for ever, the hole is counted once.
 */
class PublicationUnblockTest
{
    private static final long UNBLOCK_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(300);

    @TempDir
    Path tempDir;

    private Verbus.Context context()
    {
        return TestSupport.context(tempDir).publicationUnblockTimeoutNs(UNBLOCK_TIMEOUT_NS);
    }

    @Test
    void shouldPadAnAbandonedClaimAfterTheTimeoutAndDeliverWhatFollows()
    {
        try (Verbus verbus = Verbus.launch(context()))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 7);
            final Publication publication = verbus.addPublication("ipc:term-length=64k", 7);
            TestSupport.await("connected", publication::isConnected);

            final List<Long> received = new ArrayList<>();
            offer(publication, 1);
            assertTrue(publication.tryClaim(40, new BufferClaim()) > 0, "claim taken and then abandoned");
            offer(publication, 2);
            offer(publication, 3);

            final long startNs = System.nanoTime();
            TestSupport.await("messages after the hole", () -> received.size() == 3,
                () -> subscription.poll((b, o, l, h) -> received.add(b.getLong(o)), 10));
            assertTrue(System.nanoTime() - startNs >= UNBLOCK_TIMEOUT_NS / 2, "not before the timeout");
            assertEquals(List.of(1L, 2L, 3L), received);
            assertEquals(1, unblockedPublications(verbus));

            offer(publication, 4);
            TestSupport.await("a later message", () -> received.size() == 4,
                () -> subscription.poll((b, o, l, h) -> received.add(b.getLong(o)), 10));
            assertEquals(1, unblockedPublications(verbus), "counted once");
        }
    }

    @Test
    void shouldUnblockAPublicationWhoseWriterThreadDiedMidClaimSoItIsNotBackPressuredForEver() throws Exception
    {
        try (Verbus verbus = Verbus.launch(context()))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 8);
            final Publication publication = verbus.addPublication("ipc:term-length=64k|window=4k", 8);
            TestSupport.await("connected", publication::isConnected);

            final Thread writer = new Thread(() ->
            {
                final BufferClaim claim = new BufferClaim();
                if (publication.tryClaim(100, claim) > 0)
                {
                    claim.buffer().putLong(claim.offset(), -1);
                    throw new IllegalStateException("writer dies holding its claim");
                }
            });
            writer.setUncaughtExceptionHandler((t, ex) -> {});
            writer.start();
            writer.join();

            // Far more than a window: without the unblock the publication is back pressured once the window is full.
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
            final long[] received = {0};
            final long total = 1_000;
            long sent = 0;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while ((sent < total || received[0] < total) && System.nanoTime() < deadlineNs)
            {
                buffer.putLong(0, sent + 1);
                if (sent < total && publication.offer(buffer, 0, 64) > 0)
                {
                    sent++;
                }
                if (0 == subscription.poll((b, o, l, h) ->
                {
                    assertEquals(received[0] + 1, b.getLong(o), "in order, none lost");
                    received[0]++;
                }, 100))
                {
                    TestSupport.sleep(1);
                }
            }
            assertEquals(total, sent);
            assertEquals(total, received[0]);
            assertEquals(1, unblockedPublications(verbus));
        }
    }

    @Test
    void shouldKeepEveryFrameIntactWhenASlowWriterCommitsAfterTheUnblock()
    {
        try (Verbus verbus = Verbus.launch(context()))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 9);
            final Publication publication = verbus.addPublication("ipc:term-length=64k", 9);
            TestSupport.await("connected", publication::isConnected);

            final BufferClaim slow = new BufferClaim();
            assertTrue(publication.tryClaim(48, slow) > 0);
            offer(publication, 1);
            TestSupport.await("unblocked", () -> 1 == unblockedPublications(verbus));

            // The slow writer finally commits, into what is padding now: it loses its message, nothing is damaged.
            slow.buffer().putLong(slow.offset(), 99);
            slow.commit();
            offer(publication, 2);

            final List<Long> received = new ArrayList<>();
            final List<Integer> lengths = new ArrayList<>();
            TestSupport.await("both messages", () -> received.size() >= 2,
                () -> subscription.poll((b, o, l, h) ->
                {
                    received.add(b.getLong(o));
                    lengths.add(l);
                }, 10));
            TestSupport.sleep(50);
            subscription.poll((b, o, l, h) -> received.add(b.getLong(o)), 10);
            assertEquals(List.of(1L, 2L), received);
            assertEquals(List.of(64, 64), lengths);
        }
    }

    @Test
    void shouldRejectTheTimeoutBelowTheMinimum()
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> new Verbus.Context().publicationUnblockTimeoutNs(1000).conclude());
        assertTrue(ex.getMessage().contains("publicationUnblockTimeoutNs"), ex.getMessage());
        assertFalse(new Verbus.Context().publicationUnblockTimeoutNs() < TimeUnit.SECONDS.toNanos(15));
    }

    private static void offer(final Publication publication, final long value)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
        buffer.putLong(0, value);
        long result;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while ((result = publication.offer(buffer, 0, 64)) < 0)
        {
            assertTrue(System.nanoTime() < deadlineNs, "offer kept failing: " + result);
            TestSupport.sleep(1);
        }
    }

    static long unblockedPublications(final Verbus verbus)
    {
        final CountersReader counters = verbus.countersReader();
        final long[] value = {-1};
        counters.forEach((id, typeId, key, label) ->
        {
            if (CounterTypes.UNBLOCKED_PUBLICATIONS_TYPE_ID == typeId)
            {
                value[0] = counters.getCounterValue(id);
            }
        });
        return value[0];
    }
}
