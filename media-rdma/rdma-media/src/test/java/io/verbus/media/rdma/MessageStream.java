package io.verbus.media.rdma;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.zip.CRC32;

/**
 * Sequence-numbered, CRC32-checked messages of mixed sizes, and a checker that finds any lost, duplicated,
 * reordered or corrupt one.
 * <pre>
 *   0 sequence long | 8 length int | 12 CRC32 int | 16 payload (deterministic from the sequence)
 * </pre>
 * The CRC covers the sequence, the length and the payload, so a message whose header was swapped with another's
 * fails too. Sizes follow a {@link Sizes} profile that both ends must agree on.
 */
final class MessageStream
{
    static final int HEADER_LENGTH = 16;
    /** Largest message of the {@link Sizes#MIXED} profile: one frame at the default MTU (1408 - 32). */
    static final int MAX_LENGTH = 1376;
    /** Largest message of the {@link Sizes#FRAGMENTED} profile: maxMessageLength of a 64 KB term. */
    static final int MAX_FRAGMENTED_LENGTH = 8192;

    private static final int CRC_OFFSET = 12;
    private static final ThreadLocal<Crc> ENCODER_CRC = ThreadLocal.withInitial(Crc::new);

    /** Message size profiles. */
    enum Sizes
    {
        /** 16..1376 bytes, mostly small: every message one frame at the default MTU. */
        MIXED,
        /** 16..8192 bytes, a fifth of them longer than the MTU: fragmented and rejoined by a FragmentAssembler. */
        FRAGMENTED;

        int lengthFor(final long sequence)
        {
            return this == MIXED ? MessageStream.lengthFor(sequence) : fragmentedLengthFor(sequence);
        }

        int maxLength()
        {
            return this == MIXED ? MAX_LENGTH : MAX_FRAGMENTED_LENGTH;
        }
    }

    private MessageStream()
    {
    }

    static int lengthFor(final long sequence)
    {
        final long mix = mix(sequence);
        final int bucket = (int)((mix >>> 8) % 100);
        final int spread = (int)((mix >>> 20) & 0x7fff_ffff);
        if (bucket < 70)
        {
            return HEADER_LENGTH + spread % 113;              // 16..128
        }
        if (bucket < 95)
        {
            return 129 + spread % 384;                        // 129..512
        }
        return 513 + spread % (MAX_LENGTH - 512);             // 513..1376
    }

    private static int fragmentedLengthFor(final long sequence)
    {
        final long mix = mix(sequence);
        final int bucket = (int)((mix >>> 8) % 100);
        final int spread = (int)((mix >>> 20) & 0x7fff_ffff);
        if (bucket < 60)
        {
            return HEADER_LENGTH + spread % 497;                                   // 16..512
        }
        if (bucket < 80)
        {
            return 513 + spread % (MAX_LENGTH - 512);                              // 513..1376
        }
        return MAX_LENGTH + 1 + spread % (MAX_FRAGMENTED_LENGTH - MAX_LENGTH);     // 1377..8192
    }

    /** Write message {@code sequence} of the {@link Sizes#MIXED} profile into the buffer at 0; returns its length. */
    static int encode(final MutableDirectBuffer buffer, final long sequence)
    {
        return encode(buffer, 0, sequence, Sizes.MIXED);
    }

    /** Write message {@code sequence} of a profile into the buffer at {@code offset}; returns its length. */
    static int encode(final MutableDirectBuffer buffer, final int offset, final long sequence, final Sizes sizes)
    {
        final int length = sizes.lengthFor(sequence);
        buffer.putLong(offset, sequence);
        buffer.putInt(offset + 8, length);
        long word = mix(sequence ^ 0x9E3779B97F4A7C15L);
        int i = HEADER_LENGTH;
        for (; i + 8 <= length; i += 8)
        {
            buffer.putLong(offset + i, word);
            word = word * 0x9E3779B97F4A7C15L + i;
        }
        for (; i < length; i++)
        {
            buffer.putByte(offset + i, (byte)word);
            word >>>= 8;
        }
        buffer.putInt(offset + CRC_OFFSET, ENCODER_CRC.get().of(buffer, offset, length));
        return length;
    }

    static long mix(final long v)
    {
        long z = v + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * CRC32 of a message's sequence, length and payload (the CRC field itself excluded), through the JDK's
     * intrinsic CRC32 over a reused scratch array: allocation-free after construction.
     */
    static final class Crc
    {
        private final CRC32 crc = new CRC32();
        private final byte[] scratch = new byte[MAX_FRAGMENTED_LENGTH];

        int of(final DirectBuffer buffer, final int offset, final int length)
        {
            buffer.getBytes(offset, scratch, 0, length);
            crc.reset();
            crc.update(scratch, 0, CRC_OFFSET);
            crc.update(scratch, HEADER_LENGTH, length - HEADER_LENGTH);
            return (int)crc.getValue();
        }
    }

    /** Checks one subscriber's stream: every message exactly once, in order, intact. */
    static final class Checker implements TestImageSink.Handler
    {
        private final Sizes sizes;
        private final Crc crc = new Crc();
        long expected;
        long received;
        String failure;

        Checker(final long firstSequence)
        {
            this(firstSequence, Sizes.MIXED);
        }

        Checker(final long firstSequence, final Sizes sizes)
        {
            this.expected = firstSequence;
            this.sizes = sizes;
        }

        public void onFragment(final UnsafeBuffer buffer, final int offset, final int length)
        {
            onMessage(buffer, offset, length);
        }

        /** Checks one whole message (for a fragmented profile: as rejoined by a FragmentAssembler). */
        void onMessage(final DirectBuffer buffer, final int offset, final int length)
        {
            if (null != failure)
            {
                return;
            }
            if (length < HEADER_LENGTH || length > sizes.maxLength())
            {
                failure = "corrupt length " + length + " after " + (expected - 1);
                return;
            }
            final long sequence = buffer.getLong(offset);
            if (expected < 0)
            {
                expected = sequence; // a late joiner starts wherever the stream is
            }
            if (sequence != expected)
            {
                failure = (sequence < expected ? "duplicated/reordered" : "lost") + ": got " + sequence +
                    ", expected " + expected;
                return;
            }
            final int declared = buffer.getInt(offset + 8);
            if (declared != length || length != sizes.lengthFor(sequence))
            {
                failure = "corrupt length at " + sequence + ": " + length + " / " + declared;
                return;
            }
            if (buffer.getInt(offset + CRC_OFFSET) != crc.of(buffer, offset, length))
            {
                failure = "corrupt payload (CRC32) at " + sequence;
                return;
            }
            expected++;
            received++;
        }
    }
}
