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
     * Whether an echo answers the message in flight. Sequence numbers only grow over a pair's life (see
     * {@code LatencyRunner}), so an echo with a lower one answers a message of an earlier run that was abandoned
     * (a warm-up that stalled past its timeout) and is dropped: without that, the next run's first message would
     * meet it and fail.
     *
     * @return true for the echo of {@code expected}, false for a late echo of an earlier message.
     * @throws IllegalStateException when an echo carries a sequence number not sent yet.
     */
    public static boolean isEchoOf(final long expected, final long actual)
    {
        if (actual > expected)
        {
            throw new IllegalStateException("echo carried sequence " + actual + " but " + expected + " was sent");
        }
        return actual == expected;
    }
}
