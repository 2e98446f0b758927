package io.verbus.fabric.soft;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.*;

/**
 * Fault injection of the soft providers, in one process: initiator and responder on two devices, the
 * responder's faults set through its own context.
 */
public abstract class SoftFaultInjectionTest
{
    protected static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);

    protected Fabric initiatorFabric;
    protected Fabric responderFabric;
    protected FabricContext initiatorContext;
    protected FabricContext responderContext;
    protected Device initiator;
    protected Device responder;
    protected CompletionQueue initiatorCq;
    protected CompletionQueue responderCq;
    protected QueuePair requester;
    protected QueuePair target;
    protected MemoryRegion source;
    protected MemoryRegion sink;
    protected final WorkRequestBatch batch = new WorkRequestBatch(8);
    protected final WorkCompletion[] completions = WorkCompletion.newArray(16);

    protected abstract String provider();

    protected abstract FabricContext newContext();

    @BeforeEach
    void connect()
    {
        initiatorContext = newContext();
        responderContext = newContext();
        initiatorFabric = Fabrics.open(provider(), initiatorContext);
        responderFabric = Fabrics.open(provider(), responderContext);
        initiator = initiatorFabric.openDevice();
        responder = responderFabric.openDevice();
        final ProtectionDomain initiatorPd = initiator.allocateProtectionDomain();
        final ProtectionDomain responderPd = responder.allocateProtectionDomain();
        initiatorCq = initiator.createCompletionQueue(256);
        responderCq = responder.createCompletionQueue(256);
        requester = initiatorPd.createQueuePair(new QueuePairConfig().completionQueue(initiatorCq)
            .retryTimeoutNs(TimeUnit.SECONDS.toNanos(5)));
        target = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        requester.connect(target.localConnectionInfo());
        target.connect(requester.localConnectionInfo());
        source = initiatorPd.registerMemory(initiator.allocateMemory(2 << 20), AccessFlags.LOCAL_WRITE);
        sink = responderPd.registerMemory(responder.allocateMemory(2 << 20),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
    }

    @AfterEach
    void close()
    {
        initiatorFabric.close();
        responderFabric.close();
    }

    protected WorkCompletion awaitCompletion(final CompletionQueue cq)
    {
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (System.nanoTime() < deadlineNs)
        {
            if (cq.poll(completions, 1) == 1)
            {
                return completions[0];
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
        return fail("no completion within " + TimeUnit.NANOSECONDS.toMillis(TIMEOUT_NS) + " ms");
    }

    @ParameterizedTest
    @EnumSource(FaultInjection.WritePlacement.class)
    void shouldPlaceEveryByteOfAWriteWhateverTheByteOrderWithinIt(final FaultInjection.WritePlacement placement)
    {
        responderContext.faultInjection().writePlacement(placement);
        initiatorContext.faultInjection().writePlacement(placement);
        final int length = (1 << 20) + 13;
        final byte[] data = new byte[length];
        new Random(7).nextBytes(data);
        MemorySegment.copy(data, 0, source.segment(), ValueLayout.JAVA_BYTE, 0, length);
        batch.clear().add().write(1, source.address(), length, source.lkey(), sink.address() + 3, sink.rkey(),
            SendFlags.SIGNALED);
        assertEquals(PostResult.OK, requester.postSend(batch));
        assertEquals(WorkCompletionStatus.SUCCESS, awaitCompletion(initiatorCq).status());
        assertArrayEquals(data, sink.segment().asSlice(3, length).toArray(ValueLayout.JAVA_BYTE));
    }

    @ParameterizedTest
    @EnumSource(value = FaultInjection.WritePlacement.class, names = {"REVERSE", "SHUFFLED"})
    void shouldShowAWritesDataBeforeTheCounterWrittenAfterItEvenWithBytesReordered(
        final FaultInjection.WritePlacement placement) throws InterruptedException
    {
        responderContext.faultInjection().writePlacement(placement);
        initiatorContext.faultInjection().writePlacement(placement);
        final int dataLength = 4096;
        final long counterOffset = 1 << 20;
        final int rounds = 250; // values stay below 256: one byte per round, the counter never carries
        final AtomicReference<String> violation = new AtomicReference<>();
        final MemorySegment ring = sink.segment();
        final Thread observer = new Thread(() ->
        {
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            long seen = 0;
            while (seen < rounds && System.nanoTime() < deadlineNs && null == violation.get())
            {
                final long counter = (long)COUNTER.getAcquire(ring, counterOffset);
                if (counter != seen)
                {
                    seen = counter;
                    // Every byte of the data WRITE posted before counter value N carries N (or a later value).
                    for (int i = 0; i < dataLength; i += 512)
                    {
                        final byte value = ring.get(ValueLayout.JAVA_BYTE, i);
                        if ((value & 0xFF) < counter)
                        {
                            violation.set("counter " + counter + " visible before data byte " + i + " = " + value);
                        }
                    }
                }
                else
                {
                    Thread.yield();
                }
            }
        });
        observer.start();
        final MemorySegment staging = source.segment();
        int posted = 0;
        while (posted < rounds)
        {
            final long round = posted + 1;
            staging.asSlice(0, dataLength).fill((byte)round);
            staging.set(ValueLayout.JAVA_LONG_UNALIGNED, dataLength, round);
            batch.clear();
            batch.add().write(round, source.address(), dataLength, source.lkey(), sink.address(), sink.rkey(), 0);
            batch.add().write(round, source.address() + dataLength, 8, source.lkey(),
                sink.address() + counterOffset, sink.rkey(), SendFlags.SIGNALED);
            assertEquals(PostResult.OK, requester.postSend(batch));
            assertEquals(WorkCompletionStatus.SUCCESS, awaitCompletion(initiatorCq).status());
            posted++;
        }
        observer.join(TimeUnit.SECONDS.toMillis(40));
        assertNull(violation.get());
        assertEquals(rounds, ring.get(ValueLayout.JAVA_LONG_UNALIGNED, counterOffset));
    }

    private static final VarHandle COUNTER = ValueLayout.JAVA_LONG.varHandle();

    /**
     * With WRITEs of one QP placed out of order, the counter protocol is fooled: a reader that sees the counter of
     * round N can still find round N-1's data. The test requires the fault to be observed at least once: it runs
     * 200 rounds, and more (up to 2,000) until the observer has been fooled, because on a loaded host the observer
     * may miss every 1 ms window in which a late WRITE holds the data back.
     */
    @Test
    void shouldLetACounterBeSeenBeforeItsDataWhenWritesArePlacedOutOfOrder() throws InterruptedException
    {
        final long holdNs = TimeUnit.MILLISECONDS.toNanos(1);
        responderContext.faultInjection().crossWritePlacement(0.5, 42, holdNs);
        initiatorContext.faultInjection().crossWritePlacement(0.5, 42, holdNs);
        final int dataLength = 64;
        final long counterOffset = 1 << 20;
        final int minRounds = 200;
        final int maxRounds = 2_000;
        final AtomicInteger fooled = new AtomicInteger();
        final AtomicLong lastRound = new AtomicLong(Long.MAX_VALUE);
        final MemorySegment ring = sink.segment();
        final AtomicLong seenByObserver = new AtomicLong();
        final Thread observer = new Thread(() ->
        {
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            long seen = 0;
            while (seen < lastRound.get() && System.nanoTime() < deadlineNs)
            {
                final long counter = (long)COUNTER.getAcquire(ring, counterOffset);
                if (counter != seen)
                {
                    seen = counter;
                    if (ring.get(ValueLayout.JAVA_BYTE, 0) != dataByte(counter))
                    {
                        fooled.incrementAndGet();
                    }
                    seenByObserver.set(seen);
                }
                else
                {
                    Thread.onSpinWait();
                }
            }
        });
        observer.start();
        final MemorySegment staging = source.segment();
        int rounds = 0;
        for (int round = 1; round <= maxRounds && (round <= minRounds || 0 == fooled.get()); round++)
        {
            staging.asSlice(0, dataLength).fill(dataByte(round));
            staging.set(ValueLayout.JAVA_LONG_UNALIGNED, dataLength, round);
            batch.clear();
            batch.add().write(round, source.address(), dataLength, source.lkey(), sink.address(), sink.rkey(), 0);
            batch.add().write(round, source.address() + dataLength, 8, source.lkey(),
                sink.address() + counterOffset, sink.rkey(), SendFlags.SIGNALED);
            assertEquals(PostResult.OK, requester.postSend(batch));
            assertEquals(WorkCompletionStatus.SUCCESS, awaitCompletion(initiatorCq).status());
            assertEquals(dataByte(round), ring.get(ValueLayout.JAVA_BYTE, dataLength - 1), "data placed by completion");
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (seenByObserver.get() < round && System.nanoTime() < deadlineNs)
            {
                Thread.yield();
            }
            rounds = round;
        }
        lastRound.set(rounds);
        observer.join(TimeUnit.SECONDS.toMillis(120));
        final long reorders = responderContext.faultInjection().crossWriteReorders() +
            initiatorContext.faultInjection().crossWriteReorders();
        assertTrue(reorders > 0, "the fault never placed a WRITE after a later one");
        assertTrue(fooled.get() > 0, "in " + rounds + " rounds with " + reorders + " WRITEs placed late, the " +
            "observer never saw a counter before its data");
    }

    /** The byte round {@code round}'s data is filled with: never 0 (the ring's initial bytes), never the last's. */
    private static byte dataByte(final long round)
    {
        return (byte)(1 + round % 250);
    }

    /**
     * With the same fault, a WRITE_WITH_IMM's receive completion still comes after every earlier WRITE of the QP is
     * placed: the responder that waits for the completion always finds the data.
     */
    @Test
    void shouldPlaceEveryEarlierWriteBeforeTheWriteWithImmediateCompletes() throws InterruptedException
    {
        final long holdNs = TimeUnit.MICROSECONDS.toNanos(200);
        responderContext.faultInjection().crossWritePlacement(0.5, 7, holdNs);
        initiatorContext.faultInjection().crossWritePlacement(0.5, 7, holdNs);
        final int dataLength = 256;
        final long secondOffset = 4096;
        final long immediateOffset = 1 << 20;
        final int rounds = 200;
        for (int i = 0; i < 64; i++)
        {
            assertEquals(PostResult.OK, target.postReceive(i, sink.address() + (1 << 19), 0, sink.lkey()));
        }
        final AtomicReference<String> violation = new AtomicReference<>();
        final AtomicInteger checked = new AtomicInteger();
        final Thread receiver = new Thread(() ->
        {
            final WorkCompletion[] received = WorkCompletion.newArray(8);
            final MemorySegment ring = sink.segment();
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            int reposted = 64;
            while (checked.get() < rounds && System.nanoTime() < deadlineNs && null == violation.get())
            {
                final int n = responderCq.poll(received, received.length);
                for (int i = 0; i < n; i++)
                {
                    final int round = received[i].immediateData();
                    if (!received[i].isSuccess() || !received[i].hasImmediate())
                    {
                        violation.set("unexpected " + received[i]);
                    }
                    for (long offset : new long[] {0, dataLength - 1, secondOffset, secondOffset + dataLength - 1})
                    {
                        final int value = ring.get(ValueLayout.JAVA_BYTE, offset) & 0xFF;
                        if (value != (round & 0xFF))
                        {
                            violation.set("immediate " + round + " completed before byte " + offset + " = " + value);
                        }
                    }
                    if (ring.get(ValueLayout.JAVA_LONG_UNALIGNED, immediateOffset) != round)
                    {
                        violation.set("immediate " + round + " completed before its own bytes");
                    }
                    target.postReceive(reposted++, sink.address() + (1 << 19), 0, sink.lkey());
                    checked.incrementAndGet();
                }
                if (n == 0)
                {
                    Thread.onSpinWait();
                }
            }
        });
        receiver.start();
        final MemorySegment staging = source.segment();
        for (int round = 1; round <= rounds && null == violation.get(); round++)
        {
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (checked.get() < round - 1 && System.nanoTime() < deadlineNs)
            {
                Thread.yield();
            }
            staging.asSlice(0, 2 * dataLength).fill((byte)round);
            staging.set(ValueLayout.JAVA_LONG_UNALIGNED, 2 * dataLength, round);
            batch.clear();
            batch.add().write(round, source.address(), dataLength, source.lkey(), sink.address(), sink.rkey(), 0);
            batch.add().write(round, source.address() + dataLength, dataLength, source.lkey(),
                sink.address() + secondOffset, sink.rkey(), 0);
            batch.add().writeWithImmediate(round, source.address() + 2 * dataLength, 8, source.lkey(),
                sink.address() + immediateOffset, sink.rkey(), round, SendFlags.SIGNALED);
            assertEquals(PostResult.OK, requester.postSend(batch));
            assertEquals(WorkCompletionStatus.SUCCESS, awaitCompletion(initiatorCq).status());
        }
        receiver.join(TimeUnit.SECONDS.toMillis(60));
        assertNull(violation.get());
        assertEquals(rounds, checked.get());
        assertTrue(responderContext.faultInjection().crossWriteReorders() +
            initiatorContext.faultInjection().crossWriteReorders() > 0, "the fault never placed a WRITE late");
    }

    @Test
    void shouldHoldOperationsForTheInjectedDelay()
    {
        responderContext.faultInjection().operationDelay(300, TimeUnit.MILLISECONDS);
        initiatorContext.faultInjection().operationDelay(300, TimeUnit.MILLISECONDS);
        final long startNs = System.nanoTime();
        batch.clear().add().write(1, source.address(), 64, source.lkey(), sink.address(), sink.rkey(),
            SendFlags.SIGNALED);
        assertEquals(PostResult.OK, requester.postSend(batch));
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        assertEquals(0, initiatorCq.poll(completions, 1), "completed before the injected delay passed");
        assertEquals(WorkCompletionStatus.SUCCESS, awaitCompletion(initiatorCq).status());
        assertTrue(System.nanoTime() - startNs >= TimeUnit.MILLISECONDS.toNanos(250));
    }

    @Test
    void shouldFailWithRetryExceededAndFlushWhenTheResponderIsKilled()
    {
        // The SEND waits for a RECV at the responder, so it is outstanding when the responder dies.
        batch.clear();
        batch.add().send(1, source.address(), 8, source.lkey(), SendFlags.SIGNALED);
        batch.add().write(2, source.address(), 8, source.lkey(), sink.address(), sink.rkey(), SendFlags.SIGNALED);
        assertEquals(PostResult.OK, requester.postSend(batch));
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50));
        responderContext.faultInjection().kill();
        final WorkCompletion first = awaitCompletion(initiatorCq);
        assertEquals(1, first.wrId());
        assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, first.status());
        final WorkCompletion second = awaitCompletion(initiatorCq);
        assertEquals(2, second.wrId());
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, second.status());
        assertEquals(QueuePairState.ERR, requester.state());
    }
}
