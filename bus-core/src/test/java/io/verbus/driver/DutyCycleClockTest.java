package io.verbus.driver;

import io.verbus.ThreadingMode;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * A composite duty cycle reads its clock once, at its start, and every agent in it sees that time; the next cycle
 * sees the clock's new time. (An idle invoke() used to read the clock once per agent: half of what it cost here.)
 */
class DutyCycleClockTest
{
    private final AtomicLong sourceNs = new AtomicLong(1_000);
    private final AtomicLong sourceReads = new AtomicLong();
    private final NanoClock source = () ->
    {
        sourceReads.incrementAndGet();
        return sourceNs.get();
    };

    @Test
    void shouldReadTheSourceOnceAtTheStartOfEachInvokedCycle()
    {
        final DutyCycleClock dutyCycleClock = new DutyCycleClock(source);
        final List<Long> seen = new ArrayList<>();
        final Agent sender = recording("sender", dutyCycleClock.clock(), seen);
        final Agent receiver = recording("receiver", dutyCycleClock.clock(), seen);
        final Agent conductor = recording("conductor", dutyCycleClock.clock(), seen);
        try (AgentThreads threads = new AgentThreads(
            ThreadingMode.INVOKER, "noop", Throwable::printStackTrace, conductor, sender, receiver, -1, -1, -1,
            dutyCycleClock))
        {
            sourceReads.set(0);
            sourceNs.set(5_000);
            threads.invoker().invoke();
            assertEquals(1, sourceReads.get(), "clock reads in one duty cycle of three agents");
            assertEquals(List.of(5_000L, 5_000L, 5_000L), seen);

            seen.clear();
            sourceNs.set(9_000);
            threads.invoker().invoke();
            assertEquals(2, sourceReads.get());
            assertEquals(List.of(9_000L, 9_000L, 9_000L), seen, "the next cycle sees the new time");
        }
    }

    @Test
    void shouldStartAtTheSourceTimeBeforeAnyCycle()
    {
        sourceNs.set(42);
        assertEquals(42, new DutyCycleClock(source).clock().nanoTime());
    }

    @Test
    void shouldLeaveDedicatedAgentsToTheirOwnClock()
    {
        try (AgentThreads threads = new AgentThreads(
            ThreadingMode.DEDICATED, "sleeping", Throwable::printStackTrace,
            recording("conductor", source, new ArrayList<>()), recording("sender", source, new ArrayList<>()),
            recording("receiver", source, new ArrayList<>()), -1, -1, -1, null))
        {
            assertNull(threads.invoker());
            assertEquals(3, threads.runners().size());
        }
    }

    private static Agent recording(final String name, final NanoClock clock, final List<Long> seen)
    {
        return new Agent()
        {
            public int doWork()
            {
                synchronized (seen)
                {
                    seen.add(clock.nanoTime());
                }
                return 0;
            }

            public String roleName()
            {
                return name;
            }
        };
    }
}
