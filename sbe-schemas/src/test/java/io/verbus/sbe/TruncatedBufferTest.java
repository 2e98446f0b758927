package io.verbus.sbe;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A receiver is handed fewer bytes than the message claims: bounds checking must say so, and a decoder confined to
 * the received bytes must fail loudly rather than decode bytes that never arrived.
 */
class TruncatedBufferTest
{
    private static final long SEED = 0x5BE_F022L;

    static List<SampleMessages.Sample> samples()
    {
        return SampleMessages.all();
    }

    @ParameterizedTest
    @MethodSource("samples")
    void shouldReportEveryTruncatedLengthAsAnError(final SampleMessages.Sample sample)
    {
        final UnsafeBuffer full = new UnsafeBuffer(new byte[512]);
        final int length = sample.encode(full, 0);

        for (int truncated = 0; truncated < length; truncated++)
        {
            final int result = MessageBounds.check(full, 0, truncated);
            assertTrue(result < 0, sample + " truncated to " + truncated + " of " + length + " gave " + result);
        }
    }

    @ParameterizedTest
    @MethodSource("samples")
    void shouldNeverDecodeBytesBeyondATruncatedBuffer(final SampleMessages.Sample sample)
    {
        final byte[] bytes = new byte[512];
        final UnsafeBuffer full = new UnsafeBuffer(bytes);
        final int length = sample.encode(full, 0);
        final String expected = DecodeAll.describe(full, 0);

        for (int truncated = MessageBounds.MESSAGE_HEADER_LENGTH; truncated < length; truncated++)
        {
            // The received bytes only: a read past them must throw, never return what happens to lie beyond.
            final UnsafeBuffer received = new UnsafeBuffer(bytes, 0, truncated);
            try
            {
                final String decoded = DecodeAll.describe(received, 0);
                // Only padding lay beyond the cut, so what was decoded must be exactly the original message.
                assertEquals(expected, decoded, sample + " truncated to " + truncated);
            }
            catch (final IndexOutOfBoundsException expectedFailure)
            {
                // the decoder refused to read beyond the received bytes
            }
        }
        assertThrows(IndexOutOfBoundsException.class, () -> DecodeAll.describe(new UnsafeBuffer(bytes, 0, 12), 0));
    }

    @Test
    void shouldNeverThrowOrOverrunOnFuzzedLengthsAndHeaders()
    {
        final Random random = new Random(SEED);
        final List<SampleMessages.Sample> samples = SampleMessages.all();
        final byte[] bytes = new byte[512];
        final UnsafeBuffer buffer = new UnsafeBuffer(bytes);
        int accepted = 0;

        for (int iteration = 0; iteration < 20_000; iteration++)
        {
            java.util.Arrays.fill(bytes, (byte)0);
            final SampleMessages.Sample sample = samples.get(random.nextInt(samples.size()));
            final int length = sample.encode(buffer, 0);
            final int corruptions = random.nextInt(4);
            for (int c = 0; c < corruptions; c++)
            {
                bytes[random.nextInt(length)] = (byte)random.nextInt(256);
            }
            // Half the time everything arrived (only corruption), half the time a random prefix did.
            final int received = random.nextBoolean() ? length : random.nextInt(length + 1);

            final int result;
            try
            {
                result = MessageBounds.check(buffer, 0, received);
            }
            catch (final RuntimeException ex)
            {
                fail("check threw on " + sample + " received=" + received + ": " + ex);
                return;
            }

            if (result > 0)
            {
                accepted++;
                assertTrue(result <= received, "claimed " + result + " of " + received);
                final UnsafeBuffer confined = new UnsafeBuffer(bytes, 0, received);
                try
                {
                    DecodeAll.describe(confined, 0);
                }
                catch (final IndexOutOfBoundsException ex)
                {
                    fail("accepted " + sample + " (" + result + " of " + received + " bytes) " +
                        "but decoding overran: " + ex);
                }
                catch (final IllegalArgumentException unknownTemplateInOtherwiseValidShape)
                {
                    // a corrupted template id can land on another known message whose shape also fits
                }
            }
        }
        assertTrue(accepted > 2_000, "fuzzing should also produce messages that fit, got " + accepted);
    }

    @Test
    void shouldRejectAGroupCountThatClaimsMoreEntriesThanArrived()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final int length = SampleMessages.incrementalRefresh(buffer, 0);
        buffer.putShort(8 + 20 + 2, (short)0xFFFF, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(MessageBounds.TRUNCATED_GROUP, MessageBounds.check(buffer, 0, length));
    }

    @Test
    void shouldRejectTextLongerThanTheBytesReceived()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);
        final int length = SampleMessages.orderReject(buffer, 0);
        buffer.putShort(8 + 24, (short)400, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(MessageBounds.TRUNCATED_VAR_DATA, MessageBounds.check(buffer, 0, length));
    }

    @Test
    void shouldRejectForeignSchemasAndShortHeaders()
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
        assertEquals(MessageBounds.TRUNCATED_HEADER, MessageBounds.check(buffer, 0, 7));
        buffer.putShort(4, (short)999, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(MessageBounds.UNKNOWN_SCHEMA, MessageBounds.check(buffer, 0, 64));
        assertEquals(MessageBounds.TRUNCATED_HEADER, MessageBounds.check(buffer, 60, 8), "range beyond capacity");
    }
}
