package io.verbus.fabric.soft;

import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.*;

class SoftCompletionQueueTest
{
    private final List<Long> reclaimed = new ArrayList<>();
    private final SoftCompletionQueue.SlotReclaimer reclaimer =
        (receive, index) -> reclaimed.add(receive ? -index : index);

    private boolean offer(final SoftCompletionQueue cq, final long wrId)
    {
        return cq.offer(wrId, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.RDMA_WRITE, 8, 0, false, 3,
            reclaimer, false, wrId);
    }

    @Test
    void shouldRefuseCompletionsBeyondItsDepthUntilPolled()
    {
        final SoftCompletionQueue cq = new SoftCompletionQueue(3, null);
        assertTrue(offer(cq, 1));
        assertTrue(offer(cq, 2));
        assertTrue(offer(cq, 3));
        assertFalse(offer(cq, 4), "a soft CQ never overruns");
        final WorkCompletion[] wcs = WorkCompletion.newArray(2);
        assertEquals(2, cq.poll(wcs, 2));
        assertEquals(1, wcs[0].wrId());
        assertEquals(2, wcs[1].wrId());
        assertTrue(offer(cq, 4));
        assertEquals(2, cq.poll(wcs, 8), "never more than the array holds");
        assertEquals(List.of(1L, 2L, 3L, 4L), reclaimed, "slots are handed back as completions are polled");
    }

    @Test
    void shouldKeepEveryCompletionOfConcurrentProducersExactlyOnce() throws InterruptedException
    {
        final SoftCompletionQueue cq = new SoftCompletionQueue(64, null);
        final int perProducer = 20_000;
        final Thread[] producers = new Thread[2];
        for (int p = 0; p < producers.length; p++)
        {
            final long base = (long)p * perProducer;
            producers[p] = new Thread(() ->
            {
                for (int i = 0; i < perProducer; i++)
                {
                    while (!cq.offer(base + i, WorkCompletionStatus.SUCCESS, WorkCompletionOpcode.SEND, 0, 0, false, 0,
                        null, false, 0))
                    {
                        Thread.yield();
                    }
                }
            });
            producers[p].start();
        }
        final boolean[] seen = new boolean[2 * perProducer];
        final long[] lastPerProducer = {-1, -1};
        final WorkCompletion[] wcs = WorkCompletion.newArray(16);
        int total = 0;
        final long deadlineNs = System.nanoTime() + 30_000_000_000L;
        while (total < seen.length && System.nanoTime() < deadlineNs)
        {
            final int n = cq.poll(wcs, wcs.length);
            for (int i = 0; i < n; i++)
            {
                final int id = (int)wcs[i].wrId();
                assertFalse(seen[id], "duplicate " + id);
                seen[id] = true;
                final int producer = id / perProducer;
                assertTrue(id > lastPerProducer[producer], "one producer's completions stay in order");
                lastPerProducer[producer] = id;
            }
            total += n;
            if (n == 0)
            {
                Thread.yield();
            }
        }
        for (final Thread producer : producers)
        {
            producer.join(10_000);
        }
        assertEquals(seen.length, total);
    }
}
