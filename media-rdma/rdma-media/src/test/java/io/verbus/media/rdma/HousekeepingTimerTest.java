package io.verbus.media.rdma;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HousekeepingTimerTest
{
    private static final long START_NS = 1_000_000_000L;

    @Test
    void shouldNotBeDueBeforeOneIntervalHasPassed()
    {
        final HousekeepingTimer timer = new HousekeepingTimer(START_NS);

        assertFalse(timer.isDue(START_NS));
        assertFalse(timer.isDue(START_NS + HousekeepingTimer.INTERVAL_NS - 1));
    }

    @Test
    void shouldBeDueOnceAnIntervalHasPassedThenStartTheNextIntervalThere()
    {
        final HousekeepingTimer timer = new HousekeepingTimer(START_NS);
        final long dueNs = START_NS + HousekeepingTimer.INTERVAL_NS + 7;

        assertTrue(timer.isDue(dueNs));
        assertFalse(timer.isDue(dueNs));
        assertFalse(timer.isDue(dueNs + HousekeepingTimer.INTERVAL_NS - 1));
        assertTrue(timer.isDue(dueNs + HousekeepingTimer.INTERVAL_NS));
    }

    @Test
    void shouldBeDueAcrossTheWrapOfTheNanoClock()
    {
        final HousekeepingTimer timer = new HousekeepingTimer(Long.MAX_VALUE - 10);

        assertTrue(timer.isDue(Long.MAX_VALUE - 10 + HousekeepingTimer.INTERVAL_NS));
    }
}
