package io.verbus.media.rdma;

import io.verbus.media.ImageBound;
import io.verbus.media.rdma.protocol.SlotLayout;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.ByteBuffer;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bound the polling thread reads itself: only a consistent, monotonic, aligned position within two terms of
 * the consumer is ever accepted; a block caught half-written keeps the last good bound and is counted.
 */
class PositionBlockBoundTest
{
    private static final int TERM_LENGTH = 64 * 1024;

    private final UnsafeBuffer block = new UnsafeBuffer(ByteBuffer.allocateDirect(SlotLayout.BLOCK_LENGTH));
    private final PositionBlockBound bound = new PositionBlockBound(block, TERM_LENGTH, 4096);

    @Test
    void shouldStartAtTheJoinPositionBeforeThePublisherWritesAnything()
    {
        assertEquals(4096, bound.acquire(4096));
        assertEquals(0, bound.tornReads(), "an all-zero block is not a torn write");
    }

    @Test
    void shouldAcceptAConsistentBlockAndKeepItWhileNothingChanges()
    {
        SlotLayout.encode(block, 0, 8192, 1);
        assertEquals(8192, bound.acquire(4096));
        assertEquals(8192, bound.acquire(4096));
        assertEquals(8192, bound.bound());
        SlotLayout.encode(block, 0, 8192, 2);
        assertEquals(8192, bound.acquire(8192), "a heartbeat changes nothing");
    }

    @Test
    void shouldKeepTheLastGoodBoundWhenThePollingThreadReadsABlockTorn()
    {
        SlotLayout.encode(block, 0, 8192, 1);
        assertEquals(8192, bound.acquire(4096));

        // The next WRITE has placed its position but not yet its timestamp and check word, as a WRITE may: the old
        // check word still stands, so nothing new is trusted (and nothing else is even read). The image has consumed
        // up to the bound, so it reads the block.
        block.putLong(SlotLayout.VALUE_OFFSET, 16_384);
        assertEquals(8192, bound.acquire(8192));
        assertEquals(0, bound.tornReads());

        // Now its check word lands before its timestamp: the words disagree, so the block is torn.
        block.putLong(SlotLayout.CHECK_OFFSET, SlotLayout.check(16_384, 2));
        assertEquals(8192, bound.acquire(8192), "a check word that does not match its values is not trusted");
        assertEquals(8192, bound.acquire(8192));
        assertEquals(2, bound.tornReads());

        block.putLong(SlotLayout.TIMESTAMP_OFFSET, 2);
        assertEquals(16_384, bound.acquire(8192), "the WRITE has landed");
        assertNull(bound.corruptReason());
    }

    @Test
    void shouldNotReadTheBlockWhileFramesBelowTheBoundAreUnread()
    {
        SlotLayout.encode(block, 0, 16_384, 1);
        assertEquals(16_384, bound.acquire(4096));

        // The publisher moves on, then writes garbage; an image still reading below 16,384 looks at neither.
        SlotLayout.encode(block, 0, 32_768, 2);
        assertEquals(16_384, bound.acquire(8192), "the bound it holds, without reading the block");
        block.putLong(SlotLayout.VALUE_OFFSET, 12_288);
        assertEquals(16_384, bound.acquire(16_384 - 32));
        assertNull(bound.invalidReason());

        // Caught up, it reads the block: the check word no longer matches (torn); then a consistent block that goes
        // backwards closes the image as it always did.
        assertEquals(16_384, bound.acquire(16_384));
        assertEquals(1, bound.tornReads());
        SlotLayout.encode(block, 0, 12_288, 3);
        assertInvalid("backwards");
    }

    @Test
    void shouldRejectAPositionThatGoesBackwards()
    {
        SlotLayout.encode(block, 0, 8192, 1);
        assertEquals(8192, bound.acquire(4096));
        SlotLayout.encode(block, 0, 4096, 2);
        assertInvalid("backwards");
    }

    @Test
    void shouldRejectAMisalignedPosition()
    {
        SlotLayout.encode(block, 0, 8192 + 8, 1);
        assertInvalid("misaligned");
    }

    @Test
    void shouldRejectAPositionMoreThanTwoTermsAheadOfTheConsumer()
    {
        SlotLayout.encode(block, 0, 4096 + 2L * TERM_LENGTH + 32, 1);
        assertInvalid("two terms ahead");
    }

    @Test
    void shouldStayInvalidOnceRejectedEvenWhenAGoodBlockFollows()
    {
        SlotLayout.encode(block, 0, 8192, 1);
        assertEquals(8192, bound.acquire(4096));
        SlotLayout.encode(block, 0, 4096, 2);
        assertInvalid("backwards");
        assertEquals(ImageBound.INVALID, bound.acquire(4096), "asked again with the same block");
        SlotLayout.encode(block, 0, 12_288, 3);
        assertEquals(ImageBound.INVALID, bound.acquire(4096), "a later, plausible block does not revive the image");
    }

    @Test
    void shouldNotBelieveAnEndOfStreamBelowTheBound()
    {
        SlotLayout.encode(block, 0, 8192, 1);
        assertEquals(8192, bound.acquire(4096));
        SlotLayout.encode(block, 0, 4096, SlotLayout.END_OF_STREAM_TIMESTAMP);
        assertEquals(Long.MAX_VALUE, bound.endOfStreamPosition(), "data below the bound was delivered as sent");
        SlotLayout.encode(block, 0, 8192, SlotLayout.END_OF_STREAM_TIMESTAMP);
        assertEquals(8192, bound.endOfStreamPosition(), "at the bound");
        SlotLayout.encode(block, 0, 12_288, SlotLayout.END_OF_STREAM_TIMESTAMP);
        assertEquals(12_288, bound.endOfStreamPosition(), "above it: the last data is still to be acquired");
    }

    @Test
    void shouldRecordWhyTheImageClosedItselfForTheReceiverAgent()
    {
        bound.onImageCorrupt("corrupt frame at 4096");
        assertEquals("corrupt frame at 4096", bound.corruptReason());
    }

    private void assertInvalid(final String reasonPart)
    {
        assertEquals(ImageBound.INVALID, bound.acquire(bound.bound()), "read by an image consumed up to its bound");
        assertNotNull(bound.invalidReason());
        assertTrue(bound.invalidReason().contains(reasonPart), bound.invalidReason());
        assertNotNull(bound.corruptReason(), "the receiver agent sees it and drops the connection");
    }
}
