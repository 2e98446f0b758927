package io.verbus;

import io.verbus.counters.CounterTypes;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ImageLifecycleTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldKeepAClosedPublicationsImageUntilDrainedThenMakeItUnavailableAndFreeItsCounters()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final List<Image> available = new CopyOnWriteArrayList<>();
            final List<Image> unavailable = new CopyOnWriteArrayList<>();
            final Subscription subscription = verbus.addSubscription("ipc", 61, available::add, unavailable::add);
            final Publication publication = verbus.addPublication("ipc", 61);
            TestSupport.await("connected", publication::isConnected);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
            for (int i = 0; i < 5; i++)
            {
                TestSupport.await("offer", () -> publication.offer(buffer, 0, 16) > 0);
            }
            final long countersWithPublication = counters(verbus);
            publication.close();

            TestSupport.sleep(50);
            assertTrue(unavailable.isEmpty(), "undrained: the image stays so no message is lost");
            final int[] received = {0};
            TestSupport.await("drained and unavailable", () -> unavailable.size() == 1,
                () -> received[0] += subscription.poll((b, o, l, h) -> {}, 10));
            assertEquals(5, received[0]);
            assertSame(available.get(0), unavailable.get(0));
            assertTrue(unavailable.get(0).isClosed());
            assertEquals(0, subscription.imageCount());
            assertFalse(subscription.isConnected());
            TestSupport.await("counters freed after linger", () -> counters(verbus) == countersWithPublication - 4);
        }
    }

    @Test
    void shouldJoinALateSubscriberAtTheCurrentPosition()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription early = verbus.addSubscription("ipc", 62);
            final Publication publication = verbus.addPublication("ipc", 62);
            TestSupport.await("connected", publication::isConnected);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
            TestSupport.await("offer", () -> publication.offer(buffer, 0, 16) > 0);
            final long position = publication.position();

            final Subscription late = verbus.addSubscription("ipc", 62);
            assertEquals(position, late.images().get(0).joinPosition());
            buffer.putInt(0, 99);
            TestSupport.await("offer", () -> publication.offer(buffer, 0, 16) > 0);
            final int[] value = {0};
            TestSupport.await("late receives only new", () -> value[0] == 99,
                () -> late.poll((b, o, l, h) -> value[0] = b.getInt(o), 10));
            assertEquals(2, early.poll((b, o, l, h) -> {}, 10));
        }
    }

    @Test
    void shouldCloseEverythingWithTheVerbusSoLaterCallsFailSafely()
    {
        final Verbus verbus = Verbus.launch(TestSupport.context(tempDir));
        final Subscription subscription = verbus.addSubscription("ipc", 63);
        final Publication publication = verbus.addPublication("ipc", 63);
        TestSupport.await("connected", publication::isConnected);
        verbus.close();
        verbus.close();

        assertTrue(verbus.isClosed());
        assertTrue(publication.isClosed());
        assertEquals(Publication.CLOSED, publication.offer(new UnsafeBuffer(new byte[8]), 0, 8));
        assertEquals(0, subscription.poll((b, o, l, h) -> {}, 10));
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> verbus.addPublication("ipc", 1));
        assertTrue(ex.getMessage().contains("closed"));
    }

    @Test
    void shouldRefuseAPublicationClearlyWhenTheCountersFileIsFullAndKeepTheOthersWorking()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).maxCounters(16)))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 64);
            final List<Publication> publications = new java.util.ArrayList<>();
            // Exclusive: each has a log and counters of its own (concurrent ones of a channel and stream share one).
            for (int i = 0; i < 3; i++)
            {
                publications.add(verbus.addExclusivePublication("ipc", 64));
            }
            final IllegalStateException ex =
                assertThrows(IllegalStateException.class, () -> verbus.addExclusivePublication("ipc", 64));
            assertTrue(ex.getMessage().contains("counters file full: 4 counters needed, 2 of 16 free"),
                ex.getMessage());
            assertEquals(3, subscription.imageCount(), "the refused publication left no image behind");

            final Publication publication = publications.get(0);
            TestSupport.await("connected", publication::isConnected);
            TestSupport.await("offer", () -> publication.offer(new UnsafeBuffer(new byte[8]), 0, 8) > 0);
            TestSupport.await("received", () -> subscription.poll((b, o, l, h) -> {}, 10) == 1);
        }
    }

    private static long counters(final Verbus verbus)
    {
        final long[] count = {0};
        verbus.countersReader().forEach((id, type, key, label) ->
        {
            if (CounterTypes.ERRORS_TYPE_ID != type)
            {
                count[0]++;
            }
        });
        return count[0];
    }
}
