package io.verbus.log;

import io.verbus.media.MediaSender;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DirectSendHandOffTest
{
    /** Counts calls and fails if two threads are ever inside it at once. */
    static final class RecordingSender implements MediaSender
    {
        final AtomicInteger inside = new AtomicInteger();
        final AtomicReference<String> overlap = new AtomicReference<>();
        final AtomicLong sendNowCalls = new AtomicLong();
        final AtomicLong doWorkCalls = new AtomicLong();
        final AtomicInteger closeCalls = new AtomicInteger();
        volatile Runnable duringDoWork = () -> {};
        /** What {@link #hasUnsentData()} answers after the next call: calls that will leave data behind. */
        final AtomicInteger callsLeavingUnsent = new AtomicInteger();
        private boolean unsent;

        public int doWork()
        {
            enter();
            try
            {
                doWorkCalls.incrementAndGet();
                duringDoWork.run();
                unsent = callsLeavingUnsent.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
                return 1;
            }
            finally
            {
                inside.decrementAndGet();
            }
        }

        public boolean supportsDirectSend()
        {
            return true;
        }

        public int sendNow()
        {
            enter();
            try
            {
                sendNowCalls.incrementAndGet();
                unsent = callsLeavingUnsent.getAndUpdate(n -> Math.max(0, n - 1)) > 0;
                return 1;
            }
            finally
            {
                inside.decrementAndGet();
            }
        }

        public boolean hasUnsentData()
        {
            return unsent;
        }

        public void close()
        {
            closeCalls.incrementAndGet();
        }

        private void enter()
        {
            if (inside.incrementAndGet() != 1)
            {
                overlap.compareAndSet(null, "two threads inside the sender at once: " + Thread.currentThread());
            }
        }
    }

    private final AtomicLong nowNs = new AtomicLong(1_000_000_000L);
    private final RecordingSender sender = new RecordingSender();
    private final DirectSendHandOff handOff = new DirectSendHandOff(sender, nowNs::get);

    @Test
    void shouldLeaveTheSenderToAnActiveWriter()
    {
        assertEquals(1, handOff.writerSendNow(), "a send, nothing else");
        assertEquals(0, handOff.doWork());
        nowNs.addAndGet(DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS / 2);
        assertEquals(2, handOff.writerSendNow(), "the send, then the duty cycle the agent asked for");
        assertEquals(0, handOff.doWork());
        nowNs.addAndGet(DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS / 2);
        assertEquals(0, handOff.doWork(), "the writer sent within the idle threshold");

        assertEquals(1, sender.doWorkCalls.get(), "run by the writer, on the agent's request");
        assertEquals(2, sender.sendNowCalls.get());
        assertEquals(0, handOff.agentCycles());
    }

    @Test
    void shouldHaveAWriterThatNeverPausesRunTheFullDutyCycleOnTheAgentsCadenceOnly()
    {
        final long sendIntervalNs = TimeUnit.MICROSECONDS.toNanos(10);
        final long agentIntervalNs = TimeUnit.MICROSECONDS.toNanos(50);
        final long runNs = TimeUnit.MILLISECONDS.toNanos(10);
        for (long t = 0; t < runNs; t += sendIntervalNs)
        {
            handOff.writerSendNow();
            if (t % agentIntervalNs == 0)
            {
                assertEquals(0, handOff.doWork(), "the agent never drives the sender of an active writer");
            }
            nowNs.addAndGet(sendIntervalNs);
        }

        assertEquals(runNs / sendIntervalNs, sender.sendNowCalls.get(), "every send only posts");
        assertEquals(runNs / DirectSendHandOff.WRITER_DUTY_INTERVAL_NS, sender.doWorkCalls.get(),
            "one full duty cycle per cadence interval, run by the writer");
        assertEquals(0, handOff.agentCycles());
        assertNull(sender.overlap.get());
    }

    @Test
    void shouldDriveTheSenderFromTheAgentOnceTheWriterIsIdle()
    {
        handOff.writerSendNow();
        handOff.doWork();
        nowNs.addAndGet(DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS);

        for (int i = 0; i < 5; i++)
        {
            assertEquals(1, handOff.doWork());
            nowNs.addAndGet(TimeUnit.MILLISECONDS.toNanos(100));
        }
        assertEquals(5, sender.doWorkCalls.get());
        assertEquals(5, handOff.agentCycles());

        assertEquals(1, handOff.writerSendNow(), "the writer takes the sender back at once");
        assertEquals(0, handOff.doWork(), "and the agent steps back");
    }

    @Test
    void shouldHaveTheAgentSendAtOnceWhatTheWritersSendLeftBehindAndStepBackWhenAllIsSent()
    {
        // The writer's send and the next cycle find the send queue full (the NIC is behind); the one after sends all.
        sender.callsLeavingUnsent.set(2);
        assertEquals(1, handOff.writerSendNow());
        assertTrue(handOff.hasUnsentData());

        // The clock does not move: the writer is not idle, yet the agent must not wait for it to be (the end of a
        // burst would wait for the writer's next call, or the idle threshold).
        assertEquals(1, handOff.doWork(), "the agent sends what the writer left");
        assertTrue(handOff.hasUnsentData(), "still behind after one cycle");
        assertEquals(1, handOff.doWork());
        assertFalse(handOff.hasUnsentData(), "all sent");
        assertEquals(0, handOff.doWork(), "and the agent leaves the active writer alone again");

        assertEquals(2, sender.doWorkCalls.get());
        assertEquals(2, handOff.agentCycles());
        assertEquals(1, sender.sendNowCalls.get());
        assertTrue(handOff.writerSendNow() > 0, "the writer takes the sender back at once");
        assertEquals(2, sender.sendNowCalls.get());
        assertNull(sender.overlap.get());
    }

    @Test
    void shouldRunAnotherAgentCycleWhenTheWriterMetTheAgentSoNothingAppendedIsLeftUnsent()
    {
        nowNs.addAndGet(DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS * 2);
        handOff.doWork(); // first sight of the writer's count
        nowNs.addAndGet(DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS * 2);
        final AtomicInteger writerResult = new AtomicInteger(-1);
        sender.duringDoWork = () ->
        {
            sender.duringDoWork = () -> {};
            // The writer appends and tries to send while the agent holds the sender: it must not get in or wait.
            writerResult.set(handOff.writerSendNow());
        };

        assertEquals(2, handOff.doWork());
        assertEquals(0, writerResult.get());
        assertEquals(2, sender.doWorkCalls.get(), "the agent ran a second cycle for the writer's data");
        assertEquals(0, sender.sendNowCalls.get());
        assertNull(sender.overlap.get());
    }

    @Test
    void shouldCloseTheSenderOnceAndThenDriveItNoMore()
    {
        handOff.close();
        handOff.close();
        assertEquals(1, sender.closeCalls.get());
        assertTrue(handOff.isClosed());

        nowNs.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertEquals(0, handOff.writerSendNow());
        assertEquals(0, handOff.writerDoWork());
        handOff.doWork();
        nowNs.addAndGet(TimeUnit.SECONDS.toNanos(1));
        assertEquals(0, handOff.doWork());
        assertEquals(0, sender.doWorkCalls.get() + sender.sendNowCalls.get());
    }

    @Test
    void shouldNeverLetTheWriterAndTheAgentIntoTheSenderAtOnce() throws InterruptedException
    {
        final DirectSendHandOff realClock = new DirectSendHandOff(sender, System::nanoTime);
        final AtomicBoolean stop = new AtomicBoolean();
        final Thread agent = new Thread(() ->
        {
            while (!stop.get())
            {
                realClock.doWork();
                Thread.yield();
            }
        }, "hand-off-agent");
        agent.start();
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        long writerSends = 0;
        try
        {
            // Bursts with idle gaps, so the agent steps in and out between them.
            // Until the agent has stepped in at least once (bounded by the deadline): a loaded machine may starve it.
            for (int burst = 0;
                (burst < 200 || 0 == realClock.agentCycles()) && System.nanoTime() < deadlineNs;
                burst++)
            {
                for (int i = 0; i < 200; i++)
                {
                    writerSends += realClock.writerSendNow();
                }
                realClock.writerDoWork();
                java.util.concurrent.locks.LockSupport.parkNanos(1 + (burst % 3) * 1_500_000L);
            }
        }
        finally
        {
            stop.set(true);
            agent.join(TimeUnit.SECONDS.toMillis(10));
        }
        realClock.close();

        assertNull(sender.overlap.get());
        assertFalse(agent.isAlive());
        assertTrue(writerSends > 0);
        assertTrue(realClock.agentCycles() > 0, "the agent never stepped in during idle gaps");
        assertEquals(1, sender.closeCalls.get());
    }

    @Test
    void shouldAllocateNothingOnTheWriterPathOrInTheAgentsIdleDutyAfterWarmUp()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)java.lang.management.ManagementFactory.getThreadMXBean();
        final Runnable cycle = () ->
        {
            for (int i = 0; i < 1_000; i++)
            {
                handOff.writerSendNow();
                handOff.writerDoWork();
                handOff.doWork();
                nowNs.addAndGet(DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS);
                handOff.doWork();
            }
        };
        for (int i = 0; i < 20; i++)
        {
            cycle.run(); // warm up: let the JIT compile the paths
        }
        final long before = threads.getCurrentThreadAllocatedBytes();
        cycle.run();
        final long allocated = threads.getCurrentThreadAllocatedBytes() - before;

        assertEquals(0, allocated, "bytes allocated by 1,000 writer sends and agent idle cycles");
        assertTrue(handOff.agentCycles() > 0);
    }
}
