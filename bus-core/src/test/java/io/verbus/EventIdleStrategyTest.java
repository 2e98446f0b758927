package io.verbus;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link EventIdleStrategy} against a scripted subscription: it spins its empty polls first, then waits on the
 * subscription with its bound, starts spinning again after work, and never waits on a subscription that cannot.
 */
class EventIdleStrategyTest
{
    private final List<Long> waits = new ArrayList<>();
    private boolean canAwait = true;

    private Subscription subscription()
    {
        return (Subscription)Proxy.newProxyInstance(getClass().getClassLoader(), new Class<?>[]{ Subscription.class },
            (proxy, method, args) -> switch (method.getName())
            {
                case "canAwaitData" -> canAwait;
                case "awaitData" ->
                {
                    waits.add((Long)args[0]);
                    yield false;
                }
                default -> throw new UnsupportedOperationException(method.getName());
            });
    }

    @Test
    void shouldSpinItsEmptyPollsThenWaitWithItsBoundAndSpinAgainAfterWork()
    {
        final EventIdleStrategy idle = new EventIdleStrategy(subscription(), 3, 7_000_000);
        for (int i = 0; i < 3; i++)
        {
            idle.idle(0);
        }
        assertEquals(List.of(), waits, "spun, no wait yet");
        idle.idle(0);
        idle.idle();
        assertEquals(List.of(7_000_000L, 7_000_000L), waits);

        idle.idle(5); // work: spin again before the next wait
        idle.idle(0);
        idle.idle(0);
        idle.idle(0);
        assertEquals(2, waits.size());
        idle.idle(0);
        assertEquals(3, waits.size());

        idle.reset();
        idle.idle(0);
        assertEquals(3, waits.size());
        assertEquals("event", idle.alias());
    }

    @Test
    void shouldParkInsteadOfWaitingOnASubscriptionThatCannotWait()
    {
        canAwait = false;
        final EventIdleStrategy idle = new EventIdleStrategy(subscription(), 0, 1_000_000);
        for (int i = 0; i < 5; i++)
        {
            idle.idle(0); // parks FALLBACK_PARK_NS
        }
        assertEquals(List.of(), waits, "never waits on a subscription that cannot");
    }

    @Test
    void shouldRefuseBadArguments()
    {
        assertThrows(NullPointerException.class, () -> new EventIdleStrategy(null));
        assertThrows(IllegalArgumentException.class, () -> new EventIdleStrategy(subscription(), -1, 1));
        assertThrows(IllegalArgumentException.class, () -> new EventIdleStrategy(subscription(), 0, 0));
    }
}
