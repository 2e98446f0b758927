package io.verbus.archive;

import io.aeron.logbuffer.Header;
import org.agrona.DirectBuffer;
import org.agrona.ExpandableDirectByteBuffer;

/**
 * Every frame a subscriber saw, in order, with its position: the whole frame (header and payload) as bytes, so two
 * captures can be compared byte for byte. Off-heap, so a million frames fit beside a 2 GiB test heap.
 * <pre>
 *   record: position long | frame length int | frame bytes, padded to 8
 * </pre>
 */
final class FrameCapture
{
    private final ExpandableDirectByteBuffer buffer;
    private int length;
    private long frames;
    private long lastPosition;

    FrameCapture(final int initialCapacity)
    {
        buffer = new ExpandableDirectByteBuffer(initialCapacity);
    }

    /** Captures the frame the header points at. */
    void add(final Header header)
    {
        final int frameLength = header.frameLength();
        buffer.putLong(length, header.position());
        buffer.putInt(length + 8, frameLength);
        buffer.putBytes(length + 12, header.buffer(), header.offset(), frameLength);
        length += align(12 + frameLength);
        frames++;
        lastPosition = header.position();
    }

    long frames()
    {
        return frames;
    }

    long lastPosition()
    {
        return lastPosition;
    }

    /** Walks two captures together. */
    Cursor cursor()
    {
        return new Cursor();
    }

    private static int align(final int value)
    {
        return (value + 7) & ~7;
    }

    /** Reads a capture in order and compares frames with it. */
    final class Cursor
    {
        private int offset;
        private long index;

        /**
         * @return null when the frame the header points at equals the next captured frame (same end position, same
         * length, same bytes), else what differs.
         */
        String matchNext(final Header header)
        {
            if (offset >= length)
            {
                return "frame " + index + " at position " + header.position() + " is beyond the " + frames +
                    " captured";
            }
            final long position = buffer.getLong(offset);
            final int frameLength = buffer.getInt(offset + 8);
            final String mismatch = compare(position, frameLength, header);
            offset += align(12 + frameLength);
            index++;
            return mismatch;
        }

        private String compare(final long position, final int frameLength, final Header header)
        {
            if (position != header.position())
            {
                return "frame " + index + ": position " + header.position() + ", live " + position;
            }
            if (frameLength != header.frameLength())
            {
                return "frame " + index + " at " + position + ": length " + header.frameLength() + ", live " +
                    frameLength;
            }
            final DirectBuffer other = header.buffer();
            final int otherOffset = header.offset();
            int i = 0;
            for (; i + 8 <= frameLength; i += 8)
            {
                if (buffer.getLong(offset + 12 + i) != other.getLong(otherOffset + i))
                {
                    return "frame " + index + " at " + position + ": bytes differ at " + i;
                }
            }
            for (; i < frameLength; i++)
            {
                if (buffer.getByte(offset + 12 + i) != other.getByte(otherOffset + i))
                {
                    return "frame " + index + " at " + position + ": byte " + i + " differs";
                }
            }
            return null;
        }

        /**
         * Compares this capture's next frame with another's: same position, length, flags, type, term offset,
         * reserved value and payload; session id, stream id and term id may differ (another publication's).
         *
         * @return null when they match, else what differs.
         */
        String matchNextIgnoringIds(final Cursor other)
        {
            final long position = buffer.getLong(offset);
            final int frameLength = buffer.getInt(offset + 8);
            final long otherPosition = other.owner().buffer.getLong(other.offset);
            final int otherLength = other.owner().buffer.getInt(other.offset + 8);
            String mismatch = null;
            if (position != otherPosition || frameLength != otherLength)
            {
                mismatch = "frame " + index + ": position/length " + position + "/" + frameLength + " vs " +
                    otherPosition + "/" + otherLength;
            }
            for (int i = 0; null == mismatch && i < frameLength; i++)
            {
                final boolean isIdField = (i >= 12 && i < 20) || (i >= 20 && i < 24);
                if (!isIdField &&
                    buffer.getByte(offset + 12 + i) != other.owner().buffer.getByte(other.offset + 12 + i))
                {
                    mismatch = "frame " + index + " at " + position + ": byte " + i + " differs";
                }
            }
            offset += align(12 + frameLength);
            index++;
            other.offset += align(12 + otherLength);
            other.index++;
            return mismatch;
        }

        private FrameCapture owner()
        {
            return FrameCapture.this;
        }

        long index()
        {
            return index;
        }

        /** Moves to the first frame that ends after {@code position}. */
        void skipTo(final long position)
        {
            while (offset < length && buffer.getLong(offset) <= position)
            {
                offset += align(12 + buffer.getInt(offset + 8));
                index++;
            }
        }

        /** @return the end position of the next captured frame, or {@link Long#MAX_VALUE} at the end. */
        long nextFrameEnd()
        {
            return offset >= length ? Long.MAX_VALUE : buffer.getLong(offset);
        }

        boolean isAtEnd()
        {
            return offset >= length;
        }
    }
}
