package io.verbus.archive;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * Sequence-numbered, checksummed messages of mixed sizes (some longer than an MTU, so fragmented), and a checker
 * that finds any lost, duplicated, reordered or corrupt one.
 * <pre>
 *   0 sequence long | 8 length int | 12 checksum int | 16 payload (a function of the sequence)
 * </pre>
 */
final class TestMessages
{
    static final int HEADER_LENGTH = 16;
    static final int MAX_LENGTH = 4000;

    private TestMessages()
    {
    }

    static int lengthFor(final long sequence)
    {
        final long mix = mix(sequence);
        final int bucket = (int)((mix >>> 8) % 100);
        final int spread = (int)((mix >>> 20) & 0x7fff_ffff);
        if (bucket < 70)
        {
            return HEADER_LENGTH + spread % 113;                 // 16..128
        }
        if (bucket < 97)
        {
            return 129 + spread % 1248;                          // 129..1376: one frame at the default MTU
        }
        return 1377 + spread % (MAX_LENGTH - 1376);              // fragmented at the default MTU
    }

    /** Writes message {@code sequence} at 0 and returns its length. */
    static int encode(final MutableDirectBuffer buffer, final long sequence)
    {
        final int length = lengthFor(sequence);
        buffer.putLong(0, sequence);
        buffer.putInt(8, length);
        long word = mix(sequence ^ 0x9E3779B97F4A7C15L);
        int i = HEADER_LENGTH;
        for (; i + 8 <= length; i += 8)
        {
            buffer.putLong(i, word);
            word = word * 0x9E3779B97F4A7C15L + i;
        }
        for (; i < length; i++)
        {
            buffer.putByte(i, (byte)word);
            word >>>= 8;
        }
        buffer.putInt(12, checksum(buffer, HEADER_LENGTH, length - HEADER_LENGTH));
        return length;
    }

    static int checksum(final DirectBuffer buffer, final int offset, final int length)
    {
        long hash = 0xcbf29ce484222325L;
        int i = 0;
        for (; i + 8 <= length; i += 8)
        {
            hash = (hash ^ buffer.getLong(offset + i)) * 0x100000001b3L;
            hash ^= hash >>> 29;
        }
        for (; i < length; i++)
        {
            hash = (hash ^ buffer.getByte(offset + i)) * 0x100000001b3L;
        }
        return (int)(hash ^ (hash >>> 32));
    }

    static long mix(final long v)
    {
        long z = v + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /** Checks whole (reassembled) messages: every one exactly once, in order, intact. */
    static final class Checker
    {
        long expected;
        long received;
        String failure;

        Checker(final long firstSequence)
        {
            this.expected = firstSequence;
        }

        void onMessage(final DirectBuffer buffer, final int offset, final int length)
        {
            if (null != failure)
            {
                return;
            }
            final long sequence = buffer.getLong(offset);
            if (sequence != expected)
            {
                failure = (sequence < expected ? "duplicated/reordered" : "lost") + ": got " + sequence +
                    ", expected " + expected;
                return;
            }
            final int declared = buffer.getInt(offset + 8);
            if (declared != length || length != lengthFor(sequence))
            {
                failure = "corrupt length at " + sequence + ": " + length + " / " + declared;
                return;
            }
            if (buffer.getInt(offset + 12) != checksum(buffer, offset + HEADER_LENGTH, length - HEADER_LENGTH))
            {
                failure = "corrupt payload at " + sequence;
                return;
            }
            expected++;
            received++;
        }
    }
}
