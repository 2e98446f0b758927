package io.verbus.driver;

import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.NoOpIdleStrategy;
import org.agrona.concurrent.SleepingMillisIdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class IdleStrategiesTest
{
    @Test
    void shouldMapEveryNameToANewInstanceOfItsStrategy()
    {
        assertInstanceOf(BusySpinIdleStrategy.class, IdleStrategies.newIdleStrategy("busy-spin"));
        assertInstanceOf(NoOpIdleStrategy.class, IdleStrategies.newIdleStrategy("noop"));
        assertInstanceOf(YieldingIdleStrategy.class, IdleStrategies.newIdleStrategy("yielding"));
        assertInstanceOf(BackoffIdleStrategy.class, IdleStrategies.newIdleStrategy("backoff"));
        assertInstanceOf(SleepingMillisIdleStrategy.class, IdleStrategies.newIdleStrategy("sleeping"));
        assertNotSame(IdleStrategies.newIdleStrategy("backoff"), IdleStrategies.newIdleStrategy("backoff"));
    }

    @Test
    void shouldRejectAnUnknownNameListingTheKnownOnes()
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> IdleStrategies.newIdleStrategy("spin"));
        assertTrue(ex.getMessage().contains("unknown idle strategy 'spin'"));
        assertTrue(ex.getMessage().contains("[busy-spin, noop, yielding, backoff, sleeping]"), ex.getMessage());
    }

    @Test
    void shouldPointTheEventNameAtTheSubscriptionsOwnIdleStrategy()
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> IdleStrategies.newIdleStrategy("event"));
        assertTrue(ex.getMessage().contains("io.verbus.EventIdleStrategy(subscription)"), ex.getMessage());
    }
}
