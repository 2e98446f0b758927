package io.verbus.soak;

import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

class SoakMessagesTest
{
    @Test
    void shouldCountLostDuplicatedAndReorderedSequencesWithoutStopping()
    {
        final SoakMessages.SourceCheck check = new SoakMessages.SourceCheck();
        for (final long sequence : new long[]{ 10, 11, 13, 14, 12, 14, 17, 15, 20 })
        {
            check.onMessage(sequence, 20);
        }
        check.onEnd(22);
        // adopted 10; 12 and 15 late (reordered); 14 again (duplicated); 16, 18, 19 missing, 21 never came (lost)
        assertEquals(2, check.reordered);
        assertEquals(1, check.duplicated);
        assertEquals(4, check.lost);
        assertEquals(9, check.received);
    }

    @Test
    void shouldCountACorruptMessageOnceAndKeepItsPlace()
    {
        final SoakMessages.LaneCheck check = new SoakMessages.LaneCheck(2, SoakLanes.sizesOf(2));
        final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(SoakMessages.MAX_LENGTH);
        final MessageStream.Crc crc = new MessageStream.Crc();
        for (long sequence = 0; sequence < 100; sequence++)
        {
            for (int thread = 0; thread < 2; thread++)
            {
                final SoakMessages.Sizes sizes = SoakLanes.sizesOf(2)[thread];
                final int length = SoakMessages.encode(buffer, 0, SoakMessages.source(2, thread), sequence, sizes, crc);
                if (50 == sequence && 1 == thread)
                {
                    SoakMessages.corrupt(buffer, 0, length);
                }
                check.onMessage(buffer, 0, length);
            }
        }
        final long[] totals = check.totals();
        assertEquals(199, totals[0]);
        assertEquals(0, totals[2] + totals[3] + totals[4]);
        assertEquals(1, totals[5]);
    }
}
