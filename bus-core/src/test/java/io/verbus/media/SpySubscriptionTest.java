package io.verbus.media;

import io.verbus.ExclusivePublication;
import io.verbus.Image;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Aeron's spies ({@code aeron-spy:<media channel>}) on the loopback media: a subscription that reads this driver's
 * own media publication's log in place, is no subscriber to the media (the publication stays NOT_CONNECTED with
 * only spies, Aeron's default), and is never lapped by the publisher.
 */
class SpySubscriptionTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final int MESSAGE_LENGTH = 200;

    @TempDir
    Path tempDir;

    /** Checks that each message carries the next sequence number. */
    private static final class SequenceChecker
    {
        long next;
        String failure;

        void onMessage(final org.agrona.DirectBuffer buffer, final int offset, final int length)
        {
            final long sequence = buffer.getLong(offset);
            if (null == failure && (sequence != next || length != MESSAGE_LENGTH))
            {
                failure = "got " + sequence + " (" + length + " bytes), expected " + next;
            }
            next++;
        }
    }

    @Test
    void shouldReadTheMediaPublicationsLogWithoutConnectingIt()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final List<Image> available = new CopyOnWriteArrayList<>();
            final ExclusivePublication publication =
                verbus.addExclusivePublication("loop:name=spy1|term-length=64k", 41);
            final Subscription spy = verbus.addSubscription("aeron-spy:loop:name=spy1", 41, available::add, (i) -> {});
            assertEquals(1, spy.imageCount());
            assertEquals("spy", available.get(0).sourceIdentity());
            assertEquals(publication.sessionId(), available.get(0).sessionId());
            TestSupport.sleep(50);
            assertFalse(publication.isConnected(), "a spy does not connect a media publication");
            assertEquals(Publication.NOT_CONNECTED, publication.offer(new UnsafeBuffer(new byte[8]), 0, 8));

            final Subscription subscription = verbus.addSubscription("loop:name=spy1", 41);
            TestSupport.await("connected", publication::isConnected);
            final SequenceChecker spyChecker = new SequenceChecker();
            final SequenceChecker subChecker = new SequenceChecker();
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MESSAGE_LENGTH]);
            final int count = 3_000; // about 10 terms of 64 KB
            long sent = 0;
            final long deadlineNs = System.nanoTime() + 30_000_000_000L;
            while ((spyChecker.next < count || subChecker.next < count) && System.nanoTime() < deadlineNs)
            {
                buffer.putLong(0, sent);
                if (sent < count && publication.offer(buffer, 0, MESSAGE_LENGTH) > 0)
                {
                    sent++;
                }
                spy.poll((b, o, l, h) -> spyChecker.onMessage(b, o, l), 10);
                subscription.poll((b, o, l, h) -> subChecker.onMessage(b, o, l), 10);
            }
            assertNull(spyChecker.failure);
            assertNull(subChecker.failure);
            assertEquals(count, spyChecker.next);
            assertEquals(count, subChecker.next);

            publication.close();
            TestSupport.await("the spy's image at end of stream", () -> spy.imageCount() == 0 ||
                spy.imageAtIndex(0).isEndOfStream(), () -> spy.poll((b, o, l, h) -> {}, 10));
        }
    }

    @Test
    void shouldHoldThePublisherBackRatherThanLapASpyThatStopsReading()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final ExclusivePublication publication =
                verbus.addExclusivePublication("loop:name=spy2|term-length=64k", 42);
            final Subscription subscription = verbus.addSubscription("loop:name=spy2", 42);
            final Subscription spy = verbus.addSubscription("aeron-spy:loop:name=spy2", 42);
            TestSupport.await("connected", publication::isConnected);

            // The subscriber keeps up; the spy reads nothing: the publisher must stop within about a window of it.
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MESSAGE_LENGTH]);
            final SequenceChecker subChecker = new SequenceChecker();
            long sent = 0;
            long backPressured = 0;
            final int maxSent = 10 * TERM_LENGTH / MESSAGE_LENGTH;
            for (int i = 0; i < 200_000 && backPressured < 2_000 && sent < maxSent; i++)
            {
                buffer.putLong(0, sent);
                final long result = publication.offer(buffer, 0, MESSAGE_LENGTH);
                if (result > 0)
                {
                    sent++;
                }
                else if (Publication.BACK_PRESSURED == result)
                {
                    backPressured++;
                    TestSupport.sleep(0);
                }
                subscription.poll((b, o, l, h) -> subChecker.onMessage(b, o, l), 10);
            }
            final long spyPosition = spy.imageAtIndex(0).position();
            assertTrue(backPressured >= 2_000, "the publisher was not held back by the spy: sent " + sent);
            assertTrue(publication.position() - spyPosition <= 2L * TERM_LENGTH,
                "the publisher ran " + (publication.position() - spyPosition) + " bytes ahead of the spy");

            // The spy then reads everything, none of it overwritten, and the publisher moves on.
            final SequenceChecker spyChecker = new SequenceChecker();
            final long target = sent + 1_000;
            final long deadlineNs = System.nanoTime() + 30_000_000_000L;
            while ((spyChecker.next < target || subChecker.next < target) && System.nanoTime() < deadlineNs)
            {
                buffer.putLong(0, sent);
                if (sent < target && publication.offer(buffer, 0, MESSAGE_LENGTH) > 0)
                {
                    sent++;
                }
                spy.poll((b, o, l, h) -> spyChecker.onMessage(b, o, l), 10);
                subscription.poll((b, o, l, h) -> subChecker.onMessage(b, o, l), 10);
            }
            assertNull(spyChecker.failure);
            assertNull(subChecker.failure);
            assertEquals(target, spyChecker.next);
        }
    }

    @Test
    void shouldMatchPublicationsByTheSpysKeysAndSession()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription early = verbus.addSubscription("aeron-spy:loop:name=spy3", 43);
            final Subscription other = verbus.addSubscription("aeron-spy:loop:name=elsewhere", 43);
            final Subscription otherStream = verbus.addSubscription("aeron-spy:loop:name=spy3", 44);
            final Publication one = verbus.addPublication("loop:name=spy3|term-length=64k", 43);
            // Exclusive: a log of its own (a second concurrent publication would share the first's).
            final Publication two = verbus.addExclusivePublication("loop:name=spy3|term-length=64k", 43);
            assertEquals(2, early.imageCount(), "a spy added before the publications sees them come");
            assertEquals(0, other.imageCount());
            assertEquals(0, otherStream.imageCount());
            final Subscription session = verbus.addSubscription(
                "aeron-spy:loop:name=spy3|session-id=" + two.sessionId(), 43);
            assertEquals(1, session.imageCount());
            assertEquals(two.sessionId(), session.imageAtIndex(0).sessionId());
            assertEquals(one.streamId(), early.imageAtIndex(0).streamId());

            final IllegalArgumentException ipc = assertThrows(IllegalArgumentException.class,
                () -> verbus.addSubscription("aeron-spy:ipc", 43));
            assertTrue(ipc.getMessage().contains("media channels"), ipc.getMessage());
            final IllegalArgumentException publication = assertThrows(IllegalArgumentException.class,
                () -> verbus.addPublication("aeron-spy:loop:name=spy3", 43));
            assertTrue(publication.getMessage().contains("subscriptions only"), publication.getMessage());
            assertThrows(IllegalArgumentException.class, () -> verbus.addSubscription("aeron-spy:nosuch:x=1", 43));
            assertThrows(IllegalArgumentException.class,
                () -> verbus.addSubscription("aeron-spy:aeron-spy:loop:name=spy3", 43));
        }
    }
}
