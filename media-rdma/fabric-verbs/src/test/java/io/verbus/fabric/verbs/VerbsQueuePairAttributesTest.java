package io.verbus.fabric.verbs;

import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The connection-time attributes the QP derives from the SPI's config, in the units verbs wants.
 */
class VerbsQueuePairAttributesTest
{
    @Test
    void shouldMapMtuBytesToTheVerbsEnum()
    {
        assertEquals(IbvConstants.IBV_MTU_256, VerbsQueuePair.mtuCode(256));
        assertEquals(IbvConstants.IBV_MTU_1024, VerbsQueuePair.mtuCode(1024));
        assertEquals(IbvConstants.IBV_MTU_4096, VerbsQueuePair.mtuCode(4096));
        assertEquals(4096, IbvConstants.mtuBytes(IbvConstants.IBV_MTU_4096));
    }

    @Test
    void shouldCoverTheRetryTimeoutWithSevenAttemptsButNeverGoBelowTheSoftRoceMinimum()
    {
        // 2 s over 7 attempts (retry count 6: rxe takes 7 as "forever") = 286 ms each; 2^16 * 4.096 us = 268 ms
        // falls short, 2^17 * 4.096 us = 537 ms covers it.
        assertEquals(6, VerbsQueuePair.RETRY_COUNT);
        assertEquals(17, VerbsQueuePair.ackTimeoutCode(TimeUnit.SECONDS.toNanos(2)));
        assertEquals(
            VerbsQueuePair.MIN_ACK_TIMEOUT_CODE, VerbsQueuePair.ackTimeoutCode(TimeUnit.MICROSECONDS.toNanos(10)));
        assertEquals(31, VerbsQueuePair.ackTimeoutCode(TimeUnit.DAYS.toNanos(10)));
    }

    @Test
    void shouldPickTheSmallestRnrTimerThatWaitsAtLeastTheConfiguredTime()
    {
        assertEquals(1, VerbsQueuePair.rnrTimerCode(TimeUnit.MICROSECONDS.toNanos(10)));
        assertEquals(14, VerbsQueuePair.rnrTimerCode(TimeUnit.MICROSECONDS.toNanos(1100)));
        assertEquals(20, VerbsQueuePair.rnrTimerCode(TimeUnit.MILLISECONDS.toNanos(10)));
        assertEquals(0, VerbsQueuePair.rnrTimerCode(TimeUnit.SECONDS.toNanos(1)));
    }
}
