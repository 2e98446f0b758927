package io.verbus.media;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.ExclusivePublication;
import io.verbus.Image;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.counters.CounterTypes;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The Media SPI end to end with a loopback media found by ServiceLoader: senders and receivers run on the driver's
 * agents, images are bounded by the media's counter, flow control comes back through the subscriber position.
 */
class MediaSpiTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldCarryMessagesThroughAMediaFoundByServiceLoaderWithBoundedImages()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final List<Image> available = new CopyOnWriteArrayList<>();
            final List<Image> unavailable = new CopyOnWriteArrayList<>();
            final Publication publication = verbus.addPublication("loop:name=spi1|term-length=64k", 31);
            TestSupport.sleep(50);
            assertFalse(publication.isConnected(), "a media publication is NOT_CONNECTED until admitted");
            assertEquals(0, publication.positionLimit());
            assertEquals(Publication.NOT_CONNECTED, publication.offer(new UnsafeBuffer(new byte[8]), 0, 8));
            final Subscription subscription =
                verbus.addSubscription("loop:name=spi1", 31, available::add, unavailable::add);

            TestSupport.await("connected", publication::isConnected);
            assertEquals(1, available.size());
            assertEquals("loop:spi1/31", available.get(0).sourceIdentity());

            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[200]);
            final List<Integer> received = new ArrayList<>();
            int sent = 0;
            final int count = 3000;
            final long deadline = System.nanoTime() + 30_000_000_000L;
            while (received.size() < count && System.nanoTime() < deadline)
            {
                if (sent < count)
                {
                    buffer.putInt(0, sent);
                    if (publication.offer(buffer, 0, 200) > 0)
                    {
                        sent++;
                    }
                }
                if (0 == subscription.poll((b, o, l, h) -> received.add(b.getInt(o)), 20))
                {
                    Thread.yield();
                }
            }
            assertEquals(count, received.size());
            for (int i = 0; i < count; i++)
            {
                assertEquals(i, received.get(i));
            }
            assertTrue(publication.position() > 3 * 64 * 1024, "crossed term rotations");

            // A corrupt frame from the "remote" makes the image unavailable, counted as an error, no crash.
            final long errorsBefore = errors(verbus);
            final long position = subscription.images().get(0).position();
            LoopbackMediaFactory.corrupt("spi1/31", position, -1);
            TestSupport.await("unavailable", () -> unavailable.size() == 1,
                () -> subscription.poll((b, o, l, h) -> {}, 10));
            assertSame(available.get(0), unavailable.get(0));
            assertEquals(0, subscription.imageCount());
            assertEquals(errorsBefore + 1, errors(verbus));
        }
    }

    @Test
    void shouldSendInThePublishingThreadInDirectModeForExclusivePublications()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription subscription = verbus.addSubscription("loop:name=spi2", 32);
            final ExclusivePublication publication = verbus.addExclusivePublication("loop:name=spi2|direct=true", 32);
            TestSupport.await("connected", publication::isConnected, publication::flush);

            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
            TestSupport.await("offered", () -> publication.offer(buffer, 0, 16) > 0, publication::flush);
            final LoopbackMediaFactory.Connection connection = LoopbackMediaFactory.CONNECTIONS.get("spi2/32");
            final int[] received = {0};
            TestSupport.await("received", () -> received[0] == 1,
                () -> received[0] += subscription.poll((b, o, l, h) -> {}, 10));
            assertEquals(publication.position(), connection.bound.getLongVolatile(0),
                "the offer itself sent the data");
        }
    }

    @Test
    void shouldSendAClaimInDirectModeFromItsCommitOrAbortAndSignalOnlyThePublicationThatClaimedIt()
    {
        // Invoker mode: no agent thread, so the writer always holds the sender and the check below is exact.
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).threadingMode(ThreadingMode.INVOKER)))
        {
            final Subscription subscriptionA = verbus.addSubscription("loop:name=spi3", 33);
            final Subscription subscriptionB = verbus.addSubscription("loop:name=spi4", 34);
            final ExclusivePublication a = verbus.addExclusivePublication("loop:name=spi3|direct=true", 33);
            final ExclusivePublication b = verbus.addExclusivePublication("loop:name=spi4|direct=true", 34);
            TestSupport.await("connected", () -> a.isConnected() && b.isConnected(), verbus::invoke);
            final LoopbackMediaFactory.Connection toA = LoopbackMediaFactory.CONNECTIONS.get("spi3/33");
            final LoopbackMediaFactory.Connection toB = LoopbackMediaFactory.CONNECTIONS.get("spi4/34");
            final BufferClaim claim = new BufferClaim();

            for (int i = 0; i < 3; i++)
            {
                final ExclusivePublication publication = 0 == i % 2 ? a : b;
                final LoopbackMediaFactory.Connection connection = 0 == i % 2 ? toA : toB;
                final long sentBefore = connection.bound.getLongVolatile(0);
                assertTrue(publication.tryClaim(24, claim) > 0);
                claim.buffer().putLong(claim.offset(), i);
                assertEquals(sentBefore, connection.bound.getLongVolatile(0), "nothing to send before the commit");
                claim.commit();
                assertEquals(publication.position(), connection.bound.getLongVolatile(0),
                    "the commit itself sent the claim (claim " + i + ")");
            }

            assertTrue(a.tryClaim(40, claim) > 0);
            claim.abort();
            assertEquals(a.position(), toA.bound.getLongVolatile(0), "the abort sent the padding that replaces it");

            final long[] received = new long[2];
            TestSupport.await("received", () -> received[0] == 2 && received[1] == 1, () ->
            {
                verbus.invoke();
                received[0] += subscriptionA.poll((buffer, offset, length, header) -> {}, 10);
                received[1] += subscriptionB.poll((buffer, offset, length, header) -> {}, 10);
            });
        }
    }

    @Test
    void shouldRejectKeysTheMediaDoesNotSupportNamingThem()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> verbus.addPublication("loop:name=x|colour=red", 1));
            assertTrue(ex.getMessage().contains("unknown key 'colour'"), ex.getMessage());
            assertTrue(
                ex.getMessage().contains("[direct, mtu, name, session-id, term-length, window]"), ex.getMessage());
        }
    }

    private static long errors(final Verbus verbus)
    {
        final long[] total = {0};
        verbus.countersReader().forEach((id, typeId, key, label) ->
        {
            if (CounterTypes.ERRORS_TYPE_ID == typeId)
            {
                total[0] += verbus.countersReader().getCounterValue(id);
            }
        });
        return total[0];
    }
}
