package io.verbus.sbe;

import org.agrona.DirectBuffer;

/**
 * Decodes every field of any Verbus message into text, through the generated decoders only.
 */
final class DecodeAll
{
    private DecodeAll()
    {
    }

    static String describe(final DirectBuffer buffer, final int offset)
    {
        final int blockLength = buffer.getShort(offset, java.nio.ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int templateId = buffer.getShort(offset + 2, java.nio.ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int schemaId = buffer.getShort(offset + 4, java.nio.ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int version = buffer.getShort(offset + 6, java.nio.ByteOrder.LITTLE_ENDIAN) & 0xFFFF;
        final int body = offset + MessageBounds.MESSAGE_HEADER_LENGTH;
        final StringBuilder out = new StringBuilder();
        final String key = schemaId + "/" + templateId;
        switch (key)
        {
            case "101/1" -> new io.verbus.sbe.marketdata.IncrementalRefreshDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "101/2" -> new io.verbus.sbe.marketdata.TradeDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "101/3" -> new io.verbus.sbe.marketdata.BookSnapshotDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "101/4" -> new io.verbus.sbe.marketdata.InstrumentDefinitionDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "102/1" -> new io.verbus.sbe.orderentry.NewOrderDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "102/2" -> new io.verbus.sbe.orderentry.CancelOrderDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "102/3" -> new io.verbus.sbe.orderentry.ReplaceOrderDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "102/4" -> new io.verbus.sbe.orderentry.ExecutionReportDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "102/5" -> new io.verbus.sbe.orderentry.OrderRejectDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "103/1" -> new io.verbus.sbe.session.LogonDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "103/2" -> new io.verbus.sbe.session.LogoutDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            case "103/3" -> new io.verbus.sbe.session.HeartbeatDecoder()
                .wrap(buffer, body, blockLength, version).appendTo(out);
            default -> throw new IllegalArgumentException("no decoder for " + key);
        }
        return out.toString();
    }
}
