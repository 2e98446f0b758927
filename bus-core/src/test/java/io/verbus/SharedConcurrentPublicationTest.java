package io.verbus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.verbus.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * As in Aeron, the concurrent publications of one channel and stream share one log: one session, one image at each
 * subscriber, one order for every writer's messages; the log closes with the last of them. Exclusive publications,
 * other channels and other named sessions get logs of their own. Embedded and through a standalone driver.
 */
class SharedConcurrentPublicationTest
{
    private static final int STREAM_ID = 1701;
    private static final int MESSAGES = 1_000;

    @TempDir
    Path tempDir;

    @Test
    void shouldShareOneLogBetweenTheConcurrentPublicationsOfAChannelAndStream()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).idleStrategy("backoff")))
        {
            final Subscription subscription = verbus.addSubscription("ipc", STREAM_ID);
            final Publication first = verbus.addPublication("ipc:term-length=64k|mtu=1024", STREAM_ID);
            final Publication second = verbus.addPublication("ipc:mtu=1024|term-length=64k", STREAM_ID);
            assertEquals(first.sessionId(), second.sessionId(), "one session");
            assertNotEquals(first.registrationId(), second.registrationId(), "each its own registration");
            assertEquals(first.registrationId(), second.originalRegistrationId(), "the log's is the first's");
            assertEquals(first.registrationId(), first.originalRegistrationId());
            await("connected", () -> first.isConnected() && second.isConnected());
            assertEquals(1, subscription.imageCount(), "one image");

            exchangeInOrder(first, second, subscription);

            // The log outlives the first to close, and closes with the last.
            first.close();
            assertTrue(first.isClosed());
            assertFalse(second.isClosed());
            assertDelivers(second, subscription, 42);
            assertEquals(1, subscription.imageCount());
            second.close();
            await("the image goes with the last publication", () ->
            {
                subscription.poll((b, o, l, h) -> {}, 10);
                return 0 == subscription.imageCount();
            });

            // A new concurrent publication after that makes a new log.
            final Publication third = verbus.addPublication("ipc:term-length=64k|mtu=1024", STREAM_ID);
            assertNotEquals(first.sessionId(), third.sessionId());
        }
    }

    @Test
    void shouldGiveExclusivePublicationsOtherChannelsAndOtherSessionsLogsOfTheirOwn()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).idleStrategy("backoff")))
        {
            final Publication concurrent = verbus.addPublication("ipc:term-length=64k", STREAM_ID);
            final Publication exclusive = verbus.addExclusivePublication("ipc:term-length=64k", STREAM_ID);
            final Publication exclusiveToo = verbus.addExclusivePublication("ipc:term-length=64k", STREAM_ID);
            final Publication otherTerm = verbus.addPublication("ipc:term-length=128k", STREAM_ID);
            final Publication otherStream = verbus.addPublication("ipc:term-length=64k", STREAM_ID + 1);
            final Publication namedSession = verbus.addPublication("ipc:term-length=64k|session-id=77", STREAM_ID);
            final Publication sameNamedSession =
                verbus.addPublication("ipc:term-length=64k|session-id=77", STREAM_ID);
            final List<Integer> sessions = List.of(concurrent.sessionId(), exclusive.sessionId(),
                exclusiveToo.sessionId(), otherTerm.sessionId(), namedSession.sessionId());
            assertEquals(sessions.size(), sessions.stream().distinct().count(), sessions.toString());
            assertEquals(77, sameNamedSession.sessionId(), "the same named session shares its log");
            assertNotEquals(concurrent.registrationId(), otherStream.registrationId());
        }
    }

    @Test
    void shouldShareOneDriverLogBetweenTheConcurrentPublicationsOfTwoClients()
    {
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus subscriberClient = Verbus.connect(clientContext());
            Verbus firstClient = Verbus.connect(clientContext());
            Verbus secondClient = Verbus.connect(clientContext()))
        {
            final Subscription subscription = subscriberClient.addSubscription("ipc", STREAM_ID);
            final Publication first = firstClient.addPublication("ipc", STREAM_ID);
            final Publication second = secondClient.addPublication("ipc", STREAM_ID);
            assertEquals(first.sessionId(), second.sessionId(), "one session across clients");
            assertNotEquals(first.registrationId(), second.registrationId());
            assertEquals(first.originalRegistrationId(), second.originalRegistrationId());
            await("connected", () -> first.isConnected() && second.isConnected() && 1 == subscription.imageCount());

            exchangeInOrder(first, second, subscription);

            firstClient.close(); // its publication goes with it; the log stays for the second
            assertDelivers(second, subscription, 43);
            assertEquals(1, subscription.imageCount());
        }
    }

    private Verbus.Context clientContext()
    {
        return new Verbus.Context().dir(tempDir.resolve("verbus").toString()).driverTimeoutMs(2_000);
    }

    /** The publication left open still offers, and the subscriber gets its message on the same image. */
    private static void assertDelivers(final Publication publication, final Subscription subscription, final long value)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
        buffer.putLong(0, value);
        await("offered by the publication left", () -> publication.offer(buffer, 0, 8) > 0);
        final long[] received = {0};
        await("delivered from the publication left", () ->
        {
            subscription.poll((b, o, l, h) -> received[0] = b.getLong(o), 10);
            return value == received[0];
        });
    }

    /** Alternate offers from one thread: the subscriber gets them in exactly that order, from one image. */
    private static void exchangeInOrder(
        final Publication first, final Publication second, final Subscription subscription)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
        final List<Long> received = new ArrayList<>();
        for (long sequence = 0; sequence < 2 * MESSAGES; sequence++)
        {
            buffer.putLong(0, sequence);
            final Publication publication = 0 == (sequence & 1) ? first : second;
            await("offer", () ->
            {
                subscription.poll((b, o, l, h) -> received.add(b.getLong(o)), 100);
                return publication.offer(buffer, 0, 8) > 0;
            });
        }
        await("every message", () ->
        {
            subscription.poll((b, o, l, h) -> received.add(b.getLong(o)), 100);
            return received.size() >= 2 * MESSAGES;
        });
        for (int i = 0; i < received.size(); i++)
        {
            assertEquals(i, received.get(i).longValue(), "message " + i + " in the order offered");
        }
    }
}
