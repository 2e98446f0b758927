package io.verbus.soak;

import io.verbus.test.MessageStream;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.Map;
import java.util.TreeMap;

/**
 * The soak's messages and the checker that counts, rather than stops at, every lost, duplicated, reordered or
 * corrupt one.
 * <pre>
 *   0 sequence long | 8 length int | 12 CRC32 int | 16 source int | 20 payload (deterministic from the sequence)
 * </pre>
 * A source is one writer thread of one lane ({@code lane << 8 | thread}); sequences count per source, so two
 * threads sharing a concurrent publication each keep their own order. The CRC covers everything but itself, so a
 * header swapped with another message's fails too. The length is a function of (source, sequence), checked too.
 * The first 16 bytes are laid out as a {@link MessageStream}'s, whose payload, mix and {@link MessageStream.Crc} these
 * messages use.
 */
final class SoakMessages
{
    static final int HEADER_LENGTH = 20;
    /** One frame at the default MTU (1408 - 32). */
    static final int MAX_UNFRAGMENTED_LENGTH = 1376;
    static final int MAX_LENGTH = MessageStream.MAX_FRAGMENTED_LENGTH;
    private static final int LENGTH_OFFSET = MessageStream.LENGTH_OFFSET;
    private static final int CRC_OFFSET = MessageStream.CRC_OFFSET;
    /** Right after the CRC field, so the CRC covers it. */
    private static final int SOURCE_OFFSET = MessageStream.CRC_END;

    /** Message size profiles. */
    enum Sizes
    {
        /** 20..64 bytes: one 64 or 96-byte frame, for the message count. */
        SMALL,
        /** 20..1376 bytes, mostly small: one frame each (fits a claim). */
        MIXED,
        /** 20..8192 bytes, a fifth longer than the MTU: fragmented, rejoined by a FragmentAssembler. */
        FRAGMENTED;

        int lengthFor(final int source, final long sequence)
        {
            final long mix = MessageStream.mix(sequence * 31 + source);
            final int bucket = (int)((mix >>> 8) % 100);
            final int spread = (int)((mix >>> 20) & 0x7fff_ffff);
            return switch (this)
            {
                case SMALL -> HEADER_LENGTH + spread % 45;
                case MIXED -> bucket < 80 ? HEADER_LENGTH + spread % 237 :
                    257 + spread % (MAX_UNFRAGMENTED_LENGTH - 256);
                case FRAGMENTED -> bucket < 80 ?
                    HEADER_LENGTH + spread % (MAX_UNFRAGMENTED_LENGTH - HEADER_LENGTH + 1) :
                    MAX_UNFRAGMENTED_LENGTH + 1 + spread % (MAX_LENGTH - MAX_UNFRAGMENTED_LENGTH);
            };
        }
    }

    private SoakMessages()
    {
    }

    static int source(final int lane, final int thread)
    {
        return lane << 8 | thread;
    }

    /** Writes message {@code sequence} of {@code source} at {@code offset}; returns its length. */
    static int encode(
        final MutableDirectBuffer buffer, final int offset, final int source, final long sequence, final Sizes sizes,
        final MessageStream.Crc crc)
    {
        final int length = sizes.lengthFor(source, sequence);
        buffer.putLong(offset, sequence);
        buffer.putInt(offset + LENGTH_OFFSET, length);
        buffer.putInt(offset + SOURCE_OFFSET, source);
        MessageStream.fillPayload(buffer, offset, HEADER_LENGTH, length, sequence);
        buffer.putInt(offset + CRC_OFFSET, crc.of(buffer, offset, length));
        return length;
    }

    /** Test hook: flips one payload byte (or the sequence's low byte of a message without payload). */
    static void corrupt(final MutableDirectBuffer buffer, final int offset, final int length)
    {
        final int at = length > HEADER_LENGTH ? offset + length - 1 : offset + 4;
        buffer.putByte(at, (byte)(buffer.getByte(at) ^ 0x5A));
    }

