package io.verbus.fabric.soft;

import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An initiator claims receives from a pool whose header the pool's owner (another process, under shm) writes: what
 * it reads there is checked against the depth validated when the pool was opened.
 */
class SoftSharedReceiveQueueClaimTest
{
    private static final int DEPTH = 8;

    private final MemorySegment header = Arena.ofAuto().allocate(SoftSharedReceiveQueue.RING_OFFSET + 8L * DEPTH, 64);

    @Test
    void shouldClaimThePostedDescriptorsInOrderThenAnswerRnr()
    {
        post(2, 5, 3);
        assertEquals(5, SoftSharedReceiveQueue.claim(header, DEPTH));
        assertEquals(3, SoftSharedReceiveQueue.claim(header, DEPTH));
        assertEquals(-1, SoftSharedReceiveQueue.claim(header, DEPTH));
    }

    @Test
    void shouldUseTheValidatedDepthNotTheOneTheOwnerRewrote()
    {
        post(0, 4);
        header.set(ValueLayout.JAVA_INT, SoftSharedReceiveQueue.DEPTH_OFFSET, 0); // once threw ArithmeticException
        assertEquals(4, SoftSharedReceiveQueue.claim(header, DEPTH));
    }

    @Test
    void shouldRefuseADescriptorOutsideThePool()
    {
        post(0, DEPTH + 5);
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> SoftSharedReceiveQueue.claim(header, DEPTH));
        assertTrue(ex.getMessage().contains("descriptor 13"), ex.getMessage());
        post(1, -1);
        assertThrows(IllegalStateException.class, () -> SoftSharedReceiveQueue.claim(header, DEPTH));
    }

    @Test
    void shouldAnswerRnrForAClaimedCountTheOwnerSetBelowZeroOrAbovePosted()
    {
        post(0, 1);
        header.set(ValueLayout.JAVA_LONG, SoftSharedReceiveQueue.CLAIMED_OFFSET, -3);
        assertEquals(-1, SoftSharedReceiveQueue.claim(header, DEPTH));
        header.set(ValueLayout.JAVA_LONG, SoftSharedReceiveQueue.CLAIMED_OFFSET, 7);
        assertEquals(-1, SoftSharedReceiveQueue.claim(header, DEPTH));
    }

    /** Descriptors posted from ring position {@code from} on; the claimed count is set to {@code from}. */
    private void post(final int from, final int... descriptors)
    {
        for (int i = 0; i < descriptors.length; i++)
        {
            header.set(ValueLayout.JAVA_INT, SoftSharedReceiveQueue.RING_OFFSET + 4L * ((from + i) % DEPTH),
                descriptors[i]);
        }
        header.set(ValueLayout.JAVA_LONG, SoftSharedReceiveQueue.CLAIMED_OFFSET, from);
        header.set(ValueLayout.JAVA_LONG, SoftSharedReceiveQueue.POSTED_OFFSET, (long)from + descriptors.length);
    }
}
