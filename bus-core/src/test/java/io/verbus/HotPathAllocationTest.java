package io.verbus;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * offer, tryClaim/commit, poll and controlledPoll allocate nothing once warm, measured with the thread's
 * allocated-bytes counter; nor do the Aeron API additions (gathered and reserved-value offers, padding, bounded polls,
 * peeks and block polls).
 */
class HotPathAllocationTest
{
    private static final int WARM_UP_ROUNDS = 30_000;
    private static final long MEASURED_MESSAGES = 20_000;
    private static final int PASSES = 5;

    @TempDir
    Path tempDir;

    private final com.sun.management.ThreadMXBean threadMXBean =
        (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();

    private long consumed;

    @Test
    void shouldNotAllocateOnTheHotPathOfExclusiveAndConcurrentPublications()
    {
        assertTrue(threadMXBean.isThreadAllocatedMemorySupported());
        threadMXBean.setThreadAllocatedMemoryEnabled(true);
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).idleStrategy("backoff")))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 11);
            final ExclusivePublication exclusive = verbus.addExclusivePublication("ipc:term-length=64k", 11);
            final Publication concurrent = verbus.addPublication("ipc:term-length=64k", 11);
            TestSupport.await("connected", () -> exclusive.isConnected() && concurrent.isConnected());

            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(2048));
            final BufferClaim claim = new BufferClaim();
            final FragmentHandler handler = (b, o, l, h) -> consumed += l;
            final ControlledFragmentHandler controlledHandler = (b, o, l, h) ->
            {
                consumed += l;
                return ControlledFragmentHandler.Action.CONTINUE;
            };

            final long[] sent = new long[1];
            runRounds(
                WARM_UP_ROUNDS, exclusive, concurrent, subscription, buffer, claim, handler, controlledHandler, sent);

            // Measure passes of MEASURED_MESSAGES messages each (back pressure is part of the hot path too), bounded by
            // time. A late JIT deoptimization can allocate a few hundred bytes once, so: every pass must stay below one
            // byte per message, and at least one whole pass must allocate nothing at all.
            final long[] allocatedPerPass = new long[PASSES];
            long minAllocated = Long.MAX_VALUE;
            for (int pass = 0; pass < PASSES && minAllocated > 0; pass++)
            {
                sent[0] = 0;
                final long deadlineNs = System.nanoTime() + 20_000_000_000L;
                final long before = threadMXBean.getCurrentThreadAllocatedBytes();
                while (sent[0] < MEASURED_MESSAGES && System.nanoTime() < deadlineNs)
                {
                    runRounds(
                        1000, exclusive, concurrent, subscription, buffer, claim, handler, controlledHandler, sent);
                }
                allocatedPerPass[pass] = threadMXBean.getCurrentThreadAllocatedBytes() - before;
                minAllocated = Math.min(minAllocated, allocatedPerPass[pass]);
                assertTrue(sent[0] >= MEASURED_MESSAGES, "the pass must have published messages: " + sent[0]);
                assertTrue(allocatedPerPass[pass] < MEASURED_MESSAGES,
                    "allocation grows with messages: " + java.util.Arrays.toString(allocatedPerPass));
            }

            assertEquals(0, minAllocated, "bytes allocated per pass: " + java.util.Arrays.toString(allocatedPerPass));
            assertTrue(consumed > 0);
        }
    }

    private static void runRounds(
        final int rounds,
        final ExclusivePublication exclusive,
        final Publication concurrent,
        final Subscription subscription,
        final UnsafeBuffer buffer,
        final BufferClaim claim,
        final FragmentHandler handler,
        final ControlledFragmentHandler controlledHandler,
        final long[] sent)
    {
        for (int i = 0; i < rounds; i++)
        {
            final int length = 8 + (i & 63) * 24;
            if (exclusive.offer(buffer, 0, length) > 0)
            {
                sent[0]++;
            }
            if (concurrent.offer(buffer, 0, length, buffer, 0, 16) > 0)
            {
                sent[0]++;
            }
            if (exclusive.tryClaim(64, claim) > 0)
            {
                claim.buffer().putLong(claim.offset(), i);
                claim.commit();
                sent[0]++;
            }
            if (concurrent.tryClaim(64, claim) > 0)
            {
                claim.abort();
            }
            if (0 == (i & 1))
            {
                subscription.poll(handler, 10);
            }
            else
            {
                subscription.controlledPoll(controlledHandler, 10);
            }
            if (0 == (i & 255))
            {
                // Let the conductor raise the limits (it sleeps when idle), without allocating here.
                Thread.yield();
            }
        }
    }

    @Test
    void shouldNotAllocateOnTheHotPathsOfTheAeronApiAdditions()
    {
        assertTrue(threadMXBean.isThreadAllocatedMemorySupported());
        threadMXBean.setThreadAllocatedMemoryEnabled(true);
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).idleStrategy("backoff")))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 12);
            final ExclusivePublication exclusive = verbus.addExclusivePublication("ipc:term-length=64k", 12);
            final Publication concurrent = verbus.addPublication("ipc:term-length=64k", 12);
            TestSupport.await("connected", () -> exclusive.isConnected() && concurrent.isConnected() &&
                2 == subscription.imageCount());
            final Image exclusiveImage = subscription.imageBySessionId(exclusive.sessionId());
            final Image concurrentImage = subscription.imageBySessionId(concurrent.sessionId());

            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
            final DirectBufferVector[] vectors = {
                new DirectBufferVector(buffer, 0, 40), new DirectBufferVector(buffer, 100, 1500) };
            final ReservedValueSupplier supplier = (termBuffer, termOffset, frameLength) -> frameLength;
            final FragmentHandler handler = (b, o, l, h) -> consumed += l;
            final ControlledFragmentHandler peekHandler = (b, o, l, h) -> ControlledFragmentHandler.Action.CONTINUE;
            final BlockHandler blockHandler = (b, o, l, s, t) -> consumed += l;

            final long[] sent = new long[1];
            final Runnable round = () ->
            {
                if (exclusive.offer(vectors, supplier) > 0)
                {
                    sent[0]++;
                }
                if (concurrent.offer(vectors) > 0)
                {
                    sent[0]++;
                }
                if (exclusive.offer(buffer, 0, 64, supplier) > 0)
                {
                    sent[0]++;
                }
                if (concurrent.offer(buffer, 0, 64, supplier) > 0)
                {
                    sent[0]++;
                }
                exclusive.appendPadding(32);
                final long position = exclusiveImage.position();
                exclusiveImage.controlledPeek(position, peekHandler, position + 4096);
                exclusiveImage.boundedPoll(handler, position + 2048, 10);
                exclusiveImage.blockPoll(blockHandler, 4096);
                concurrentImage.boundedControlledPoll(peekHandler, Long.MAX_VALUE, 10);
                subscription.blockPoll(blockHandler, 4096);
            };

            for (int i = 0; i < WARM_UP_ROUNDS; i++)
            {
                round.run();
                if (0 == (i & 255))
                {
                    Thread.yield();
                }
            }

            final long[] allocatedPerPass = new long[PASSES];
            long minAllocated = Long.MAX_VALUE;
            for (int pass = 0; pass < PASSES && minAllocated > 0; pass++)
            {
                sent[0] = 0;
                final long deadlineNs = System.nanoTime() + 20_000_000_000L;
                final long before = threadMXBean.getCurrentThreadAllocatedBytes();
                for (int i = 0; sent[0] < MEASURED_MESSAGES && System.nanoTime() < deadlineNs; i++)
                {
                    round.run();
                    if (0 == (i & 255))
                    {
                        Thread.yield();
                    }
                }
                allocatedPerPass[pass] = threadMXBean.getCurrentThreadAllocatedBytes() - before;
                minAllocated = Math.min(minAllocated, allocatedPerPass[pass]);
                assertTrue(sent[0] >= MEASURED_MESSAGES, "the pass must have published messages: " + sent[0]);
                assertTrue(allocatedPerPass[pass] < MEASURED_MESSAGES,
                    "allocation grows with messages: " + java.util.Arrays.toString(allocatedPerPass));
            }

            assertEquals(0, minAllocated, "bytes allocated per pass: " + java.util.Arrays.toString(allocatedPerPass));
            assertTrue(consumed > 0);
        }
    }
}
