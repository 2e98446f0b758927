package io.verbus.media.rdma;

import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The max and tagged strategies: who sets the pace, and what happens to a subscriber left behind; and the cap every
 * strategy obeys, the part of the log the conductor has cleaned.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaFlowControlTest
{
    @TempDir
    Path dir;

    private final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);

    /** Publish while polling only the given images; returns messages published. */
    private long publishPolling(final RdmaRig rig, final long count, final TestImageSink.TestImage[] polled,
        final MessageStream.Checker[] checkers)
    {
        long sequence = 0;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sequence < count)
        {
            if (System.nanoTime() > deadlineNs)
            {
                final StringBuilder images = new StringBuilder();
                for (final TestImageSink.TestImage image : polled)
                {
                    images.append(" [image ").append(image.position).append('/').append(image.refreshBound())
                        .append(image.closed ? " closed" : "").append(']');
                }
                throw new AssertionError("stuck at " + sequence + ", limit " + rig.log.publisherLimit().get() +
                    ", position " + rig.appender.position() + ", clean " + rig.log.cleanPosition() + ", connected " +
                    rig.log.isConnected() + ", subscribers " + rig.sender.subscriberCount() + images);
            }
            int work = 0;
            final int length = MessageStream.encode(message, sequence);
            if (rig.appender.offer(message, 0, length) > 0)
            {
                sequence++;
                work++;
            }
            work += rig.dutyCycle();
            for (int i = 0; i < polled.length; i++)
            {
                work += polled[i].poll(checkers[i], 256);
            }
            if (0 == work)
            {
                RdmaRig.sleepMicros(100);
            }
        }
        return sequence;
    }

    @Test
    void shouldLetTheFastestSetThePaceUnderMaxAndDisconnectASubscriberBeforeOverwritingIt()
    {
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "fc", "max", "window", "16k"))
        {
            final RdmaRig.Subscriber fast = rig.addSubscriber();
            final RdmaRig.Subscriber stalled = rig.addSubscriber();
            rig.awaitCondition("both admitted", 20_000, () -> rig.sender.subscriberCount() == 2 &&
                fast.image() != null && stalled.image() != null && rig.log.isConnected());
            final TestImageSink.TestImage stalledImage = stalled.image();
            final MessageStream.Checker fastChecker = new MessageStream.Checker(0);

            // Far more than a term passes while the stalled subscriber reads nothing.
            final long published = publishPolling(rig, 5_000, new TestImageSink.TestImage[]{ fast.image() },
                new MessageStream.Checker[]{ fastChecker });
            assertTrue(rig.appender.position() > 3L * 64 * 1024, "the publisher ran past the stalled subscriber");
            rig.awaitCondition("stalled subscriber disconnected", 10_000, () -> stalledImage.closed);
            rig.awaitCondition("fast subscriber complete", 10_000, () ->
            {
                rig.dutyCycle();
                fast.image().poll(fastChecker, 256);
                return fastChecker.received == published;
            });
            assertNull(fastChecker.failure);
            assertTrue(stalledImage.refreshBound() - stalledImage.position <= 64 * 1024,
                "the stalled image was never given more than a term beyond what it consumed");
        }
    }

    @Test
    void shouldPaceByTheTaggedGroupAndDropUntaggedLaggards()
    {
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "fc", "tagged", "gtag", "5", "window", "16k"))
        {
            final RdmaRig.Subscriber tagged = rig.addSubscriber("gtag", "5");
            final RdmaRig.Subscriber untagged = rig.addSubscriber();
            rig.awaitCondition("both admitted", 20_000, () -> rig.sender.subscriberCount() == 2 &&
                tagged.image() != null && untagged.image() != null && rig.log.isConnected());
            final TestImageSink.TestImage untaggedImage = untagged.image();
            final MessageStream.Checker taggedChecker = new MessageStream.Checker(0);

            final long published = publishPolling(rig, 5_000, new TestImageSink.TestImage[]{ tagged.image() },
                new MessageStream.Checker[]{ taggedChecker });
            rig.awaitCondition("untagged laggard disconnected", 10_000, () -> untaggedImage.closed);
            rig.awaitCondition("tagged subscriber complete", 10_000, () ->
            {
                rig.dutyCycle();
                tagged.image().poll(taggedChecker, 256);
                return taggedChecker.received == published;
            });
            assertNull(taggedChecker.failure);

            // Now the tagged subscriber stalls: the publisher is held at its position plus the window.
            final TestImageSink.TestImage taggedImage = tagged.image();
            final long stalledAt = taggedImage.position;
            long sequence = published;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (System.nanoTime() < deadlineNs)
            {
                final int length = MessageStream.encode(message, sequence);
                if (rig.appender.offer(message, 0, length) > 0)
                {
                    sequence++;
                }
                else if (0 == rig.dutyCycle())
                {
                    RdmaRig.sleepMicros(500);
                }
            }
            assertTrue(rig.appender.position() <= stalledAt + 16 * 1024,
                "limit follows the tagged group: " + rig.appender.position() + " vs " + stalledAt);
            assertTrue(!taggedImage.closed && tagged.image() == taggedImage,
                "a tagged subscriber is never dropped for being slow");
        }
    }

    @Test
    void shouldNeverRaiseTheLimitPastTheLogTheConductorHasCleaned()
    {
        final int termLength = 64 * 1024;
        try (RdmaRig rig = new RdmaRig(dir, "shm", termLength, null))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            rig.awaitCondition("admitted", 20_000, () -> subscriber.image() != null && rig.log.isConnected());
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final TestImageSink.TestImage image = subscriber.image();

            // The conductor falls behind: nothing is cleaned past position 0, so the log is zero only below 3 terms.
            rig.appender.stopCleaning();
            long sequence = 0;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            long idleCycles = 0;
            while (idleCycles < 200 && System.nanoTime() < deadlineNs)
            {
                final int length = MessageStream.encode(message, sequence);
                int work = 0;
                if (rig.appender.offer(message, 0, length) > 0)
                {
                    sequence++;
                    work++;
                }
                work += rig.dutyCycle();
                work += image.poll(checker, 256);
                idleCycles = 0 == work ? idleCycles + 1 : 0;
            }
            assertNull(checker.failure);
            assertEquals(sequence, checker.received, "the subscriber consumed everything published");
            assertEquals(rig.appender.position(), image.position);
            // Consumed + window would let the publisher on; the clean position holds it at two terms past it.
            assertEquals(2L * termLength, rig.log.publisherLimit().get(), "limit capped by the clean position");
            assertTrue(rig.appender.position() <= 2L * termLength, "nothing written into the uncleaned partition");

            // The conductor catches up: the limit moves on, to consumed + window (the last of the consumption is
            // reported within the receiver's status interval) and never past three terms.
            rig.log.cleanPosition(termLength);
            final long expectedLimit = Math.min(image.position + termLength / 2, 3L * termLength);
            rig.awaitCondition("the limit at " + expectedLimit, 10_000,
                () -> rig.log.publisherLimit().get() == expectedLimit);
        }
    }
}
