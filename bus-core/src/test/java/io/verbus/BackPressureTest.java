package io.verbus;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.counters.CounterTypes;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BackPressureTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldBackPressureAtSlowestSubscriberPlusWindowAndResumeWhenItConsumes()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription fast = verbus.addSubscription("ipc", 3);
            final Subscription slow = verbus.addSubscription("ipc", 3);
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc:term-length=64k|window=8k", 3);
            TestSupport.await("connected", publication::isConnected);
            assertEquals(8 * 1024, publication.positionLimit());

            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[96]);
            long result;
            int accepted = 0;
            while ((result = publication.offer(buffer, 0, 96)) > 0)
            {
                accepted++;
                fast.poll((b, o, l, h) -> {}, 100);
            }
            assertEquals(Publication.BACK_PRESSURED, result);
            assertEquals(8 * 1024 / 128, accepted, "exactly the window is accepted");
            assertEquals(8 * 1024, publication.position());
            assertEquals(Publication.BACK_PRESSURED, publication.tryClaim(10, new BufferClaim()));
            assertTrue(backPressureEvents(verbus) >= 2);

            final long slowPosition = 40 * 128;
            slow.poll((b, o, l, h) -> {}, 40);
            assertEquals(slowPosition, slow.images().get(0).position());
            TestSupport.await("limit raised", () -> publication.positionLimit() == slowPosition + 8 * 1024);
            assertTrue(publication.offer(buffer, 0, 96) > 0, "offers resume once the slowest subscriber consumes");
        }
    }

    private static long backPressureEvents(final Verbus verbus)
    {
        final long[] total = {0};
        verbus.countersReader().forEach((id, typeId, key, label) ->
        {
            if (CounterTypes.BACK_PRESSURE_EVENTS_TYPE_ID == typeId)
            {
                total[0] += verbus.countersReader().getCounterValue(id);
            }
        });
        return total[0];
    }

    @Test
    void shouldDisconnectWhenTheLastSubscriberLeavesAndReturnNotConnected()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 4);
            final Publication publication = verbus.addPublication("ipc", 4);
            TestSupport.await("connected", publication::isConnected);
            subscription.close();
            TestSupport.await("disconnected", () -> !publication.isConnected());
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
            long result = 0;
            for (int i = 0; i < 100_000 && result >= 0; i++)
            {
                result = publication.offer(buffer, 0, 8);
            }
            assertEquals(Publication.NOT_CONNECTED, result);
        }
    }
}
