package io.verbus.media.rdma;

import io.verbus.ExclusivePublication;
import io.verbus.MediaDriver;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Aeron's spies on {@code rdma:} publications ({@code aeron-spy:rdma:...}, provider shm): the spy reads the
 * publication's local log in place, every message checked, while the rdma subscriber gets the same stream and the
 * publication still counts one rdma subscriber; in an embedded Verbus, and for a client of the standalone driver.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@ExtendWith(RdmaTestProperties.class)
class RdmaSpyTest
{
    private static final int MESSAGES = 20_000; // about 50 terms of 64 KB

    @TempDir
    Path dir;

    @Test
    void shouldSpyOnAnRdmaPublicationInAnEmbeddedVerbus()
    {
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED).idleStrategy("sleeping")))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", 6001);
            final int port = RdmaVerbusTest.controlPort(verbus.countersReader());
            final Subscription subscription =
                verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 6001);
            final Subscription spy = verbus.addSubscription("aeron-spy:rdma:endpoint=127.0.0.1:0", 6001);
            exchange(publication, subscription, spy, verbus.countersReader());
        }
    }

    @Test
    void shouldServeAClientsSpyOnAnotherClientsRdmaPublication()
    {
        final String driverDir = dir.resolve("driver").toString();
        try (MediaDriver ignored = MediaDriver.launch(new Verbus.Context().dir(driverDir)
                .threadingMode(ThreadingMode.SHARED).idleStrategy("sleeping"));
            Verbus publisher = Verbus.connect(new Verbus.Context().dir(driverDir));
            Verbus subscriber = Verbus.connect(new Verbus.Context().dir(driverDir));
            Verbus spying = Verbus.connect(new Verbus.Context().dir(driverDir)))
        {
            final ExclusivePublication publication = publisher.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", 6002);
            final int port = RdmaVerbusTest.controlPort(publisher.countersReader());
            final Subscription subscription =
                subscriber.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 6002);
            final Subscription spy = spying.addSubscription("aeron-spy:rdma:provider=shm", 6002);
            exchange(publication, subscription, spy, publisher.countersReader());
        }
    }

    private static void exchange(
        final ExclusivePublication publication,
        final Subscription subscription,
        final Subscription spy,
        final CountersReader counters)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!(publication.isConnected() && 1 == subscription.imageCount() && 1 == spy.imageCount()))
        {
            assertTrue(System.nanoTime() < deadlineNs, "not connected: " + publication.isConnected() + " " +
                subscription.imageCount() + " " + spy.imageCount());
            RdmaRig.sleepMicros(1000);
        }
        assertEquals("spy", spy.imageAtIndex(0).sourceIdentity());

        final MessageStream.Checker subChecker = new MessageStream.Checker(0);
        final MessageStream.Checker spyChecker = new MessageStream.Checker(0);
        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_LENGTH);
        for (long sequence = 0; sequence < MESSAGES; sequence++)
        {
            final int length = MessageStream.encode(message, sequence);
            while (publication.offer(message, 0, length) < 0)
            {
                subscription.poll((b, o, l, h) -> subChecker.onMessage(b, o, l), 100);
                spy.poll((b, o, l, h) -> spyChecker.onMessage(b, o, l), 100);
                assertTrue(System.nanoTime() < deadlineNs, "stuck at " + sequence);
            }
        }
        while (subChecker.received < MESSAGES || spyChecker.received < MESSAGES)
        {
            subscription.poll((b, o, l, h) -> subChecker.onMessage(b, o, l), 100);
            spy.poll((b, o, l, h) -> spyChecker.onMessage(b, o, l), 100);
            assertTrue(System.nanoTime() < deadlineNs,
                "received " + subChecker.received + " and " + spyChecker.received);
        }
        assertNull(subChecker.failure);
        assertNull(spyChecker.failure);
        assertEquals(1, RdmaDriverChild.rdmaSubscribers(counters), "the spy is no rdma subscriber");
    }
}
