package io.verbus.bench.contender;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * The first bytes of every benchmark message: its sequence number (so an echo can be checked) and its total
 * length (so byte streams such as TCP can find where it ends). Native byte order: both ends are on this host.
 */
public final class MessageHeader
{
    public static final int SEQUENCE_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int HEADER_LENGTH = 12;

    private MessageHeader()
    {
    }

    public static void write(final MutableDirectBuffer buffer, final int offset, final long sequence, final int length)
    {
        buffer.putLong(offset + SEQUENCE_OFFSET, sequence);
        buffer.putInt(offset + LENGTH_OFFSET, length);
    }

    public static long sequence(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + SEQUENCE_OFFSET);
    }

    public static int length(final DirectBuffer buffer, final int offset)
    {
        return buffer.getInt(offset + LENGTH_OFFSET);
    }

    /**
     * @throws IllegalStateException when an echo carries another sequence number than the one sent.
     */
    public static void checkEcho(final long expected, final long actual)
    {
        if (expected != actual)
        {
            throw new IllegalStateException("echo carried sequence " + actual + " but " + expected + " was sent");
        }
    }
}
