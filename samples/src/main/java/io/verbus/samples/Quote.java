package io.verbus.samples;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.ByteOrder;

/**
 * A top-of-book quote as the market-data samples send it: a fixed 48-byte little-endian layout read and written in
 * place (a flyweight over any buffer, owning nothing), as an SBE codec would do it.
 * <pre>
 *  0 sequence long | 8 timestampNs long | 16 instrumentId int | 20 bidQuantity int | 24 bidPrice long
 * 32 askPrice long | 40 askQuantity int | 44 reserved int | 48 end
 * </pre>
 * Prices are in ten-thousandths.
 */
public final class Quote
{
    /** Encoded length in bytes. */
    public static final int LENGTH = 48;

    private static final int SEQUENCE_OFFSET = 0;
    private static final int TIMESTAMP_OFFSET = 8;
    private static final int INSTRUMENT_OFFSET = 16;
    private static final int BID_QUANTITY_OFFSET = 20;
    private static final int BID_PRICE_OFFSET = 24;
    private static final int ASK_PRICE_OFFSET = 32;
    private static final int ASK_QUANTITY_OFFSET = 40;
    private static final ByteOrder ORDER = ByteOrder.LITTLE_ENDIAN;

    private Quote()
    {
    }

    /** Writes a whole quote at {@code offset}. */
    public static void encode(
        final MutableDirectBuffer buffer,
        final int offset,
        final long sequence,
        final long timestampNs,
        final int instrumentId,
        final long bidPrice,
        final int bidQuantity,
        final long askPrice,
        final int askQuantity)
    {
        buffer.putLong(offset + SEQUENCE_OFFSET, sequence, ORDER);
        buffer.putLong(offset + TIMESTAMP_OFFSET, timestampNs, ORDER);
        buffer.putInt(offset + INSTRUMENT_OFFSET, instrumentId, ORDER);
        buffer.putInt(offset + BID_QUANTITY_OFFSET, bidQuantity, ORDER);
        buffer.putLong(offset + BID_PRICE_OFFSET, bidPrice, ORDER);
        buffer.putLong(offset + ASK_PRICE_OFFSET, askPrice, ORDER);
        buffer.putInt(offset + ASK_QUANTITY_OFFSET, askQuantity, ORDER);
        buffer.putInt(offset + ASK_QUANTITY_OFFSET + 4, 0, ORDER);
    }

    /** @return the publisher's sequence number of the quote at {@code offset}. */
    public static long sequence(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + SEQUENCE_OFFSET, ORDER);
    }

    /** @return when it was sent, {@link System#nanoTime()} of the publisher. */
    public static long timestampNs(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + TIMESTAMP_OFFSET, ORDER);
    }

    /** @return the instrument. */
    public static int instrumentId(final DirectBuffer buffer, final int offset)
    {
        return buffer.getInt(offset + INSTRUMENT_OFFSET, ORDER);
    }

    /** @return the best bid price. */
    public static long bidPrice(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + BID_PRICE_OFFSET, ORDER);
    }

    /** @return the best bid quantity. */
    public static int bidQuantity(final DirectBuffer buffer, final int offset)
    {
        return buffer.getInt(offset + BID_QUANTITY_OFFSET, ORDER);
    }

    /** @return the best ask price. */
    public static long askPrice(final DirectBuffer buffer, final int offset)
    {
        return buffer.getLong(offset + ASK_PRICE_OFFSET, ORDER);
    }

    /** @return the best ask quantity. */
    public static int askQuantity(final DirectBuffer buffer, final int offset)
    {
        return buffer.getInt(offset + ASK_QUANTITY_OFFSET, ORDER);
    }
}
