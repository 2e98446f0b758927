package io.verbus.media.rdma;

import io.aeron.exceptions.AeronException;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The rdma media end to end over the shm provider, in one process, driven from the test thread. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaMediaTest
{
    @TempDir
    Path dir;
    private RdmaRig rig;
    private final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);

    @AfterEach
    void tearDown()
    {
        if (null != rig)
        {
            rig.close();
        }
    }

    private long publish(final long from, final long count)
    {
        long sequence = from;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sequence < from + count)
        {
            final int length = MessageStream.encode(message, sequence);
            final long result = rig.appender.offer(message, 0, length);
            if (result > 0)
            {
                sequence++;
                continue;
            }
            if (System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("publish stuck at " + sequence + " result " + result);
            }
            if (0 == drain())
            {
                RdmaRig.sleepMicros(100);
            }
        }
        return sequence;
    }

    private MessageStream.Checker[] checkers;

    private int drain()
    {
        int work = rig.dutyCycle();
        for (int i = 0; i < rig.subscribers.size(); i++)
        {
            final TestImageSink.TestImage image = rig.subscribers.get(i).image();
            if (null != image && null != checkers && i < checkers.length && null != checkers[i])
            {
                work += image.poll(checkers[i], 1024);
            }
        }
        return work;
    }

    private void awaitConnected(final int subscribers)
    {
        rig.awaitCondition(subscribers + " subscribers admitted", 20_000,
            () -> rig.sender.subscriberCount() == subscribers && rig.log.isConnected() &&
            rig.subscribers.stream().allMatch(s -> s.image() != null));
    }

    @Test
    void shouldReplicateMessagesInOrderToASubscriber()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null);
        assertFalse(rig.log.isConnected(), "a publication starts NOT_CONNECTED");
        assertEquals(TestLogAppender.NOT_CONNECTED, rig.appender.offer(message, 0, 32));
        rig.addSubscriber();
        awaitConnected(1);
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(0) };

        publish(0, 20_000);
        rig.awaitCondition("all delivered", 30_000, () -> { drain(); return checkers[0].received == 20_000; });
        assertNull(checkers[0].failure);
        assertNull(rig.subscribers.get(0).image().error);
        assertTrue(rig.support.errors.isEmpty(), rig.support.errors.toString());
    }

    @Test
    void shouldFanOutAndStartALateJoinerAtTheCurrentPosition()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null);
        rig.addSubscriber();
        rig.addSubscriber();
        awaitConnected(2);
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(0), new MessageStream.Checker(0),
            new MessageStream.Checker(-1) };
        publish(0, 5_000);
        rig.awaitCondition("first batch delivered", 30_000,
            () -> { drain(); return checkers[0].received == 5_000 && checkers[1].received == 5_000; });

        final long positionBeforeJoin = rig.appender.position();
        rig.addSubscriber();
        awaitConnected(3);
        final TestImageSink.TestImage late = rig.subscribers.get(2).image();
        assertEquals(
            positionBeforeJoin, late.descriptor.joinPosition(), "a late joiner starts at the current position");

        publish(5_000, 5_000);
        rig.awaitCondition("second batch delivered", 30_000, () ->
        {
            drain();
            return checkers[0].received == 10_000 && checkers[1].received == 10_000 && checkers[2].received == 5_000;
        });
        assertEquals(5_000, checkers[2].expected - 5_000, "the late joiner saw exactly the messages after joining");
        for (final MessageStream.Checker checker : checkers)
        {
            assertNull(checker.failure);
        }
    }

    @Test
    void shouldBackPressureAtTheSlowestSubscriberAndNeverOverwriteUnreadData()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null, "window", "16k");
        rig.addSubscriber();
        rig.addSubscriber();
        awaitConnected(2);
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(0), null };
        final MessageStream.Checker slow = new MessageStream.Checker(0);

        // The second subscriber does not poll: the publisher must stop at its position plus the window.
        long sequence = 0;
        long lastResult = 0;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadlineNs)
        {
            final int length = MessageStream.encode(message, sequence);
            lastResult = rig.appender.offer(message, 0, length);
            if (lastResult > 0)
            {
                sequence++;
            }
            else if (0 == drain())
            {
                if (TestLogAppender.BACK_PRESSURED == lastResult && rig.log.publisherLimit().get() >= 16 * 1024 &&
                    checkers[0].received == sequence)
                {
                    break;
                }
                RdmaRig.sleepMicros(200);
            }
        }
        assertEquals(TestLogAppender.BACK_PRESSURED, lastResult);
        final long limit = rig.log.publisherLimit().get();
        assertTrue(rig.appender.position() <= limit);
        assertTrue(limit <= 16 * 1024, "limit " + limit + " follows the slow subscriber (at 0) plus the window");

        // Once the slow one reads, everything arrives intact for both.
        final long published = sequence;
        final TestImageSink.TestImage slowImage = rig.subscribers.get(1).image();
        rig.awaitCondition("slow subscriber catches up", 20_000, () ->
        {
            drain();
            slowImage.poll(slow, 1024);
            return slow.received == published;
        });
        checkers[1] = slow;
        publish(published, 10_000);
        rig.awaitCondition("both complete", 30_000, () ->
        {
            drain();
            return slow.received == published + 10_000 && checkers[0].received == published + 10_000;
        });
        assertNull(slow.failure);
        assertNull(checkers[0].failure);
    }

    @Test
    void shouldDisconnectAKilledSubscriberAndGoNotConnected()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "10ms", "timeout", "300ms");
        final FaultInjection faults = new FaultInjection();
        final RdmaRig.Subscriber subscriber = rig.addSubscriber(faults, RdmaRig.SECRET);
        awaitConnected(1);
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(0) };
        publish(0, 1_000);

        faults.kill();
        rig.closeSubscriber(subscriber);
        rig.awaitCondition("publisher notices", 20_000, () -> rig.sender.subscriberCount() == 0);
        rig.awaitCondition("not connected", 5_000, () -> !rig.log.isConnected());
        assertEquals(TestLogAppender.NOT_CONNECTED, rig.appender.offer(message, 0, 64));
        rig.awaitCondition("publisher released the subscriber's QP and slot", 10_000,
            () -> rig.sender.queuePairCount() == 0 && rig.sender.registeredRegionCount() == 0 &&
                rig.sender.protectionDomainCount() == 0);
    }

    @Test
    void shouldSayInItsCloseReasonWhatACompletionErrorMeans()
    {
        // The subscriber's NIC dies while its control connection stays up: the publisher learns it from its WRITEs'
        // completions, and the line it logs must tell an operator what RETRY_EXC_ERR means, not only its name.
        rig = new RdmaRig(dir, "tcp", 64 * 1024, null, "heartbeat", "10ms", "timeout", "30s");
        final FaultInjection faults = new FaultInjection();
        rig.addSubscriber(faults, RdmaRig.SECRET);
        awaitConnected(1);
        final SubscriberConnection connection = rig.sender.lastAdmittedConnection();
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(0) };
        publish(0, 100);

        faults.kill();
        rig.awaitCondition("publisher drops the subscriber", 20_000, () ->
        {
            rig.appender.offer(message, 0, 64);
            rig.dutyCycle();
            return null != connection.closeReason;
        });
        assertTrue(connection.closeReason.contains(WorkCompletionStatus.RETRY_EXC_ERR.meaning()),
            connection.closeReason);
    }

    @Test
    void shouldReconnectAfterTheControlConnectionDrops() throws Exception
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "10ms", "timeout", "500ms");
        final TcpProxy proxy = new TcpProxy(new java.net.InetSocketAddress("127.0.0.1", rig.sender.controlPort()));
        final RdmaRig.Subscriber subscriber = rig.addSubscriber(null, RdmaRig.SECRET,
            "endpoint", "127.0.0.1:" + proxy.port());
        awaitConnected(1);
        final TestImageSink.TestImage first = subscriber.image();
        final SubscriberConnection firstConnection = rig.sender.lastAdmittedConnection();
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(0) };
        publish(0, 500);
        rig.awaitCondition("delivered", 10_000, () -> { drain(); return checkers[0].received == 500; });

        // Cut the control connection in the middle: both sides see it end.
        proxy.dropAll();
        rig.awaitCondition("image unavailable", 10_000, () -> first.closed);
        rig.awaitCondition("reconnected with a new image", 20_000,
            () -> subscriber.image() != null && subscriber.image() != first && rig.log.isConnected());
        assertEquals(2, subscriber.receiver.connectionsMade());
        final SubscriberConnection secondConnection = rig.sender.lastAdmittedConnection();
        assertTrue(secondConnection != firstConnection);
        assertTrue(secondConnection.ringRkey != firstConnection.ringRkey, "a reconnect gets a fresh ring rkey");
        assertTrue(secondConnection.counterRkey != firstConnection.counterRkey);
        assertTrue(secondConnection.statusRegion.rkey() != firstConnection.statusRegion.rkey());
        assertFalse(firstConnection.statusRegion.isRegistered(), "the old status slot was deregistered");
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(-1) };
        publish(500, 500);
        rig.awaitCondition("delivered after reconnect", 10_000, () -> { drain(); return checkers[0].received == 500; });
        assertNull(checkers[0].failure);
        assertTrue(subscriber.image().descriptor.joinPosition() > 0);
        proxy.close();
    }

    @Test
    void shouldCloseTheImageWhenThePublisherWritesAnOutOfBoundsPosition()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null);
        final RdmaRig.Subscriber subscriber = rig.addSubscriber();
        awaitConnected(1);
        final TestImageSink.TestImage image = subscriber.image();
        final ImageConnection connection = subscriber.receiver.connections()[0];

        // A consistent block (so not a torn read) claiming three terms more than the image has consumed.
        io.verbus.media.rdma.protocol.SlotLayout.encode(connection.positionBlock, 0, 3L * 64 * 1024, 1);
        assertEquals(0, image.poll((buffer, offset, length) -> {}, 10), "the polling thread reads the block itself");
        assertTrue(image.bound() <= 0, "the bogus position never reached the image's bound");
        assertNotNull(image.error, "the image closed itself");
        assertTrue(image.error.contains("more than two terms ahead"), image.error);
        rig.awaitCondition("connection dropped and image unavailable", 5_000, () -> image.closed);
    }

    @Test
    void shouldKeepAnIdleConnectionAliveWithHeartbeatsBothWays()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "20ms", "timeout", "300ms");
        final RdmaRig.Subscriber subscriber = rig.addSubscriber();
        awaitConnected(1);
        final TestImageSink.TestImage image = subscriber.image();

        // Five timeouts with no data at all: heartbeats alone must keep both sides up.
        final long idleUntilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500);
        while (System.nanoTime() < idleUntilNs)
        {
            rig.dutyCycle();
            RdmaRig.sleepMicros(1000);
        }
        assertFalse(image.closed, "the idle image stayed available");
        assertEquals(1, rig.sender.subscriberCount());
        assertEquals(1, subscriber.receiver.connectionsMade());
        assertTrue(rig.log.isConnected());

        // And once the subscriber's agent stops (as if hung), the publisher drops it within the timeout.
        subscriber.closed = true;
        rig.awaitCondition("silent subscriber dropped", 5_000, () -> rig.sender.subscriberCount() == 0);
        subscriber.closed = false;
    }

    @Test
    void shouldRejectAWrongSecretAndRegisterNothing()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null);
        final int regionsBefore = rig.sender.registeredRegionCount();
        final RdmaRig.Subscriber intruder =
            rig.addSubscriber(null, "not-the-secret-but-long-enough".getBytes(), new String[0]);
        rig.awaitCondition("rejected", 10_000,
            () -> rig.sender.rejectedHandshakes() >= 1 && intruder.receiver.rejectedHandshakes() >= 1);
        assertEquals(regionsBefore, rig.sender.registeredRegionCount());
        assertEquals(0, rig.sender.queuePairCount());
        assertEquals(0, intruder.receiver.registeredRegionCount());
        assertEquals(0, rig.sender.subscriberCount());
        assertNull(intruder.image());

        // The application hears of it through the error handler, once for a cause that does not change.
        rig.awaitCondition("reported to the error handler", 10_000, () -> !rig.support.errors.isEmpty());
        rig.awaitCondition("more rejections", 10_000, () -> intruder.receiver.rejectedHandshakes() >= 3);
        assertEquals(1, rig.support.errors.size(), rig.support.errors.toString());
        final Throwable report = rig.support.errors.get(0);
        assertTrue(report instanceof AeronException, report.toString());
        assertEquals(AeronException.Category.WARN, ((AeronException)report).category());
        assertTrue(report.getMessage().contains("handshake failed: AUTHENTICATION_FAILED"), report.getMessage());
        assertTrue(report.getMessage().contains("stream=" + RdmaRig.STREAM_ID), report.getMessage());
    }

    @Test
    void shouldOpenTheWindowOnlyOnceASubscriberFinishedItsHandshake() throws Exception
    {
        // The sender admits a subscriber (fixes its join position) before the subscriber's READY; the limit used to
        // move then, so an offer succeeded while isConnected() was still false. Every cycle up to READY checks it.
        for (int attempt = 0; attempt < 5; attempt++)
        {
            rig = new RdmaRig(Files.createDirectories(dir.resolve("attempt-" + attempt)), "shm", 64 * 1024, null);
            rig.addSubscriber();
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            long cyclesAdmittedNotReady = 0;
            while (!rig.log.isConnected())
            {
                rig.dutyCycle();
                final long limit = rig.log.publisherLimit().get();
                assertTrue(0 == limit || rig.log.isConnected(), "limit " + limit + " before connected");
                cyclesAdmittedNotReady += rig.sender.subscriberCount() > 0 && !rig.log.isConnected() ? 1 : 0;
                assertTrue(System.nanoTime() < deadlineNs, "never connected");
            }
            assertTrue(rig.log.publisherLimit().get() > 0, "the window opens with the connection");
            System.out.println("attempt " + attempt + ": " + cyclesAdmittedNotReady +
                " duty cycles with the subscriber admitted and not yet ready");
            rig.close();
            rig = null;
        }
    }

    @Test
    void shouldFailToAddASubscriptionWhoseProviderThisHostLacks()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null);
        final FabricContext fabric = rig.fabricContext(null);
        final RdmaChannelParams params = RdmaChannelParams.parse(
            Map.of("endpoint", rig.endpoint(), "provider", "verbs"));
        final String unavailable = Fabrics.unavailableReason("verbs", fabric);
        final RdmaChannelContext context = new RdmaChannelContext(rig.support.context, params, fabric, RdmaRig.SECRET);
        if (null != unavailable)
        {
            // This host has no usable verbs device (every CI machine here): the add fails at once, saying why.
            final FabricException ex = assertThrows(FabricException.class,
                () -> new RdmaReceiver(context, RdmaRig.STREAM_ID, new TestImageSink()));
            assertTrue(unavailable.startsWith("fabric provider verbs is not available: "), unavailable);
            assertTrue(ex.getMessage().endsWith(": " + unavailable), ex.getMessage());
            assertTrue(ex.getMessage().contains("rdma subscription stream=" + RdmaRig.STREAM_ID), ex.getMessage());
        }
        else
        {
            // A host with a device: the add succeeds and only the handshake with this shm publisher is refused.
            final RdmaReceiver receiver = new RdmaReceiver(context, RdmaRig.STREAM_ID, new TestImageSink());
            try
            {
                rig.awaitCondition("provider mismatch refused", 10_000, () -> receiver.rejectedHandshakes() > 0);
            }
            finally
            {
                receiver.close();
            }
        }
    }

    @Test
    void shouldEndAChainCutByTheDevicesLargestWriteAtAFrameBoundary()
    {
        // Frames of 1,056 B; the device's WRITEs hold 3,000 B, so six of them (one chain) end 18,000 B on: inside
        // the 18th frame. The chain must stop at the end of the 17th, or the subscriber sees a bound inside a frame.
        final int frameLength = 1056;
        final int payloadLength = frameLength - 32;
        rig = new RdmaRig(dir, "shm", 64 * 1024, new io.verbus.fabric.FaultInjection().maxMessageLength(3000),
            "window", "60k");
        rig.addSubscriber();
        awaitConnected(1);
        final TestImageSink.TestImage image = rig.subscribers.get(0).image();
        final long joinPosition = image.bound();
        final int frames = 30;
        for (int i = 0; i < frames; i++)
        {
            message.setMemory(0, payloadLength, (byte)i);
            assertTrue(rig.appender.offer(message, 0, payloadLength) > 0, "offer " + i);
        }

        final long[] bounds = new long[8];
        int chains = 0;
        while (chains < bounds.length && image.bound() < joinPosition + (long)frames * frameLength)
        {
            final long before = image.bound();
            rig.sender.sendNow(); // one chain; the shm WRITEs are placed when posted
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (image.refreshBound() == before && null == image.error)
            {
                assertTrue(System.nanoTime() < deadlineNs, "no chain placed after " + before);
                RdmaRig.sleepMicros(100);
            }
            bounds[chains++] = image.bound();
            assertNull(image.error, image.error);
            assertEquals(0, (image.bound() - joinPosition) % frameLength,
                "chain " + chains + " ends at " + image.bound() + ", inside a frame");
            image.position = image.bound(); // as a poll that read the chain's frames: the bound is read again
        }
        assertEquals(joinPosition + 17L * frameLength, bounds[0], "the first chain carries the 17 whole frames");
        assertEquals(joinPosition + (long)frames * frameLength, image.bound(), "every frame sent");
    }

    @Test
    void shouldSendInDirectModeFromThePublishingThread()
    {
        rig = new RdmaRig(dir, "shm", 64 * 1024, null);
        assertTrue(rig.sender.supportsDirectSend());
        rig.addSubscriber();
        awaitConnected(1);
        final TestImageSink.TestImage image = rig.subscribers.get(0).image();
        final MessageStream.Checker checker = new MessageStream.Checker(0);
        for (long sequence = 0; sequence < 100; sequence++)
        {
            final int length = MessageStream.encode(message, sequence);
            assertTrue(rig.appender.offer(message, 0, length) > 0);
            assertTrue(rig.sender.sendNow() > 0, "sendNow posts the new frame at once");
            final long expectedBound = rig.appender.position();
            rig.awaitCondition("bound advanced", 5_000, () -> image.refreshBound() == expectedBound);
            assertEquals(1, image.poll(checker, 10));
        }
        assertNull(checker.failure);
    }
}
