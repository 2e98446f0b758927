package io.verbus.fabric.conformance;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.SharedReceiveQueue;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.fabric.WorkRequestOpcode;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Deque;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Conformance of shared receive queues and completion channels, what every provider (shm, tcp, verbs) must do.
 * <p>
 * Topology: two devices of this JVM, each from its own instance of {@link #newFabric()} (for verbs: two QPs of one
 * NIC, as in the qemu guest); the senders' QPs on device A, the receivers' on device B. Subclasses name the provider.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
public abstract class ReceiveQueueAndChannelConformanceTest
{
    protected static final long TIMEOUT_MS = 10_000;
    private static final int MEMORY_BYTES = 1 << 20;
    private static final long QUIET_MS = 200;
    /** The WR id of the first RECV {@link #openChannelPair} posts (not 0: a completion must carry it back). */
    private static final long CHANNEL_PAIR_FIRST_RECEIVE_ID = 5;

    private final Deque<AutoCloseable> perTest = new ArrayDeque<>();
    private final WorkRequestBatch batch = new WorkRequestBatch(16);
    private final WorkCompletion[] completions = WorkCompletion.newArray(64);
    private Fabric fabricA;
    private Fabric fabricB;
    private Device deviceA;
    private Device deviceB;
    private MemorySegment memoryA;
    private MemorySegment memoryB;
    private ProtectionDomain pdA;
    private ProtectionDomain pdB;
    private MemoryRegion regionA;
    private MemoryRegion regionB;

    /**
     * @return a fabric of the provider under test (called twice: one per device).
     */
    protected abstract Fabric newFabric();

    /**
     * @return rounds of the arm / complete race; fewer where each round is slow (an emulated NIC).
     */
    protected int raceRounds()
    {
        return 2_000;
    }

    /**
     * @return the config every QP of these cases starts from.
     */
    protected QueuePairConfig queuePairConfig()
    {
        return new QueuePairConfig()
            .maxSendWorkRequests(64)
            .maxReceiveWorkRequests(64)
            .maxInlineData(64)
            .retryTimeoutNs(TimeUnit.SECONDS.toNanos(10)); // a loaded host may starve a thread for seconds
    }

    @BeforeAll
    void openDevices()
    {
        fabricA = newFabric();
        fabricB = newFabric();
        deviceA = fabricA.openDevice();
        deviceB = fabricB.openDevice();
        memoryA = deviceA.allocateMemory(MEMORY_BYTES);
        memoryB = deviceB.allocateMemory(MEMORY_BYTES);
    }

    @AfterAll
    void closeDevices()
    {
        closeQuietly(fabricA);
        closeQuietly(fabricB);
    }

