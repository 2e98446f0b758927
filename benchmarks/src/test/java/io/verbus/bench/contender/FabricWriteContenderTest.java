package io.verbus.bench.contender;

import io.verbus.bench.StreamPair;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The seed's one-sided stream counts only doorbells written whole. On shm a WRITE is placed by the posting thread
 * before {@code post} returns, so each step below sees exactly what the sends put in the receiver's memory; a torn
 * doorbell is what rxe's byte-at-a-time copy leaves for a moment, written here by hand.
 */
class FabricWriteContenderTest
{
    private static final int LENGTH = 64;

    @Test
    void shouldReadNoWordUntilTheWholeCheckedWordIsWritten() throws Exception
    {
        try (FabricLink link = FabricLink.open("shm", LENGTH))
        {
            assertEquals(FabricPeer.NO_WORD, link.b.readCheckedWord(FabricPeer.DOORBELL_OFFSET), "never written");

            link.a.batch.clear();
            link.a.addWriteOfCheckedWord(128, FabricPeer.DOORBELL_OFFSET);
            assertTrue(link.a.post());
            assertEquals(128, link.b.readCheckedWord(FabricPeer.DOORBELL_OFFSET));

            // 128 (0x80) being overwritten by 256 (0x100), torn: its second byte new, its first still old
            link.b.buffer.putLong(FabricPeer.DOORBELL_OFFSET, 0x0180);
            assertEquals(FabricPeer.NO_WORD, link.b.readCheckedWord(FabricPeer.DOORBELL_OFFSET));
        }
    }

    @Test
    void shouldNotCountMessagesForATornDoorbell() throws Exception
    {
        final FabricLink link = FabricLink.open("shm", LENGTH);
        try (StreamPair pair = FabricWriteContender.stream(link))
        {
            assertTrue(pair.publisher().send(LENGTH));
            assertTrue(pair.publisher().send(LENGTH));
            assertEquals(2, pollAll(pair));

            // Position 128 being overwritten by 256, torn as 0x180 = 384: four messages past 128 that were never sent.
            link.b.buffer.putLong(FabricPeer.DOORBELL_OFFSET, 0x0180);
            assertEquals(0, pollAll(pair));

            assertTrue(pair.publisher().send(LENGTH));
            assertTrue(pair.publisher().send(LENGTH));
            assertEquals(2, pollAll(pair), "the whole doorbell, 256, counts the two messages sent since 128");
        }
    }

    private static int pollAll(final StreamPair pair)
    {
        int total = 0;
        for (int i = 0; i < 10; i++)
        {
            total += pair.subscriber().poll(LENGTH);
        }
        return total;
    }
}
