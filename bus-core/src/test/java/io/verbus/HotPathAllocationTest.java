package io.verbus;

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
 * allocated-bytes counter.
 */
class HotPathAllocationTest
{
    private static final int WARM_UP_ROUNDS = 30_000;
    private static final int MEASURED_ROUNDS = 20_000;

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
            runRounds(WARM_UP_ROUNDS, exclusive, concurrent, subscription, buffer, claim, handler, controlledHandler, sent);

            final long before = threadMXBean.getCurrentThreadAllocatedBytes();
            runRounds(MEASURED_ROUNDS, exclusive, concurrent, subscription, buffer, claim, handler, controlledHandler,
                sent);
            final long allocated = threadMXBean.getCurrentThreadAllocatedBytes() - before;

            assertEquals(0, allocated, "bytes allocated by the hot path after warm-up");
            assertTrue(sent[0] > MEASURED_ROUNDS, "the measured rounds must have published messages: " + sent[0]);
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
}