    private void openPerTest()
    {
        pdA = track(deviceA.allocateProtectionDomain());
        pdB = track(deviceB.allocateProtectionDomain());
        regionA = pdA.registerMemory(memoryA, AccessFlags.LOCAL_WRITE);
        perTest.push(regionA::deregister);
        regionB = pdB.registerMemory(memoryB, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        perTest.push(regionB::deregister);
        memoryA.fill((byte)0);
        memoryB.fill((byte)0);
    }

    @AfterEach
    void closePerTest()
    {
        while (!perTest.isEmpty())
        {
            closeQuietly(perTest.pop());
        }
    }

    // ------------------------------------------------------------------------------------------------------
    // Shared receive queues.

    @Test
    void shouldDeliverImmediatesInOrderPerQueuePairThroughOneSharedReceiveQueue()
    {
        openPerTest();
        final int queuePairs = 3;
        final int perQueuePair = 300;
        final int srqDepth = 32;
        final int receiveSlot = 64;
        final long ringBase = 64 * 1024;
        final int window = 8;

        final CompletionQueue sendCq = track(deviceA.createCompletionQueue(1024));
        final CompletionQueue receiveCq = track(deviceB.createCompletionQueue(1024));
        final SharedReceiveQueue srq = track(pdB.createSharedReceiveQueue(srqDepth));
        assertTrue(srq.depth() >= srqDepth, "depth granted " + srq.depth());
        for (int i = 0; i < srqDepth; i++)
        {
            assertEquals(PostResult.OK, srq.postReceive(i, regionB.address() + (long)i * receiveSlot, receiveSlot,
                regionB.lkey()));
        }

        final QueuePair[] senders = new QueuePair[queuePairs];
        final Map<Integer, Integer> senderIndex = new HashMap<>();
        final Map<Integer, Integer> receiverIndex = new HashMap<>();
        for (int q = 0; q < queuePairs; q++)
        {
            final QueuePair receiver = track(pdB.createQueuePair(queuePairConfig().completionQueue(receiveCq)
                .sharedReceiveQueue(srq)));
            assertSame(srq, receiver.sharedReceiveQueue());
            senders[q] = track(pdA.createQueuePair(queuePairConfig().completionQueue(sendCq)
                .rnrRetryCount(QueuePairConfig.RNR_RETRY_INFINITE)));
            connect(senders[q], receiver);
            assertNotEquals(PostResult.OK, receiver.postReceive(1, regionB.address(), 8, regionB.lkey()),
                "a QP with an SRQ takes no receives of its own");
            senderIndex.put(senders[q].qpNumber(), q);
            receiverIndex.put(receiver.qpNumber(), q);
        }
        for (int q = 0; q < queuePairs; q++)
        {
            for (int seq = 0; seq < perQueuePair; seq++)
            {
                memoryA.set(ValueLayout.JAVA_LONG_UNALIGNED, sourceOffset(q, seq, perQueuePair), message(q, seq));
            }
        }

        final int[] sent = new int[queuePairs];
        final int[] acknowledged = new int[queuePairs];
        final int[] received = new int[queuePairs];
        int totalReceived = 0;
        int writesWithImmediate = 0;
        int sendsWithImmediate = 0;
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS * 3);
        while (totalReceived < queuePairs * perQueuePair)
        {
            assertTrue(System.nanoTime() < deadlineNs, "received only " + totalReceived + " of " +
                queuePairs * perQueuePair + ", per QP " + Arrays.toString(received));
            for (int q = 0; q < queuePairs; q++)
            {
                while (sent[q] < perQueuePair && sent[q] - acknowledged[q] < window)
                {
                    postImmediate(senders[q], q, sent[q]++, perQueuePair, ringBase);
                }
            }
            int n = sendCq.poll(completions, completions.length);
            for (int i = 0; i < n; i++)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, completions[i].status(), completions[i].toString());
                acknowledged[senderIndex.get(completions[i].qpNumber())]++;
            }
            n = receiveCq.poll(completions, completions.length);
            for (int i = 0; i < n; i++)
            {
                final WorkCompletion wc = completions[i];
                final int q = receiverIndex.get(wc.qpNumber());
                if (checkImmediateInOrder(wc, q, received[q], perQueuePair, ringBase, receiveSlot))
                {
                    writesWithImmediate++;
                }
                else
                {
                    sendsWithImmediate++;
                }
                final long slotOffset = wc.wrId() * receiveSlot;
                received[q]++;
                totalReceived++;
                assertEquals(PostResult.OK, srq.postReceive(wc.wrId(), regionB.address() + slotOffset, receiveSlot,
                    regionB.lkey()));
            }
            if (n == 0)
            {
                Thread.onSpinWait();
            }
        }
        assertEquals(queuePairs * perQueuePair / 2, writesWithImmediate);
        assertEquals(queuePairs * perQueuePair / 2, sendsWithImmediate);
    }

    /**
     * Post message {@code seq} of stream {@code q}: a WRITE_WITH_IMM of its 8 bytes into the ring when even, a
     * SEND_WITH_IMM of them when odd; the immediate names the stream and the sequence.
     */
    private void postImmediate(
        final QueuePair sender, final int q, final int seq, final int perQueuePair, final long ringBase)
    {
        final long source = regionA.address() + sourceOffset(q, seq, perQueuePair);
        final int immediate = q << 16 | seq;
        batch.clear();
        if ((seq & 1) == 0)
        {
            batch.add().writeWithImmediate(seq, source, 8, regionA.lkey(),
                regionB.address() + ringBase + sourceOffset(q, seq, perQueuePair), regionB.rkey(), immediate,
                SendFlags.SIGNALED);
        }
        else
        {
            batch.add().send(seq, source, 8, regionA.lkey(), SendFlags.SIGNALED)
                .opcode(WorkRequestOpcode.SEND_WITH_IMM).immediateData(immediate);
        }
        assertEquals(PostResult.OK, sender.postSend(batch));
    }

    /**
     * Check one receive completion of stream {@code q}: successful, carrying the next immediate of that stream, its
     * data in place (in the ring for a WRITE_WITH_IMM, in the receive buffer for a SEND_WITH_IMM).
     *
     * @return true for a WRITE_WITH_IMM.
     */
    private boolean checkImmediateInOrder(
        final WorkCompletion wc, final int q, final int expectedSeq, final int perQueuePair, final long ringBase,
        final int receiveSlot)
    {
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc.toString());
        assertTrue(wc.hasImmediate(), wc.toString());
        assertEquals(q, wc.immediateData() >>> 16, "immediate of another QP's stream: " + wc);
        final int seq = wc.immediateData() & 0xFFFF;
        assertEquals(expectedSeq, seq, "QP " + q + " out of order: " + wc);
        if (wc.opcode() == WorkCompletionOpcode.RECV_RDMA_WITH_IMM)
        {
            assertEquals(message(q, seq), memoryB.get(ValueLayout.JAVA_LONG_UNALIGNED,
                ringBase + sourceOffset(q, seq, perQueuePair)), "WRITE_WITH_IMM data before its completion");
            return true;
        }
        assertEquals(WorkCompletionOpcode.RECV, wc.opcode(), wc.toString());
        assertEquals(8, wc.byteLength());
        assertEquals(message(q, seq), memoryB.get(ValueLayout.JAVA_LONG_UNALIGNED, wc.wrId() * receiveSlot));
        return false;
    }

    @Test
    void shouldAnswerRnrWhileTheSharedReceiveQueueIsEmptyAndDeliverOnceReceivesArePosted()
    {
        openPerTest();
        final CompletionQueue sendCq = track(deviceA.createCompletionQueue(64));
        final CompletionQueue receiveCq = track(deviceB.createCompletionQueue(64));
        final SharedReceiveQueue srq = track(pdB.createSharedReceiveQueue(8));
        memoryA.set(ValueLayout.JAVA_LONG_UNALIGNED, 0, 0x1122334455667788L);

        // Few RNR retries: the SEND fails with RNR_RETRY_EXC_ERR, as with an empty receive queue.
        final QueuePair impatient = track(pdA.createQueuePair(queuePairConfig().completionQueue(sendCq)
            .rnrRetryCount(1).rnrTimeoutNs(TimeUnit.MILLISECONDS.toNanos(1))));
        final QueuePair firstReceiver = track(pdB.createQueuePair(queuePairConfig().completionQueue(receiveCq)
            .sharedReceiveQueue(srq)));
        connect(impatient, firstReceiver);
        batch.clear();
        batch.add().send(1, regionA.address(), 8, regionA.lkey(), SendFlags.SIGNALED);
        assertEquals(PostResult.OK, impatient.postSend(batch));
        final WorkCompletion failed = awaitOne(sendCq, receiveCq, "the SEND into an empty SRQ");
        assertEquals(WorkCompletionStatus.RNR_RETRY_EXC_ERR, failed.status(), failed.toString());
        // Both ends of the failed connection stay open: its responder dropped the SEND its requester gave up on, so
        // the receive posted below goes to the next connection's SEND, not to the abandoned one.

        // Retrying forever: the SEND waits while the SRQ is empty and lands once a receive is posted.
        final QueuePair patient = track(pdA.createQueuePair(queuePairConfig().completionQueue(sendCq)
            .rnrRetryCount(QueuePairConfig.RNR_RETRY_INFINITE).rnrTimeoutNs(TimeUnit.MILLISECONDS.toNanos(1))));
        final QueuePair secondReceiver = track(pdB.createQueuePair(queuePairConfig().completionQueue(receiveCq)
            .sharedReceiveQueue(srq)));
        connect(patient, secondReceiver);
        batch.clear();
        batch.add().send(2, regionA.address(), 8, regionA.lkey(), SendFlags.SIGNALED);
        assertEquals(PostResult.OK, patient.postSend(batch));
        final long quietUntilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(QUIET_MS);
        while (System.nanoTime() < quietUntilNs)
        {
            assertEquals(0, sendCq.poll(completions, 1), "the SEND completed with no receive posted");
            assertEquals(0, receiveCq.poll(completions, 1), "a receive completed with none posted");
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
        }
        assertEquals(PostResult.OK, srq.postReceive(77, regionB.address() + 4096, 64, regionB.lkey()));
        boolean sendDone = false;
        boolean receiveDone = false;
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        while (!(sendDone && receiveDone) && System.nanoTime() < deadlineNs)
        {
            if (sendCq.poll(completions, 1) == 1)
            {
                assertEquals(WorkCompletionStatus.SUCCESS, completions[0].status(), completions[0].toString());
                assertEquals(2, completions[0].wrId());
                sendDone = true;
            }
            if (receiveCq.poll(completions, 1) == 1)
            {
                final WorkCompletion wc = completions[0];
                assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc.toString());
                assertEquals(77, wc.wrId());
                assertEquals(secondReceiver.qpNumber(), wc.qpNumber());
                assertEquals(8, wc.byteLength());
                receiveDone = true;
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
        assertTrue(sendDone && receiveDone, "send done " + sendDone + ", receive done " + receiveDone);
        assertEquals(0x1122334455667788L, memoryB.get(ValueLayout.JAVA_LONG_UNALIGNED, 4096));
    }

    // ------------------------------------------------------------------------------------------------------
    // Completion channels.

    @Test
    void shouldWakeABlockedWaiterWhenTheArmedQueueGetsACompletion() throws InterruptedException
    {
        final ChannelPair pair = openChannelPair(1);
        final CompletionChannel channel = pair.channel();
        final CompletionQueue sendCq = pair.sendCq();
        final CompletionQueue receiveCq = pair.receiveCq();
        final QueuePair sender = pair.sender();

        channel.requestNotify(receiveCq, false);
        assertEquals(0, receiveCq.poll(completions, 1));
        final AtomicReference<CompletionQueue> woken = new AtomicReference<>();
        final AtomicReference<Throwable> failure = new AtomicReference<>();
        final Thread waiter = new Thread(() ->
        {
            try
            {
                woken.set(awaitAndAcknowledge(channel, TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS)));
            }
            catch (final Throwable ex)
            {
                failure.set(ex);
            }
        }, "channel-waiter");
        waiter.setDaemon(true);
        waiter.start();
        Thread.sleep(QUIET_MS);
        assertTrue(waiter.isAlive(), "the waiter returned with nothing to wake it: " + woken.get());

        batch.clear();
        batch.add().send(6, regionA.address(), 8, regionA.lkey(), SendFlags.SIGNALED);
        assertEquals(PostResult.OK, sender.postSend(batch));
        assertEquals(WorkCompletionStatus.SUCCESS, awaitOne(sendCq, null, "the SEND").status());
        waiter.join(TIMEOUT_MS);
        assertFalse(waiter.isAlive(), "the waiter was not woken");
        assertNull(failure.get());
        assertSame(receiveCq, woken.get(), "the event names the armed CQ");
        final WorkCompletion wc = awaitOne(receiveCq, null, "the RECV");
        assertEquals(CHANNEL_PAIR_FIRST_RECEIVE_ID, wc.wrId());
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status());
    }

    /**
     * Many rounds of: the waiter arms, polls and only then waits, while another thread makes the completion land at a
     * random moment (before the arm, between the arm and the wait, during the wait). A completion that lands after the
     * arm and fails to wake the waiter fails the test at its 5 s timeout. Receive side: the armed CQ gets the RECV
     * completions of SENDs (the subscriber's case); send side: the armed CQ gets the completions of signaled WRITEs
     * another thread posts (on shm produced in that thread at post time).
     */
    @ParameterizedTest(name = "receive side {0}")
    @ValueSource(booleans = {true, false})
    void shouldNotLoseAWakeUpWhenACompletionRacesTheArm(final boolean receiveSide) throws InterruptedException
    {
        openPerTest();
        final int rounds = raceRounds();
        final int receiveDepth = 32;
        final CompletionChannel channel = track((receiveSide ? deviceB : deviceA).createCompletionChannel());
        final CompletionQueue sendCq =
            trackBefore(channel, deviceA.createCompletionQueue(256, receiveSide ? null : channel));
        final CompletionQueue receiveCq =
            trackBefore(channel, deviceB.createCompletionQueue(256, receiveSide ? channel : null));
        final CompletionQueue armed = receiveSide ? receiveCq : sendCq;
        final QueuePair sender = track(pdA.createQueuePair(queuePairConfig().completionQueue(sendCq)
            .rnrRetryCount(QueuePairConfig.RNR_RETRY_INFINITE)));
        final QueuePair receiver = track(pdB.createQueuePair(queuePairConfig().completionQueue(receiveCq)));
        connect(sender, receiver);
        for (int i = 0; i < receiveDepth; i++)
        {
            assertEquals(PostResult.OK, receiver.postReceive(i, regionB.address() + i * 64L, 64, regionB.lkey()));
        }

        final AtomicInteger consumed = new AtomicInteger();
        final AtomicReference<Throwable> senderFailure = new AtomicReference<>();
        final Thread senderThread = new Thread(() ->
        {
            try
            {
                sendRounds(sender, receiveSide ? sendCq : null, rounds, consumed);
            }
            catch (final Throwable ex)
            {
                senderFailure.set(ex);
            }
        }, "race-sender");
        senderThread.setDaemon(true);
        senderThread.start();

        int events = 0;
        int completed = 0;
        try
        {
            while (completed < rounds)
            {
                channel.requestNotify(armed, false);
                final int n = armed.poll(completions, completions.length);
                for (int i = 0; i < n; i++)
                {
                    assertEquals(WorkCompletionStatus.SUCCESS, completions[i].status(), completions[i].toString());
                    if (receiveSide)
                    {
                        assertEquals(PostResult.OK, receiver.postReceive(completions[i].wrId(),
                            regionB.address() + completions[i].wrId() * 64, 64, regionB.lkey()));
                    }
                    completed++;
                    consumed.set(completed);
                }
                if (n > 0)
                {
                    continue;
                }
                if (completed % 4 == 1)
                {
                    // Widen the gap between the check and the block: the completion most likely lands in it.
                    LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
                }
                final CompletionQueue woken = awaitAndAcknowledge(channel, TimeUnit.SECONDS.toNanos(5));
                if (null == woken)
                {
                    fail("lost wake-up: round " + completed + " of " + rounds + ", the armed CQ got a completion " +
                        "(or will) and the waiter was not woken within 5 s; sender failure: " + senderFailure.get());
                }
                assertSame(armed, woken);
                events++;
            }
        }
        finally
        {
            consumed.set(Integer.MAX_VALUE);
            senderThread.join(TIMEOUT_MS);
        }
        assertNull(senderFailure.get());
        assertTrue(events > 0, "no round ever waited");
    }

    /**
     * Post one signaled WR per round once the waiter has taken the previous round's completion: a SEND whose own
     * completion this thread reaps ({@code sendCq} given), or a WRITE whose completion the waiter reaps.
     */
    private void sendRounds(
        final QueuePair sender, final CompletionQueue sendCq, final int rounds, final AtomicInteger consumed)
    {
        final WorkRequestBatch sendBatch = new WorkRequestBatch(1);
        final WorkCompletion[] sendCompletions = WorkCompletion.newArray(8);
        final ThreadLocalRandom jitter = ThreadLocalRandom.current();
        for (int i = 0; i < rounds; i++)
        {
            final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
            while (consumed.get() < i)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("waiter stuck before round " + i);
                }
                Thread.onSpinWait();
            }
            // Vary where the completion lands: before the arm, between the arm and the wait, or during the wait (the
            // waiter arms and polls within a few microseconds of taking the previous round, so most jitter is short).
            final long spinUntilNs = System.nanoTime() + jitter.nextLong(i % 3 == 0 ? 30_000 : 3_000);
            while (System.nanoTime() < spinUntilNs)
            {
                Thread.onSpinWait();
            }
            sendBatch.clear();
            if (null != sendCq)
            {
                sendBatch.add().send(i, regionA.address(), 8, regionA.lkey(), SendFlags.SIGNALED);
            }
            else
            {
                sendBatch.add().write(i, regionA.address(), 8, regionA.lkey(), regionB.address() + 8192,
                    regionB.rkey(), SendFlags.SIGNALED);
            }
            if (sender.postSend(sendBatch) != PostResult.OK)
            {
                throw new AssertionError("post of round " + i + " refused");
            }
            if (null == sendCq)
            {
                continue;
            }
            int done = 0;
            while (done == 0)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("no send completion in round " + i);
                }
                done = sendCq.poll(sendCompletions, 1);
            }
            if (sendCompletions[0].status() != WorkCompletionStatus.SUCCESS)
            {
                throw new AssertionError("round " + i + ": " + sendCompletions[0]);
            }
        }
    }

    @Test
    void shouldFireOnlyWhenArmedAndOncePerArm()
    {
        final ChannelPair pair = openChannelPair(8);
        final CompletionChannel channel = pair.channel();
        final CompletionQueue receiveCq = pair.receiveCq();

        final long quietNs = TimeUnit.MILLISECONDS.toNanos(QUIET_MS);
        final long timeoutNs = TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);

        // Not armed: a completion queues no event.
        sendAndReceive(pair, 1, 0);
        assertNull(awaitAndAcknowledge(channel, quietNs), "an event without an arm");

        // Armed: the next completion fires, once.
        channel.requestNotify(receiveCq, false);
        sendAndReceive(pair, 2, 0);
        assertSame(receiveCq, awaitAndAcknowledge(channel, timeoutNs), "no event after arm");
        sendAndReceive(pair, 3, 0);
        assertNull(awaitAndAcknowledge(channel, quietNs), "a second event from one arm");

        // Solicited only: an unsolicited SEND does not fire, a solicited one does.
        channel.requestNotify(receiveCq, true);
        sendAndReceive(pair, 4, 0);
        assertNull(awaitAndAcknowledge(channel, quietNs), "an unsolicited SEND fired");
        sendAndReceive(pair, 5, SendFlags.SOLICITED);
        assertSame(receiveCq, awaitAndAcknowledge(channel, timeoutNs), "no event for a solicited SEND");
    }

    @Test
    void shouldNotWaitOnAnInterruptedThreadButStillTakeAQueuedEvent()
    {
        final ChannelPair pair = openChannelPair(1);
        final CompletionChannel channel = pair.channel();
        final CompletionQueue receiveCq = pair.receiveCq();
        final long longWaitNs = TimeUnit.SECONDS.toNanos(30);

        Thread.currentThread().interrupt();
        try
        {
            // Armed, nothing queued: a wait of 30 s ends at once (a loop that stops on its interrupt is not held).
            channel.requestNotify(receiveCq, false);
            final long startNs = System.nanoTime();
            assertNull(awaitAndAcknowledge(channel, longWaitNs), "an event with nothing sent");
            final long waitedNs = System.nanoTime() - startNs;
            assertTrue(waitedNs < longWaitNs / 3, "an interrupted thread waited " +
                TimeUnit.NANOSECONDS.toMillis(waitedNs) + " ms for an event");
            assertTrue(Thread.currentThread().isInterrupted(), "the wait consumed the interrupt");

            // The arm still stands: the next completion queues its event, and an interrupted thread takes it.
            sendAndReceive(pair, 1, 0);
            assertSame(receiveCq, awaitAndAcknowledge(channel, longWaitNs), "the queued event was not taken");
            assertTrue(Thread.currentThread().isInterrupted());
        }
        finally
        {
            Thread.interrupted(); // the next test runs on this thread
        }
    }

    /** A connected QP pair whose receiving side's CQ was created on a completion channel. */
    private record ChannelPair(
        CompletionChannel channel, CompletionQueue sendCq, CompletionQueue receiveCq, QueuePair sender)
    {
    }

    /**
     * Open this test's devices, a completion channel on B, a QP pair (A sends, B receives on a CQ of that channel),
     * and post {@code receives} 64-byte RECVs on B, with WR ids from {@link #CHANNEL_PAIR_FIRST_RECEIVE_ID}.
     */
    private ChannelPair openChannelPair(final int receives)
    {
        openPerTest();
        final CompletionChannel channel = track(deviceB.createCompletionChannel());
        final CompletionQueue sendCq = track(deviceA.createCompletionQueue(64));
        final CompletionQueue receiveCq = trackBefore(channel, deviceB.createCompletionQueue(64, channel));
        final QueuePair sender = track(pdA.createQueuePair(queuePairConfig().completionQueue(sendCq)));
        final QueuePair receiver = track(pdB.createQueuePair(queuePairConfig().completionQueue(receiveCq)));
        connect(sender, receiver);
        for (int i = 0; i < receives; i++)
        {
            assertEquals(PostResult.OK, receiver.postReceive(CHANNEL_PAIR_FIRST_RECEIVE_ID + i,
                regionB.address() + i * 64L, 64, regionB.lkey()));
        }
        return new ChannelPair(channel, sendCq, receiveCq, sender);
    }

    private void sendAndReceive(final ChannelPair pair, final long wrId, final int extraFlags)
    {
        batch.clear();
        batch.add().send(wrId, regionA.address(), 8, regionA.lkey(), SendFlags.SIGNALED | extraFlags);
        assertEquals(PostResult.OK, pair.sender().postSend(batch));
        assertEquals(WorkCompletionStatus.SUCCESS, awaitOne(pair.sendCq(), pair.receiveCq(), "SEND " + wrId).status());
        final WorkCompletion wc = awaitOne(pair.receiveCq(), null, "RECV of SEND " + wrId);
        assertEquals(WorkCompletionStatus.SUCCESS, wc.status(), wc.toString());
    }

    // ------------------------------------------------------------------------------------------------------
    // Helpers.

    private static long sourceOffset(final int q, final int seq, final int perQueuePair)
    {
        return ((long)q * perQueuePair + seq) * 8;
    }

    private static long message(final int q, final int seq)
    {
        return (long)(q + 1) << 40 | 0xABC0_0000L | seq;
    }

    private static void connect(final QueuePair a, final QueuePair b)
    {
        a.modifyToInit();
        b.modifyToInit();
        a.modifyToReadyToReceive(b.localConnectionInfo());
        b.modifyToReadyToReceive(a.localConnectionInfo());
        a.modifyToReadyToSend();
        b.modifyToReadyToSend();
    }

    /**
     * Poll {@code queue} (and {@code alsoProgress}, whose QPs a soft provider advances when it is polled) for one
     * completion.
     */
    private WorkCompletion awaitOne(final CompletionQueue queue, final CompletionQueue alsoProgress, final String what)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MS);
        final WorkCompletion[] one = WorkCompletion.newArray(1);
        final WorkCompletion[] other = WorkCompletion.newArray(64);
        while (System.nanoTime() < deadlineNs)
        {
            if (queue.poll(one, 1) == 1)
            {
                return one[0];
            }
            if (null != alsoProgress)
            {
                assertEquals(0, alsoProgress.poll(other, 0));
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(50));
        }
        throw new AssertionError("no completion for " + what + " within " + TIMEOUT_MS + " ms");
    }

    /**
     * {@link CompletionChannel#awaitEvent} and acknowledge the event at once, so that no event is left unacknowledged
     * when an assertion fails (verbs blocks destroying a CQ until its events are acknowledged).
     */
    private static CompletionQueue awaitAndAcknowledge(final CompletionChannel channel, final long timeoutNs)
    {
        final CompletionQueue cq = channel.awaitEvent(timeoutNs);
        if (null != cq)
        {
            channel.ackEvents(cq, 1);
        }
        return cq;
    }

    private <T extends AutoCloseable> T track(final T resource)
    {
        perTest.push(resource);
        return resource;
    }

    /**
     * Track a CQ of {@code channel}, tracked earlier, so that the CQ closes first (verbs refuses to destroy a channel
     * with CQs on it).
     */
    private CompletionQueue trackBefore(final CompletionChannel channel, final CompletionQueue cq)
    {
        return track(cq);
    }

    private static void closeQuietly(final AutoCloseable closeable)
    {
        if (null == closeable)
        {
            return;
        }
        try
        {
            closeable.close();
        }
        catch (final Exception ex)
        {
            System.err.println("close failed: " + ex);
        }
    }
}
