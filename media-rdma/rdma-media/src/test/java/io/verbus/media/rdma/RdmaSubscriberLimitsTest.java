package io.verbus.media.rdma;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A subscription caps what an authenticated publisher can make it allocate: a term length above the cap is
 * rejected in the handshake with a clear reason before anything is allocated, and a reconnect that would take the
 * ring memory past its cap waits for the lingering ring instead of allocating another. A lingering ring outlives a
 * switch of the publisher's provider, and a handshake that fails after the image was built gives its counters back.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaSubscriberLimitsTest
{
    @TempDir
    Path dir;

    private RdmaRig rig;

    @AfterEach
    void after()
    {
        System.clearProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME);
        System.clearProperty(SubscriberLimits.MAX_RING_MEMORY_PROP_NAME);
        if (null != rig)
        {
            rig.close();
        }
    }

    @Test
    void shouldRejectATermLengthAboveTheCapBeforeAllocatingAnything()
    {
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        try (RdmaBadEnvironmentTest.LogCapture ignored = new RdmaBadEnvironmentTest.LogCapture(records))
        {
            rig = new RdmaRig(dir, "shm", 256 * 1024, null, "heartbeat", "20ms", "timeout", "1s");
            System.setProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME, "128k");
            final RdmaRig.Subscriber capped = rig.addSubscriber();
            rig.awaitCondition("rejected by the subscriber", 20_000,
                () -> capped.receiver.rejectedHandshakes() >= 1 && rig.sender.rejectedHandshakes() >= 1);
            assertNull(capped.image());
            assertEquals(0, capped.receiver.registeredRegionCount(), "no ring was allocated or registered");
            assertTrue(records.stream().anyMatch(r -> r.getMessage().contains("CHALLENGE.termLength=262144 exceeds " +
                "this subscriber's cap " + SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME + "=131072")),
                "the subscriber says why");
            // The publisher counts the rejection on its control thread before it writes the log line: wait for it.
            rig.awaitCondition("the publisher's log says why too", 10_000, () -> records.stream().anyMatch(r ->
                r.getMessage().contains("rdma publication") && r.getMessage().contains("OUT_OF_RANGE")));
            rig.closeSubscriber(capped);

            System.clearProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME);
            final RdmaRig.Subscriber uncapped = rig.addSubscriber();
            rig.awaitCondition("connects under the default cap", 20_000, () -> null != uncapped.image());
        }
    }

    @Test
    void shouldWaitForTheLingeringRingRatherThanPassTheRingMemoryCap() throws Exception
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "10ms", "timeout", "500ms");
        System.setProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME, "64k");
        System.setProperty(SubscriberLimits.MAX_RING_MEMORY_PROP_NAME, "192k");
        final TcpProxy proxy = new TcpProxy(new java.net.InetSocketAddress("127.0.0.1", rig.sender.controlPort()));
        try
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber(null, RdmaRig.SECRET,
                "endpoint", "127.0.0.1:" + proxy.port());
            rig.awaitCondition("connected", 20_000, () -> null != subscriber.image());
            final TestImageSink.TestImage first = subscriber.image();

            proxy.dropAll();
            final long droppedNs = System.nanoTime();
            rig.awaitCondition("image unavailable", 10_000, () -> first.closed);
            rig.awaitCondition("reconnected", 20_000, () -> null != subscriber.image() && subscriber.image() != first);
            final long reconnectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - droppedNs);
            assertTrue(reconnectMs >= 900, "the reconnect waited for the 1 s ring linger: " + reconnectMs + " ms");
            assertTrue(subscriber.receiver.rejectedHandshakes() >= 1, "attempts refused meanwhile");
        }
        finally
        {
            proxy.close();
        }
    }

    @Test
    void shouldKeepALingeringRingMappedWhenThePublisherComesBackOnAnotherProvider() throws Exception
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "10ms", "timeout", "500ms");
        final RdmaRig tcpRig = new RdmaRig(dir.resolve("tcp-publisher"), "tcp", 64 * 1024, null,
            "heartbeat", "10ms", "timeout", "500ms");
        final TcpProxy proxy = new TcpProxy(new java.net.InetSocketAddress("127.0.0.1", rig.sender.controlPort()));
        try
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber(null, RdmaRig.SECRET,
                "endpoint", "127.0.0.1:" + proxy.port(), "provider", "auto");
            rig.awaitCondition("connected over shm", 20_000, () -> null != subscriber.image());
            final TestImageSink.TestImage first = subscriber.image();
            final org.agrona.concurrent.UnsafeBuffer firstRing = first.descriptor.termBuffers()[0];

            // The publisher comes back on the same endpoint, now over tcp.
            proxy.retarget(new java.net.InetSocketAddress("127.0.0.1", tcpRig.sender.controlPort()));
            proxy.dropAll();
            final long droppedNs = System.nanoTime();
            rig.awaitCondition("image unavailable", 10_000, () -> first.closed);
            final long deadlineNs = droppedNs + TimeUnit.SECONDS.toNanos(20);
            long ringReads = 0;
            while (null == subscriber.image() || subscriber.image() == first)
            {
                assertTrue(System.nanoTime() < deadlineNs, "reconnected over tcp within 20 s");
                if (System.nanoTime() - droppedNs < TimeUnit.MILLISECONDS.toNanos(800))
                {
                    // What an application's poll that still holds the old image does during the linger: before the
                    // fix the provider switch freed this ring at once (a reconnect 50 ms later) and this faulted.
                    ringReads += firstRing.getLongVolatile(0) >= Long.MIN_VALUE ? 1 : 0;
                }
                if (0 == rig.dutyCycle() + tcpRig.dutyCycle())
                {
                    RdmaRig.sleepMicros(200);
                }
            }
            final long reconnectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - droppedNs);
            assertTrue(ringReads > 0);
            assertTrue(reconnectMs >= 900, "the switch to tcp waited for the 1 s ring linger: " + reconnectMs + " ms");
            tcpRig.awaitCondition("the tcp publisher admitted it", 5_000, () -> 1 == tcpRig.sender.subscriberCount());
        }
        finally
        {
            proxy.close();
            tcpRig.close();
        }
    }

    @Test
    void shouldFreeTheImageCountersWhenReadyCannotBeSentAfterTheAccept() throws Exception
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "10ms", "timeout", "500ms");
        final TcpProxy proxy = new TcpProxy(new java.net.InetSocketAddress("127.0.0.1", rig.sender.controlPort()));
        // The publisher's CHALLENGE and signed ACCEPT reach the subscriber, then its connection is reset: the image
        // (and its counters) is built from the ACCEPT, and the READY that follows cannot be sent.
        proxy.resetClientAfterTargetBytes(io.verbus.media.rdma.protocol.ChallengeFlyweight.LENGTH +
            io.verbus.media.rdma.protocol.AcceptFlyweight.LENGTH);
        try
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber(null, RdmaRig.SECRET,
                "endpoint", "127.0.0.1:" + proxy.port());
            rig.awaitCondition("three handshakes failed after their ACCEPT", 30_000,
                () -> subscriber.receiver.rejectedHandshakes() >= 3);
            assertNull(subscriber.image(), "never connected");
            final int[] kept = new int[1];
            final StringBuilder labels = new StringBuilder();
            rig.support.countersManager.forEach((id, typeId, key, label) ->
            {
                if (label.startsWith("rdma bytes posted: ") && label.contains(" image="))
                {
                    kept[0]++;
                    labels.append(label).append('\n');
                }
            });
            assertTrue(kept[0] <= 1, "image counters left behind by failed handshakes (at most the one in progress " +
                "may be live): " + labels);
        }
        finally
        {
            proxy.close();
        }
    }

    @Test
    void shouldRefuseLimitsThatCannotHoldOneRing()
    {
        System.setProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME, "64m");
        System.setProperty(SubscriberLimits.MAX_RING_MEMORY_PROP_NAME, "100m");
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, SubscriberLimits::fromSystemProperties);
        assertTrue(ex.getMessage().contains(SubscriberLimits.MAX_RING_MEMORY_PROP_NAME), ex.getMessage());
        System.clearProperty(SubscriberLimits.MAX_RING_MEMORY_PROP_NAME);
        assertEquals(64L * 1024 * 1024, SubscriberLimits.fromSystemProperties().maxTermLength());
    }

    @Test
    void shouldNameThePropertyOfASizeItCannotUse()
    {
        System.setProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME, "64 megs");
        final IllegalArgumentException malformed =
            assertThrows(IllegalArgumentException.class, SubscriberLimits::fromSystemProperties);
        assertTrue(malformed.getMessage().contains(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME),
            malformed.getMessage());
        assertFalse(malformed.getMessage().contains("rdma channel"), "a property, not a channel key: " +
            malformed.getMessage());

        System.setProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME, "4k");
        final IllegalArgumentException tooSmall =
            assertThrows(IllegalArgumentException.class, SubscriberLimits::fromSystemProperties);
        final String expected = "-D" + SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME + " must be within";
        assertTrue(tooSmall.getMessage().contains(expected), tooSmall.getMessage());

        System.setProperty(SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME, "1m");
        assertEquals(1024 * 1024, SubscriberLimits.fromSystemProperties().maxTermLength());
    }
}
