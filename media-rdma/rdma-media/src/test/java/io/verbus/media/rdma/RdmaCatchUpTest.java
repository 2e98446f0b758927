package io.verbus.media.rdma;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code join=recent}: a late subscriber catches up by RDMA READ of what the publisher's log still holds, then
 * continues live with no gap and no duplicate; the publisher grants READ on its terms only, to that subscriber only,
 * and revokes it when the subscriber goes.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaCatchUpTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final int MESSAGES = 5_000;

    @TempDir
    Path dir;
    private RdmaRig rig;
    private final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
    /** The position each message's offer started at: a frame boundary (the message's frame, or padding before). */
    private final long[] startPositions = new long[3 * MESSAGES];
    private MessageStream.Checker[] checkers = new MessageStream.Checker[0];
    private SubscriberConnection liveConnection;
    private SubscriberConnection lateConnection;

    @AfterEach
    void tearDown()
    {
        if (null != rig)
        {
            rig.close();
        }
    }

    private void publish(final long from, final long count)
    {
        long sequence = from;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (sequence < from + count)
        {
            final int length = MessageStream.encode(message, sequence);
            final long before = rig.appender.position();
            if (rig.appender.offer(message, 0, length) > 0)
            {
                startPositions[(int)sequence] = before;
                sequence++;
                continue;
            }
            if (System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("publish stuck at " + sequence);
            }
            if (0 == drain())
            {
                RdmaRig.sleepMicros(100);
            }
        }
    }

    private int drain()
    {
        int work = rig.dutyCycle();
        for (int i = 0; i < rig.subscribers.size() && i < checkers.length; i++)
        {
            final TestImageSink.TestImage image = rig.subscribers.get(i).image();
            if (null != image && null != checkers[i])
            {
                work += image.poll(checkers[i], 1024);
            }
        }
        return work;
    }

    /** A live subscriber, then MESSAGES messages it has all consumed: the publisher's position stands still. */
    private void startWithALiveSubscriber(final String provider)
    {
        startWithALiveSubscriber(provider, true);
    }

    private void startWithALiveSubscriber(final String provider, final boolean logInFabricDirectory,
        final String... keyValues)
    {
        rig = new RdmaRig(dir, provider, TERM_LENGTH, logInFabricDirectory, null, keyValues);
        rig.addSubscriber();
        rig.awaitCondition("live subscriber", 20_000,
            () -> rig.log.isConnected() && rig.subscribers.get(0).image() != null);
        checkers = new MessageStream.Checker[]{ new MessageStream.Checker(0), null };
        publish(0, MESSAGES);
        rig.awaitCondition("first batch", 30_000, () -> { drain(); return checkers[0].received == MESSAGES; });
        liveConnection = rig.sender.lastAdmittedConnection();
    }

    /** @return the first message that starts at least {@code bytesBack} before the current position. */
    private int messageStartingWithin(final long bytesBack)
    {
        final long target = rig.appender.position() - bytesBack;
        int sequence = MESSAGES - 1;
        while (sequence > 0 && startPositions[sequence - 1] >= target)
        {
            sequence--;
        }
        return sequence;
    }

    private RdmaRig.Subscriber addLateJoiner(final String... keyValues)
    {
        final RdmaRig.Subscriber late = rig.addSubscriber(keyValues);
        // The publisher records the admission once READY arrives, just after the subscriber announced its image.
        rig.awaitCondition("late joiner admitted", 20_000,
            () -> late.image() != null && rig.sender.lastAdmittedConnection() != liveConnection);
        lateConnection = rig.sender.lastAdmittedConnection();
        return late;
    }

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldCatchUpFromARecentPositionThenContinueLiveWithNoGapAndNoDuplicate(final String provider)
    {
        startWithALiveSubscriber(provider);
        final int first = messageStartingWithin(TERM_LENGTH / 4);
        final long from = startPositions[first];
        final long live = rig.appender.position();
        assertTrue(MESSAGES - first > 10, "the catch-up covers some messages: from message " + first);

        final RdmaRig.Subscriber late = addLateJoiner("join", "recent", "join-position", Long.toString(from));
        assertEquals(from, late.image().descriptor.joinPosition(), "the image starts where the catch-up started");
        assertEquals(live - from, late.receiver.catchUpBytes(), "READ what lay between it and the live position");
        assertEquals(0, late.receiver.catchUpGapBytes());

        checkers[1] = new MessageStream.Checker(first);
        publish(MESSAGES, MESSAGES);
        rig.awaitCondition("both subscribers have everything", 30_000, () ->
        {
            drain();
            return checkers[0].received == 2L * MESSAGES && checkers[1].expected == 2L * MESSAGES;
        });
        assertNull(checkers[1].failure, "sequence, length and CRC32 of every message from the requested one");
        assertEquals(2L * MESSAGES - first, checkers[1].received, "each message exactly once, from the requested one");
        assertNull(checkers[0].failure);
        assertNull(late.image().error);
        assertTrue(rig.support.errors.isEmpty(), rig.support.errors.toString());
    }

    @Test
    void shouldCatchUpFromTheStartOfTheLiveTermWithoutAJoinPosition()
    {
        startWithALiveSubscriber("shm");
        // Stop a little into a term, so its start is still held (the log keeps a term less the window behind).
        long sequence = MESSAGES;
        while ((rig.appender.position() & (TERM_LENGTH - 1)) < TERM_LENGTH / 8 && sequence < 2 * MESSAGES)
        {
            publish(sequence++, 1);
        }
        while ((rig.appender.position() & (TERM_LENGTH - 1)) >= TERM_LENGTH / 8 && sequence < 2 * MESSAGES)
        {
            publish(sequence++, 1);
        }
        final long published = sequence;
        rig.awaitCondition("caught up", 30_000, () -> { drain(); return checkers[0].received == published; });
        final long live = rig.appender.position();
        final long termStart = live - (live & (TERM_LENGTH - 1));
        assertTrue(live > termStart, "stopped inside a term: " + live);

        final RdmaRig.Subscriber late = addLateJoiner("join", "recent");
        assertEquals(termStart, late.image().descriptor.joinPosition(), "starts at the live position's term");
        assertEquals(live - termStart, late.receiver.catchUpBytes());
        checkers[1] = new MessageStream.Checker(-1);
        publish(published, 100);
        rig.awaitCondition("live", 30_000, () -> { drain(); return checkers[1].expected == published + 100; });
        assertNull(checkers[1].failure);
        final int first = (int)(checkers[1].expected - checkers[1].received);
        assertTrue(startPositions[first] <= termStart && startPositions[first - 1] < termStart,
            "the first message delivered is the one the term starts with (" + first + ")");
    }

    @ParameterizedTest
    @ValueSource(strings = { "min", "max" })
    void shouldCatchUpWhileThePublisherGoesOnPublishing(final String flowControl)
    {
        startWithALiveSubscriber("shm", true, "fc", flowControl);
        final int first = messageStartingWithin(TERM_LENGTH / 16);
        final RdmaRig.Subscriber late = rig.addSubscriber("join", "recent", "join-position",
            Long.toString(startPositions[first]));
        checkers[1] = new MessageStream.Checker(first);
        // The handshake and the READs run on the subscriber's control thread while this thread publishes on, a
        // message every 2 ms: slow enough that the requested position is still held when the publisher admits it
        // (the log holds about half a term, 32 KiB, behind the live subscriber here), fast enough to move meanwhile.
        long sequence = MESSAGES;
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (null == late.image() && sequence < 2 * MESSAGES && System.nanoTime() < deadlineNs)
        {
            publish(sequence++, 1);
            drain();
            RdmaRig.sleepMicros(2_000);
        }
        assertNotNull(late.image(), "admitted while the stream moved (" + (sequence - MESSAGES) + " messages)");
        assertEquals(startPositions[first], late.image().descriptor.joinPosition());
        publish(sequence, 2L * MESSAGES - sequence);
        rig.awaitCondition("everything", 30_000, () ->
        {
            drain();
            return checkers[1].expected == 2L * MESSAGES || null != checkers[1].failure ||
                null != late.image().error || late.image().closed;
        });
        assertNull(late.image().error);
        assertNull(checkers[1].failure);
        assertEquals(2L * MESSAGES - first, checkers[1].received);
        assertEquals(0, late.receiver.catchUpGapBytes());
    }

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldJoinLiveAndReportTheGapWhenThePositionIsNoLongerHeld(final String provider)
    {
        startWithALiveSubscriber(provider);
        final long live = rig.appender.position();
        assertTrue(live > 3L * TERM_LENGTH, "the log has wrapped: position 0 is long gone");

        final RdmaRig.Subscriber late = addLateJoiner("join", "recent", "join-position", "0");
        assertEquals(live, late.image().descriptor.joinPosition(), "falls back to the live position");
        assertEquals(live, late.receiver.catchUpGapBytes(), "the gap [0, live) is reported");
        assertEquals(0, late.receiver.catchUpBytes());
        assertNull(lateConnection.logReadRegion, "nothing granted, nothing registered");

        checkers[1] = new MessageStream.Checker(MESSAGES);
        publish(MESSAGES, 1_000);
        rig.awaitCondition("live after the gap", 30_000, () -> { drain(); return checkers[1].received == 1_000; });
        assertNull(checkers[1].failure);
    }

    @Test
    void shouldCatchUpOverShmFromALogWhoseFileWasUnlinkedOnceMapped()
    {
        // As an embedded driver maps its logs: unlinked at once, so no file name a peer could map. The shm provider
        // shares it for READ through a descriptor kept for this grant alone (before, this joined live with a gap).
        startWithALiveSubscriber("shm", false);
        final int first = messageStartingWithin(TERM_LENGTH / 4);
        final long from = startPositions[first];
        final long live = rig.appender.position();
        final RdmaRig.Subscriber late = addLateJoiner("join", "recent", "join-position", Long.toString(from));
        assertEquals(from, late.image().descriptor.joinPosition(), "caught up from the position asked for");
        assertEquals(live - from, late.receiver.catchUpBytes());
        assertEquals(0, late.receiver.catchUpGapBytes(), "no gap");
        assertNotNull(lateConnection.logReadRegion);
        assertEquals(AccessFlags.REMOTE_READ, lateConnection.logReadRegion.accessFlags());

        checkers[1] = new MessageStream.Checker(first);
        publish(MESSAGES, 1_000);
        rig.awaitCondition("caught up, then live", 30_000,
            () -> { drain(); return checkers[1].expected == MESSAGES + 1_000 || null != checkers[1].failure; });
        assertNull(checkers[1].failure);
        assertEquals(MESSAGES + 1_000 - first, checkers[1].received, "every message from the requested one, once");
        assertNull(checkers[0].failure);

        final SubscriberConnection admitted = lateConnection;
        rig.closeSubscriber(late);
        rig.awaitCondition("the grant revoked", 20_000, () -> null == admitted.logReadRegion);
    }

    @Test
    void shouldJoinLiveAndReportTheGapOnceACatchUpReadFailedRatherThanFailTheSameWayForEver()
    {
        startWithALiveSubscriber("shm", false, "timeout", "2s");
        final long from = startPositions[messageStartingWithin(TERM_LENGTH / 4)];
        final long live = rig.appender.position();
        // The joiner's NIC completes every work request 1.2 s after it was posted: its catch-up READ cannot finish
        // within its deadline (half the 2 s timeout), however often it is tried; its heartbeats still arrive in time.
        final FaultInjection slowNic = new FaultInjection().operationDelay(1200, TimeUnit.MILLISECONDS);
        final RdmaRig.Subscriber late = rig.addSubscriber(slowNic, RdmaRig.SECRET,
            "join", "recent", "join-position", Long.toString(from));
        rig.awaitCondition("the joiner in, live", 30_000, () -> null != late.image());
        assertTrue(late.receiver.rejectedHandshakes() >= 1, "the attempt whose READ ran out of time failed");
        assertEquals(live, late.image().descriptor.joinPosition(), "the next attempt joined live");
        assertEquals(live - from, late.receiver.catchUpGapBytes(), "and reported the gap");
        assertEquals(0, late.receiver.catchUpBytes());

        checkers[1] = new MessageStream.Checker(MESSAGES);
        publish(MESSAGES, 50);
        rig.awaitCondition("live after the gap", 30_000,
            () -> { drain(); return checkers[1].received == 50 || null != checkers[1].failure; });
        assertNull(checkers[1].failure);
        assertNull(checkers[0].failure);
    }

    @Test
    void shouldRefuseACatchUpFromAPositionThatIsNotAFrameBoundary()
    {
        startWithALiveSubscriber("shm");
        final int first = messageStartingWithin(TERM_LENGTH / 4);
        // Every message of the stream is at least 16 bytes, so its frame is at least 64 bytes long: 32 into it is
        // inside the frame.
        final long inside = startPositions[first] + 32;
        final RdmaRig.Subscriber late = rig.addSubscriber("join", "recent", "join-position", Long.toString(inside));
        rig.awaitCondition("the catch-up refused", 20_000, () -> late.receiver.rejectedHandshakes() >= 1);
        assertNull(late.image(), "no image from frames that do not line up");
        assertEquals(0, late.receiver.catchUpBytes());
    }

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldGrantReadOnlyOnTheTermsToTheCatchingUpSubscriberAndRevokeItOnDisconnect(final String provider)
    {
        startWithALiveSubscriber(provider);
        assertNull(liveConnection.logReadRegion, "a live joiner gets no READ registration");
        final long from = startPositions[messageStartingWithin(TERM_LENGTH / 4)];
        final RdmaRig.Subscriber late = addLateJoiner("join", "recent", "join-position", Long.toString(from));
        final SubscriberConnection admitted = lateConnection;
        final MemoryRegion logRegion = admitted.logReadRegion;
        assertNotNull(logRegion);
        assertEquals(AccessFlags.REMOTE_READ, logRegion.accessFlags(), "READ only: no remote write, no local write");
        assertEquals(3L * TERM_LENGTH, logRegion.length(), "the three terms, not the metadata");
        final long address = logRegion.address();
        final int rkey = logRegion.rkey();
        final MemorySegment terms = rig.log.logBuffers().segment();

        try (Probe probe = new Probe(rig, provider, admitted.pd))
        {
            assertEquals(WorkCompletionStatus.SUCCESS, probe.read(address + 4096, rkey, 1024));
            assertArrayEquals(terms.asSlice(4096, 1024).toArray(ValueLayout.JAVA_BYTE),
                probe.local.segment().asSlice(0, 1024).toArray(ValueLayout.JAVA_BYTE));
        }
        try (Probe probe = new Probe(rig, provider, admitted.pd))
        {
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, probe.read(address + 3L * TERM_LENGTH - 512, rkey, 1024),
                "a READ past the granted terms (into the metadata) is refused");
        }
        final byte[] before = terms.asSlice(0, 1024).toArray(ValueLayout.JAVA_BYTE);
        try (Probe probe = new Probe(rig, provider, admitted.pd))
        {
            probe.local.segment().fill((byte)0x5A);
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, probe.write(address, rkey, 1024),
                "the log is never writable through the grant");
        }
        assertArrayEquals(before, terms.asSlice(0, 1024).toArray(ValueLayout.JAVA_BYTE), "the log is unchanged");

        rig.closeSubscriber(late);
        rig.awaitCondition("the late joiner's connection released", 20_000, () -> null == admitted.logReadRegion);
        assertTrue(!logRegion.isRegistered(), "deregistered on disconnect");
        try (Probe probe = new Probe(rig, provider, liveConnection.pd))
        {
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, probe.read(address + 4096, rkey, 1024),
                "the old rkey no longer opens the log");
        }
    }

    /**
     * Each subscriber's connection is a protection domain of its own at the publisher: the rkeys made for one
     * subscriber (its status slot, its catch-up grant) open nothing through another subscriber's QP, whatever that
     * subscriber learns or guesses.
     */
    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldOpenOneSubscribersRegionsToNoOtherSubscribersConnection(final String provider)
    {
        startWithALiveSubscriber(provider);
        final long from = startPositions[messageStartingWithin(TERM_LENGTH / 4)];
        addLateJoiner("join", "recent", "join-position", Long.toString(from));
        final SubscriberConnection grantee = lateConnection;
        final MemoryRegion grant = grantee.logReadRegion;
        assertNotNull(grant);
        assertNotSame(liveConnection.pd, grantee.pd, "a protection domain per subscriber");

        try (Probe probe = new Probe(rig, provider, grantee.pd))
        {
            assertEquals(WorkCompletionStatus.SUCCESS, probe.read(grant.address() + 4096, grant.rkey(), 1024),
                "the grant works through its own subscriber's connection");
        }
        try (Probe probe = new Probe(rig, provider, liveConnection.pd))
        {
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR,
                probe.read(grant.address() + 4096, grant.rkey(), 1024),
                "another subscriber's connection cannot use the grant");
        }
        final MemoryRegion slot = grantee.statusRegion;
        final long pattern = 0x5A5A_5A5A_5A5A_5A5AL;
        try (Probe probe = new Probe(rig, provider, liveConnection.pd))
        {
            probe.local.segment().fill((byte)0x5A);
            assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, probe.write(slot.address(), slot.rkey(), 24),
                "another subscriber's connection cannot write this subscriber's status slot");
        }
        for (int offset = 0; offset < 24; offset += 8)
        {
            assertNotEquals(pattern, slot.segment().get(ValueLayout.JAVA_LONG_UNALIGNED, offset),
                "the probe's bytes never landed in the status slot");
        }
    }

    /**
     * A QP on one of the publisher's protection domains (a subscriber connection's), connected to a QP on a device of
     * its own: what the subscriber of that connection could do with an rkey it holds.
     */
    private static final class Probe implements AutoCloseable
    {
        private final Fabric fabric;
        private final Device device;
        private final ProtectionDomain pd;
        private final CompletionQueue cq;
        private final QueuePair qp;
        private final CompletionQueue publisherCq;
        private final QueuePair publisherQp;
        final MemoryRegion local;
        private final WorkRequestBatch batch = new WorkRequestBatch(1);
        private final WorkCompletion[] completions = WorkCompletion.newArray(4);

        Probe(final RdmaRig rig, final String provider, final ProtectionDomain publisherPd)
        {
            fabric = Fabrics.open(provider, rig.fabricContext(null));
            device = fabric.openDevice();
            pd = device.allocateProtectionDomain();
            cq = device.createCompletionQueue(16);
            qp = pd.createQueuePair(new QueuePairConfig().completionQueue(cq).maxSendWorkRequests(4)
                .maxReceiveWorkRequests(1));
            local = pd.registerMemory(device.allocateMemory(4096), AccessFlags.LOCAL_WRITE);
            publisherCq = publisherPd.device().createCompletionQueue(16);
            publisherQp = publisherPd.createQueuePair(new QueuePairConfig().completionQueue(publisherCq)
                .maxSendWorkRequests(4).maxReceiveWorkRequests(1));
            qp.connect(publisherQp.localConnectionInfo());
            publisherQp.connect(qp.localConnectionInfo());
        }

        WorkCompletionStatus read(final long remoteAddress, final int rkey, final int length)
        {
            batch.clear();
            batch.add().read(1, local.address(), length, local.lkey(), remoteAddress, rkey, SendFlags.SIGNALED);
            return post();
        }

        WorkCompletionStatus write(final long remoteAddress, final int rkey, final int length)
        {
            batch.clear();
            batch.add().write(2, local.address(), length, local.lkey(), remoteAddress, rkey, SendFlags.SIGNALED);
            return post();
        }

        private WorkCompletionStatus post()
        {
            assertEquals(PostResult.OK, qp.postSend(batch));
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (System.nanoTime() < deadlineNs)
            {
                publisherCq.poll(completions, completions.length);
                if (cq.poll(completions, 1) > 0)
                {
                    return completions[0].status();
                }
                RdmaRig.sleepMicros(200);
            }
            throw new AssertionError("no completion within 10 s");
        }

        public void close()
        {
            publisherQp.close();
            publisherCq.close();
            qp.close();
            cq.close();
            local.deregister();
            device.close();
            fabric.close();
        }
    }
}