    /**
     * The counts of one source as one subscriber saw it. The first sequence seen is adopted (a subscriber joins
     * wherever the stream is). A sequence beyond the expected one counts the gap as lost and remembers it; one that
     * fills a remembered gap later turns a loss into a reordering; any other earlier one is a duplicate. A message
     * failing its length or CRC check counts as corrupt, and as delivered when its sequence is the expected one.
     */
    static final class SourceCheck
    {
        long expected = -1;
        long received;
        long bytes;
        long lost;
        long duplicated;
        long reordered;
        long corrupt;
        private TreeMap<Long, Long> gaps;

        void onCorrupt(final long sequence)
        {
            corrupt++;
            if (sequence == expected)
            {
                expected++;
            }
        }

        void onMessage(final long sequence, final int length)
        {
            received++;
            bytes += length;
            if (expected < 0)
            {
                expected = sequence;
            }
            if (sequence == expected)
            {
                expected++;
            }
            else if (sequence > expected)
            {
                lost += sequence - expected;
                if (null == gaps)
                {
                    gaps = new TreeMap<>();
                }
                gaps.put(expected, sequence);
                expected = sequence + 1;
            }
            else if (fillGap(sequence))
            {
                lost--;
                reordered++;
            }
            else
            {
                duplicated++;
            }
        }

        /** At the end: everything the publisher sent from the first message this subscriber took on was due. */
        void onEnd(final long publishedCount)
        {
            if (expected >= 0 && expected < publishedCount)
            {
                lost += publishedCount - expected;
                expected = publishedCount;
            }
        }

        private boolean fillGap(final long sequence)
        {
            if (null == gaps)
            {
                return false;
            }
            final Map.Entry<Long, Long> gap = gaps.floorEntry(sequence);
            if (null == gap || sequence >= gap.getValue())
            {
                return false;
            }
            gaps.remove(gap.getKey());
            if (gap.getKey() < sequence)
            {
                gaps.put(gap.getKey(), sequence);
            }
            if (sequence + 1 < gap.getValue())
            {
                gaps.put(sequence + 1, gap.getValue());
            }
            return true;
        }
    }

    /** Checks whole messages of one lane (one subscription): picks the source, checks length and CRC, counts. */
    static final class LaneCheck
    {
        final SourceCheck[] sources;
        private final int lane;
        private final Sizes[] sizes;
        private final MessageStream.Crc crc = new MessageStream.Crc();
        long unknownSource;

        LaneCheck(final int lane, final Sizes[] sizesPerThread)
        {
            this.lane = lane;
            this.sizes = sizesPerThread;
            sources = new SourceCheck[sizesPerThread.length];
            for (int i = 0; i < sources.length; i++)
            {
                sources[i] = new SourceCheck();
            }
        }

        void onMessage(final DirectBuffer buffer, final int offset, final int length)
        {
            if (length < HEADER_LENGTH || length > MAX_LENGTH)
            {
                unknownSource++;
                return;
            }
            final int source = buffer.getInt(offset + SOURCE_OFFSET);
            final int thread = source & 0xff;
            if (source >>> 8 != lane || thread >= sources.length)
            {
                unknownSource++;
                return;
            }
            final long sequence = buffer.getLong(offset);
            final SourceCheck check = sources[thread];
            if (buffer.getInt(offset + LENGTH_OFFSET) != length ||
                length != sizes[thread].lengthFor(source, sequence) ||
                buffer.getInt(offset + CRC_OFFSET) != crc.of(buffer, offset, length))
            {
                check.onCorrupt(sequence);
                return;
            }
            check.onMessage(sequence, length);
        }

        /** @return the lane's totals: received, bytes, lost, duplicated, reordered, corrupt. */
        long[] totals()
        {
            final long[] totals = new long[6];
            for (final SourceCheck check : sources)
            {
                totals[0] += check.received;
                totals[1] += check.bytes;
                totals[2] += check.lost;
                totals[3] += check.duplicated;
                totals[4] += check.reordered;
                totals[5] += check.corrupt;
            }
            totals[5] += unknownSource;
            return totals;
        }

        boolean allSourcesSeen()
        {
            for (final SourceCheck check : sources)
            {
                if (check.expected < 0)
                {
                    return false;
                }
            }
            return true;
        }
    }
}
