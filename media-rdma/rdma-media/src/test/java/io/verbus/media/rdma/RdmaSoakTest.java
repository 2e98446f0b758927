package io.verbus.media.rdma;

import io.verbus.fabric.FaultInjection;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Ten million sequence-numbered, checksummed messages of mixed sizes (16..1376 bytes) through fan-out to three
 * subscribers over the shm provider, with every WRITE's bytes placed in shuffled order: nothing lost,
 * duplicated, reordered or corrupt. Batching (many messages per post, every 16th WR signaled) keeps it fast.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RdmaSoakTest
{
    static final long MESSAGES = 10_000_000L;
    static final int SUBSCRIBERS = 3;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void shouldDeliverTenMillionMessagesToThreeSubscribersUnderByteReordering()
    {
        final FaultInjection faults = new FaultInjection().writePlacement(FaultInjection.WritePlacement.SHUFFLED);
        try (RdmaRig rig = new RdmaRig(dir, "shm", 1024 * 1024, faults))
        {
            final TestImageSink.TestImage[] images = new TestImageSink.TestImage[SUBSCRIBERS];
            final MessageStream.Checker[] checkers = new MessageStream.Checker[SUBSCRIBERS];
            for (int i = 0; i < SUBSCRIBERS; i++)
            {
                rig.addSubscriber(new FaultInjection().writePlacement(FaultInjection.WritePlacement.SHUFFLED),
                    RdmaRig.SECRET);
                checkers[i] = new MessageStream.Checker(0);
            }
            rig.awaitCondition("subscribers admitted", 30_000, () -> rig.sender.subscriberCount() == SUBSCRIBERS &&
                rig.subscribers.stream().allMatch(s -> s.image() != null) && rig.log.isConnected());
            for (int i = 0; i < SUBSCRIBERS; i++)
            {
                images[i] = rig.subscribers.get(i).image();
            }

            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final long startNs = System.nanoTime();
            final long deadlineNs = startNs + TimeUnit.SECONDS.toNanos(280);
            long sequence = 0;
            long bytes = 0;
            int length = MessageStream.encode(message, 0);
            while (minReceived(checkers) < MESSAGES)
            {
                int work = 0;
                for (int burst = 0; burst < 4096 && sequence < MESSAGES; burst++)
                {
                    if (rig.appender.offer(message, 0, length) < 0)
                    {
                        break;
                    }
                    bytes += length;
                    work++;
                    if (++sequence < MESSAGES)
                    {
                        length = MessageStream.encode(message, sequence);
                    }
                }
                work += rig.dutyCycle();
                for (int i = 0; i < SUBSCRIBERS; i++)
                {
                    work += images[i].poll(checkers[i], 8192);
                    if (null != checkers[i].failure || null != images[i].error)
                    {
                        throw new AssertionError("subscriber " + i + ": " + checkers[i].failure + " / " +
                            images[i].error);
                    }
                }
                if (0 == work)
                {
                    if (System.nanoTime() > deadlineNs)
                    {
                        throw new AssertionError("soak stalled at sequence " + sequence + ", received " +
                            minReceived(checkers));
                    }
                    RdmaRig.sleepMicros(50);
                }
            }
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);

            for (int i = 0; i < SUBSCRIBERS; i++)
            {
                assertNull(checkers[i].failure);
                assertEquals(MESSAGES, checkers[i].received, "subscriber " + i);
                assertTrue(!images[i].closed, "no image went unavailable");
            }
            assertEquals(SUBSCRIBERS, rig.sender.subscriberCount(), "no subscriber was dropped");
            assertTrue(rig.support.errors.isEmpty(), rig.support.errors.toString());
            System.out.printf("rdma soak: %,d messages (%,d payload bytes) x %d subscribers over %s with shuffled " +
                "WRITE placement in %,d ms (%,.0f msgs/s per subscriber)%n", MESSAGES, bytes, SUBSCRIBERS,
                rig.sender.providerName(), elapsedMs, MESSAGES * 1000.0 / Math.max(1, elapsedMs));
        }
    }

    private static long minReceived(final MessageStream.Checker[] checkers)
    {
        long min = Long.MAX_VALUE;
        for (final MessageStream.Checker checker : checkers)
        {
            min = Math.min(min, checker.received);
        }
        return min;
    }
}
