package io.verbus.fabric.tcp;

import io.verbus.fabric.FabricContext;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.soft.SoftFaultInjectionTest;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.*;

class TcpFaultInjectionTest extends SoftFaultInjectionTest
{
    @Override
    protected String provider()
    {
        return "tcp";
    }

    @Override
    protected FabricContext newContext()
    {
        return new FabricContext().tcpAddress("127.0.0.1");
    }

    @Test
    void shouldAllocateNothingOnTheNicThreadsInSteadyState()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        final long[] nicThreads = Thread.getAllStackTraces().keySet().stream()
            .filter(thread -> thread.getName().startsWith("verbus-tcp-nic-")).mapToLong(Thread::threadId).toArray();
        assertTrue(nicThreads.length >= 2, "NIC threads of both devices");
        writeSignaledInlineWrites(1_000);
        final java.util.List<Long> perRound = new java.util.ArrayList<>();
        for (int round = 0; round < 4; round++)
        {
            long before = 0;
            for (final long id : nicThreads)
            {
                before += threads.getThreadAllocatedBytes(id);
            }
            writeSignaledInlineWrites(1_000);
            long after = 0;
            for (final long id : nicThreads)
            {
                after += threads.getThreadAllocatedBytes(id);
            }
            perRound.add(after - before);
            if (after == before)
            {
                break;
            }
        }
        assertEquals(0L, perRound.getLast(), "bytes the NIC threads allocated per 1,000 WRITEs: " + perRound);
    }

    private void writeSignaledInlineWrites(final int count)
    {
        for (int i = 0; i < count; i++)
        {
            batch.clear().add().write(i, source.address(), 32, 0, sink.address(), sink.rkey(),
                SendFlags.SIGNALED | SendFlags.INLINE);
            assertEquals(PostResult.OK, requester.postSend(batch));
            assertEquals(WorkCompletionStatus.SUCCESS, awaitCompletion(initiatorCq).status());
        }
    }

    @Test
    void shouldErrTheQueuePairAndFlushOutstandingWorkRequestsWhenTheConnectionDrops()
    {
        // Delay at the responder keeps the WRs outstanding while the connection is dropped.
        responderContext.faultInjection().operationDelay(2, TimeUnit.SECONDS);
        batch.clear();
        for (int i = 0; i < 3; i++)
        {
            batch.add().write(i, source.address(), 64, source.lkey(), sink.address(), sink.rkey(), SendFlags.SIGNALED);
        }
        assertEquals(PostResult.OK, requester.postSend(batch));
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100));
        initiatorContext.faultInjection().dropConnections();
        final WorkCompletion first = awaitCompletion(initiatorCq);
        assertEquals(0, first.wrId());
        assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, first.status());
        for (int i = 1; i < 3; i++)
        {
            final WorkCompletion next = awaitCompletion(initiatorCq);
            assertEquals(i, next.wrId());
            assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, next.status());
        }
        assertEquals(QueuePairState.ERR, requester.state());
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (target.state() != QueuePairState.ERR && System.nanoTime() < deadlineNs)
        {
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        assertEquals(QueuePairState.ERR, target.state(), "the responder loses the connection too");
    }
}
