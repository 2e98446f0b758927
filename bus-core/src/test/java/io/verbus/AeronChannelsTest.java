package io.verbus;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.aeron.AeronSubscriptionAdapter;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code aeron:ipc} and {@code aeron:udp} go through a real embedded Aeron driver behind the Verbus interfaces.
 */
class AeronChannelsTest
{
    @TempDir
    Path tempDir;

    @org.junit.jupiter.params.ParameterizedTest
    @org.junit.jupiter.params.provider.EnumSource(ThreadingMode.class)
    void shouldGiveAnImageAnnouncedDuringAddSubscriptionItsSubscription(final ThreadingMode mode)
    {
        // Aeron's Ping asks the announced image's subscription for its stream id. With the publication already there,
        // Aeron's client announces the image while addSubscription still waits for its answer, on the adding thread:
        // the adapter did not have its subscription yet, and the handler met a NullPointerException.
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).threadingMode(mode)))
        {
            final Publication publication = verbus.addPublication("aeron:ipc", 41);
            final List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
            final Subscription subscription = verbus.addSubscription("aeron:ipc", 41,
                (image) ->
                {
                    try
                    {
                        seen.add(image.subscription().streamId() + " " + image.subscription().channel());
                    }
                    catch (final RuntimeException ex)
                    {
                        seen.add(ex.toString());
                    }
                },
                (image) -> {});
            TestSupport.await("image announced", () -> !seen.isEmpty(), verbus::invoke);
            assertEquals(List.of("41 aeron:ipc"), seen);
            assertEquals(41, subscription.streamId());
            publication.close();
            subscription.close();
        }
    }

    @Test
    void shouldRoundTripOverAeronIpcAndUdpOnLocalhost()
    {
        final Verbus.Context context = TestSupport.context(tempDir);
        try (Verbus verbus = Verbus.launch(context))
        {
            roundTrip(verbus, "aeron:ipc", "aeron:ipc", 21);
            assertTrue(Files.isDirectory(Path.of(context.dir(), "aeron")), "the Aeron dir lives inside the Verbus dir");

            final List<Image> available = new ArrayList<>();
            final Subscription udpSubscription =
                verbus.addSubscription("aeron:udp?endpoint=localhost:0", 22, available::add, image -> {});
            final List<String> addresses =
                ((AeronSubscriptionAdapter)udpSubscription).aeronSubscription().localSocketAddresses();
            TestSupport.await("bound", () -> !((AeronSubscriptionAdapter)udpSubscription).aeronSubscription()
                .localSocketAddresses().isEmpty());
            final String bound = ((AeronSubscriptionAdapter)udpSubscription).aeronSubscription()
                .localSocketAddresses().get(0);
            final String port = bound.substring(bound.lastIndexOf(':') + 1);
            assertFalse("0".equals(port), "an ephemeral port was bound: " + bound + " " + addresses);
            final Publication udpPublication = verbus.addPublication("aeron:udp?endpoint=localhost:" + port, 22);
            exchange(udpPublication, udpSubscription, 200);
            assertEquals(1, available.size());
            assertTrue(available.get(0).sourceIdentity().contains("127.0.0.1"), available.get(0).sourceIdentity());
        }
    }

    private static void roundTrip(
        final Verbus verbus, final String pubChannel, final String subChannel, final int stream)
    {
        final Subscription subscription = verbus.addSubscription(subChannel, stream);
        final ExclusivePublication publication = verbus.addExclusivePublication(pubChannel, stream);
        exchange(publication, subscription, 500);
        final BufferClaim claim = new BufferClaim();
        TestSupport.await("claimed", () -> publication.tryClaim(8, claim) > 0);
        claim.buffer().putLong(claim.offset(), 77L);
        claim.commit();
        final long[] value = {0};
        TestSupport.await("claim received", () -> value[0] == 77L,
            () -> subscription.poll((b, o, l, h) -> value[0] = b.getLong(o), 1));
        assertThrows(IllegalArgumentException.class, () -> publication.offer(new UnsafeBuffer(new byte[1]), 0, -1));
        publication.close();
        subscription.close();
    }

    private static void exchange(final Publication publication, final Subscription subscription, final int count)
    {
        TestSupport.await("connected", publication::isConnected);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
        final List<Integer> received = new ArrayList<>();
        int sent = 0;
        final long deadline = System.nanoTime() + 30_000_000_000L;
        while (received.size() < count && System.nanoTime() < deadline)
        {
            if (sent < count)
            {
                buffer.putInt(0, sent);
                if (publication.offer(buffer, 0, 64) > 0)
                {
                    sent++;
                }
            }
            if (0 == subscription.poll((b, o, l, h) -> received.add(b.getInt(o)), 10))
            {
                Thread.yield();
            }
        }
        assertEquals(count, received.size());
        for (int i = 0; i < count; i++)
        {
            assertEquals(i, received.get(i));
        }
        assertTrue(subscription.isConnected());
        assertEquals(1, subscription.imageCount());
        assertEquals(publication.position(), subscription.images().get(0).position());
    }
}
