package io.verbus.test;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class MessageStreamTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[MessageStream.MAX_FRAGMENTED_LENGTH]);

    @Test
    void shouldAcceptEveryMessageOfEitherProfileInOrder()
    {
        for (final MessageStream.Sizes sizes : MessageStream.Sizes.values())
        {
            final MessageStream.Checker checker = new MessageStream.Checker(0, sizes);
            for (long sequence = 0; sequence < 2_000; sequence++)
            {
                final int length = MessageStream.encode(buffer, 0, sequence, sizes);
                assertTrue(length >= MessageStream.HEADER_LENGTH && length <= sizes.maxLength(), "length " + length);
                checker.onMessage(buffer, 0, length);
            }

            assertNull(checker.failure, sizes.name());
            assertEquals(2_000, checker.received);
        }
    }

    @Test
    void shouldFindAFlippedPayloadByte()
    {
        final MessageStream.Checker checker = new MessageStream.Checker(0, MessageStream.Sizes.FRAGMENTED);
        long sequence = 0;
        int length;
        while ((length = MessageStream.encode(buffer, 0, sequence, MessageStream.Sizes.FRAGMENTED)) <=
            MessageStream.HEADER_LENGTH)
        {
            checker.onMessage(buffer, 0, length);
            sequence++;
        }
        buffer.putByte(length - 1, (byte)(buffer.getByte(length - 1) ^ 1));

        checker.onMessage(buffer, 0, length);

        assertEquals("corrupt payload (CRC32) at " + sequence, checker.failure);
    }

    @Test
    void shouldFindALostMessageAndLetALateJoinerStartAnywhere()
    {
        final MessageStream.Checker checker = new MessageStream.Checker(-1);
        checker.onMessage(buffer, 0, MessageStream.encode(buffer, 500));
        checker.onMessage(buffer, 0, MessageStream.encode(buffer, 502));

        assertEquals(1, checker.received);
        assertEquals("lost: got 502, expected 501", checker.failure);
    }
}
