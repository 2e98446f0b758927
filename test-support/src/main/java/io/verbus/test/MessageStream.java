package io.verbus.test;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.zip.CRC32;

/**
 * Sequence-numbered, CRC32-checked messages of mixed sizes, and a checker that finds any lost, duplicated,
 * reordered or corrupt one: the one message stream of the module tests (rdma media, archive).
 * <pre>
 *   0 sequence long | 8 length int | 12 CRC32 int | 16 payload (deterministic from the sequence)
 * </pre>
 * The CRC covers every byte but its own four, so a message whose header was swapped with another's fails too. Sizes
 * follow a {@link Sizes} profile that both ends must agree on. The soak's messages add a source to this header and
 * build on the same pieces: {@link #mix}, {@link #fillPayload} and {@link Crc}.
 */
public final class MessageStream
{
    public static final int LENGTH_OFFSET = 8;
    public static final int CRC_OFFSET = 12;
    /** Where the bytes after the CRC start: the CRC covers {@code [0, CRC_OFFSET)} and {@code [CRC_END, length)}. */
    public static final int CRC_END = CRC_OFFSET + 4;
    public static final int HEADER_LENGTH = CRC_END;
    /** Largest message of the {@link Sizes#MIXED} profile: one frame at the default MTU (1408 - 32). */
    public static final int MAX_LENGTH = 1376;
    /** Largest message of the {@link Sizes#FRAGMENTED} profile: maxMessageLength of a 64 KB term. */
    public static final int MAX_FRAGMENTED_LENGTH = 8192;
    /** Largest message of the {@link Sizes#RARELY_FRAGMENTED} profile. */
    public static final int MAX_RARELY_FRAGMENTED_LENGTH = 4000;

    private static final long GOLDEN_GAMMA = 0x9E3779B97F4A7C15L;
    private static final ThreadLocal<Crc> ENCODER_CRC = ThreadLocal.withInitial(Crc::new);

    /**
     * Message size profiles: three buckets of lengths, each uniform from one past the bucket before it (the first from
     * {@link #HEADER_LENGTH}) to its own largest length, chosen by the sequence's mix.
     */
    public enum Sizes
    {
        /** 16..1376 bytes, mostly small (70% up to 128, 25% up to 512): every message one frame at the default MTU. */
        MIXED(70, 128, 95, 512, MAX_LENGTH),
        /** 16..8192 bytes, a fifth of them longer than the MTU: fragmented and rejoined by a FragmentAssembler. */
        FRAGMENTED(60, 512, 80, MAX_LENGTH, MAX_FRAGMENTED_LENGTH),
        /** 16..4000 bytes, 3% longer than the MTU: the recordings of the archive tests, sized for their captures. */
        RARELY_FRAGMENTED(70, 128, 97, MAX_LENGTH, MAX_RARELY_FRAGMENTED_LENGTH);

        private final int firstPercent;
        private final int firstMaxLength;
        private final int secondPercent;
        private final int secondMaxLength;
        private final int maxLength;

        Sizes(
            final int firstPercent,
            final int firstMaxLength,
            final int secondPercent,
            final int secondMaxLength,
            final int maxLength)
        {
            this.firstPercent = firstPercent;
            this.firstMaxLength = firstMaxLength;
            this.secondPercent = secondPercent;
            this.secondMaxLength = secondMaxLength;
            this.maxLength = maxLength;
        }

        /** @return the length of message {@code sequence}, a function of the sequence alone. */
        public int lengthFor(final long sequence)
        {
            final long mix = mix(sequence);
            final int bucket = (int)((mix >>> 8) % 100);
            final int spread = (int)((mix >>> 20) & 0x7fff_ffff);
            if (bucket < firstPercent)
            {
                return HEADER_LENGTH + spread % (firstMaxLength - HEADER_LENGTH + 1);
            }
            if (bucket < secondPercent)
            {
                return firstMaxLength + 1 + spread % (secondMaxLength - firstMaxLength);
            }
            return secondMaxLength + 1 + spread % (maxLength - secondMaxLength);
        }

        public int maxLength()
        {
            return maxLength;
        }
    }

    private MessageStream()
    {
    }

    /** Write message {@code sequence} of the {@link Sizes#MIXED} profile into the buffer at 0; returns its length. */
    public static int encode(final MutableDirectBuffer buffer, final long sequence)
    {
        return encode(buffer, 0, sequence, Sizes.MIXED);
    }

    /** Write message {@code sequence} of a profile into the buffer at {@code offset}; returns its length. */
    public static int encode(final MutableDirectBuffer buffer, final int offset, final long sequence, final Sizes sizes)
    {
        final int length = sizes.lengthFor(sequence);
        buffer.putLong(offset, sequence);
        buffer.putInt(offset + LENGTH_OFFSET, length);
        fillPayload(buffer, offset, HEADER_LENGTH, length, sequence);
        buffer.putInt(offset + CRC_OFFSET, ENCODER_CRC.get().of(buffer, offset, length));
        return length;
    }

    /**
     * Fill {@code [from, length)} of the message at {@code offset} with bytes that are a function of the sequence
     * alone, so a receiver's CRC finds any byte that differs.
     */
    public static void fillPayload(
        final MutableDirectBuffer buffer, final int offset, final int from, final int length, final long sequence)
    {
        long word = mix(sequence ^ GOLDEN_GAMMA);
        int i = from;
        for (; i + 8 <= length; i += 8)
        {
            buffer.putLong(offset + i, word);
            word = word * GOLDEN_GAMMA + i;
        }
        for (; i < length; i++)
        {
            buffer.putByte(offset + i, (byte)word);
            word >>>= 8;
        }
    }

    /** @return a well-spread 64-bit function of {@code v} (SplitMix64's finaliser): sizes and payloads from it. */
    public static long mix(final long v)
    {
        long z = v + GOLDEN_GAMMA;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    /**
     * CRC32 of a message of up to {@link #MAX_FRAGMENTED_LENGTH} bytes without its CRC field, through the JDK's
     * intrinsic CRC32 over a reused scratch array: allocation-free after construction.
     */
    public static final class Crc
    {
        private final CRC32 crc = new CRC32();
        private final byte[] scratch = new byte[MAX_FRAGMENTED_LENGTH];

        public int of(final DirectBuffer buffer, final int offset, final int length)
        {
            buffer.getBytes(offset, scratch, 0, length);
            crc.reset();
            crc.update(scratch, 0, CRC_OFFSET);
            crc.update(scratch, CRC_END, length - CRC_END);
            return (int)crc.getValue();
        }
    }

    /** Checks one subscriber's stream: every message exactly once, in order, intact. */
    public static final class Checker implements MessageHandler
    {
        private final Sizes sizes;
        private final Crc crc = new Crc();
        /** The next sequence due. */
        public long expected;
        /** Messages received intact and in order. */
        public long received;
        /** The first thing that went wrong, or null; checking stops there. */
        public String failure;

        /**
         * @param firstSequence the first sequence due, or -1 for a late joiner, which starts wherever the stream is.
         */
        public Checker(final long firstSequence)
        {
            this(firstSequence, Sizes.MIXED);
        }

        public Checker(final long firstSequence, final Sizes sizes)
        {
            this.expected = firstSequence;
            this.sizes = sizes;
        }

        /** Checks one whole message (for a fragmented profile: as rejoined by a FragmentAssembler). */
        public void onMessage(final DirectBuffer buffer, final int offset, final int length)
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
            final int declared = buffer.getInt(offset + LENGTH_OFFSET);
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
