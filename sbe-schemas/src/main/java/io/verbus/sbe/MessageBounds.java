package io.verbus.sbe;

import io.verbus.sbe.marketdata.BookSnapshotDecoder;
import io.verbus.sbe.marketdata.IncrementalRefreshDecoder;
import io.verbus.sbe.marketdata.InstrumentDefinitionDecoder;
import io.verbus.sbe.marketdata.TradeDecoder;
import io.verbus.sbe.orderentry.CancelOrderDecoder;
import io.verbus.sbe.orderentry.ExecutionReportDecoder;
import io.verbus.sbe.orderentry.NewOrderDecoder;
import io.verbus.sbe.orderentry.OrderRejectDecoder;
import io.verbus.sbe.orderentry.ReplaceOrderDecoder;
import io.verbus.sbe.session.HeartbeatDecoder;
import io.verbus.sbe.session.LogonDecoder;
import io.verbus.sbe.session.LogoutDecoder;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;

import java.nio.ByteOrder;

/**
 * Checks that a received SBE message lies entirely inside the bytes that arrived, before any generated decoder
 * touches it. Generated decoders trust the lengths on the wire (block length, group dimensions, var-data lengths), so a
 * truncated or corrupt message would make them read whatever follows in the buffer. {@link #check} walks the same
 * lengths against the received length and answers either the message's encoded length or a negative error code; it
 * never throws and allocates nothing, so a receive path can call it on every fragment.
 * <p>
 * Messages from a newer schema version are accepted as long as everything this build knows about fits: the root block
 * and group entries may be longer than ours (the generated decoders skip the extra bytes using the wire lengths), but
 * never shorter. Parts a newer version appends after the last part this build knows are not covered by the returned
 * length.
 */
public final class MessageBounds
{
    /** Fewer bytes than a message header. */
    public static final int TRUNCATED_HEADER = -1;
    /** The schema id in the header is none of Verbus's schemas. */
    public static final int UNKNOWN_SCHEMA = -2;
    /** The template id is not one this build knows (for example a message added by a newer version). */
    public static final int UNKNOWN_TEMPLATE = -3;
    /** The header's block length is shorter than the block this build reads. */
    public static final int BLOCK_LENGTH_TOO_SHORT = -4;
    /** The root block runs past the received bytes. */
    public static final int TRUNCATED_BLOCK = -5;
    /** A group's dimension header runs past the received bytes. */
    public static final int TRUNCATED_GROUP_HEADER = -6;
    /** A group's entry block length is shorter than the entry this build reads. */
    public static final int GROUP_BLOCK_LENGTH_TOO_SHORT = -7;
    /** A group's entries run past the received bytes. */
    public static final int TRUNCATED_GROUP = -8;
    /** A variable-length field's length prefix or its bytes run past the received bytes. */
    public static final int TRUNCATED_VAR_DATA = -9;

    /** Every Verbus schema uses the same 8-byte header: blockLength, templateId, schemaId, version (uint16 each). */
    public static final int MESSAGE_HEADER_LENGTH = 8;
    private static final int BLOCK_LENGTH_OFFSET = 0;
    private static final int TEMPLATE_ID_OFFSET = 2;
    private static final int SCHEMA_ID_OFFSET = 4;
    private static final int GROUP_HEADER_LENGTH = 4;
    private static final ByteOrder BYTE_ORDER = ByteOrder.LITTLE_ENDIAN;

    private static final Int2ObjectHashMap<MessageLayout> LAYOUTS = new Int2ObjectHashMap<>();

    static
    {
        final int md = IncrementalRefreshDecoder.SCHEMA_ID;
        register(MessageLayout.withGroup(md, IncrementalRefreshDecoder.TEMPLATE_ID, "IncrementalRefresh",
            IncrementalRefreshDecoder.BLOCK_LENGTH, IncrementalRefreshDecoder.EntriesDecoder.sbeBlockLength()));
        register(MessageLayout.fixed(md, TradeDecoder.TEMPLATE_ID, "Trade", TradeDecoder.BLOCK_LENGTH));
        register(MessageLayout.withGroup(md, BookSnapshotDecoder.TEMPLATE_ID, "BookSnapshot",
            BookSnapshotDecoder.BLOCK_LENGTH, BookSnapshotDecoder.LevelsDecoder.sbeBlockLength()));
        register(MessageLayout.fixed(md, InstrumentDefinitionDecoder.TEMPLATE_ID, "InstrumentDefinition",
            InstrumentDefinitionDecoder.BLOCK_LENGTH));

        final int oe = NewOrderDecoder.SCHEMA_ID;
        register(MessageLayout.fixed(oe, NewOrderDecoder.TEMPLATE_ID, "NewOrder", NewOrderDecoder.BLOCK_LENGTH));
        register(MessageLayout.fixed(oe, CancelOrderDecoder.TEMPLATE_ID, "CancelOrder",
            CancelOrderDecoder.BLOCK_LENGTH));
        register(MessageLayout.fixed(oe, ReplaceOrderDecoder.TEMPLATE_ID, "ReplaceOrder",
            ReplaceOrderDecoder.BLOCK_LENGTH));
        register(MessageLayout.fixed(oe, ExecutionReportDecoder.TEMPLATE_ID, "ExecutionReport",
            ExecutionReportDecoder.BLOCK_LENGTH));
        register(MessageLayout.withVarData(oe, OrderRejectDecoder.TEMPLATE_ID, "OrderReject",
            OrderRejectDecoder.BLOCK_LENGTH, OrderRejectDecoder.textHeaderLength()));

        final int session = LogonDecoder.SCHEMA_ID;
        register(MessageLayout.fixed(session, LogonDecoder.TEMPLATE_ID, "Logon", LogonDecoder.BLOCK_LENGTH));
        register(MessageLayout.fixed(session, LogoutDecoder.TEMPLATE_ID, "Logout", LogoutDecoder.BLOCK_LENGTH));
        register(MessageLayout.fixed(session, HeartbeatDecoder.TEMPLATE_ID, "Heartbeat",
            HeartbeatDecoder.BLOCK_LENGTH));
    }

    private MessageBounds()
    {
    }

    private static void register(final MessageLayout layout)
    {
        LAYOUTS.put(MessageLayout.key(layout.schemaId, layout.templateId), layout);
    }

    /**
     * Check that the message at {@code offset} fits in {@code length} received bytes.
     *
     * @param buffer holding the message.
     * @param offset of the message header.
     * @param length of the bytes received from {@code offset} (the fragment length); never read past.
     * @return the encoded length of the message including its header (at most {@code length}), or a negative code.
     */
    public static int check(final DirectBuffer buffer, final int offset, final int length)
    {
        if (length < MESSAGE_HEADER_LENGTH || offset < 0 || offset > buffer.capacity() - length)
        {
            return TRUNCATED_HEADER;
        }

        final int blockLength = buffer.getShort(offset + BLOCK_LENGTH_OFFSET, BYTE_ORDER) & 0xFFFF;
        final int templateId = buffer.getShort(offset + TEMPLATE_ID_OFFSET, BYTE_ORDER) & 0xFFFF;
        final int schemaId = buffer.getShort(offset + SCHEMA_ID_OFFSET, BYTE_ORDER) & 0xFFFF;

        final MessageLayout layout = LAYOUTS.get(MessageLayout.key(schemaId, templateId));
        if (null == layout)
        {
            return isKnownSchema(schemaId) ? UNKNOWN_TEMPLATE : UNKNOWN_SCHEMA;
        }
        if (blockLength < layout.blockLength)
        {
            return BLOCK_LENGTH_TOO_SHORT;
        }

        final int end = offset + length;
        int limit = offset + MESSAGE_HEADER_LENGTH;
        if (blockLength > end - limit)
        {
            return TRUNCATED_BLOCK;
        }
        limit += blockLength;

        final int[] kinds = layout.partKinds;
        for (int i = 0; i < kinds.length; i++)
        {
            if (MessageLayout.GROUP == kinds[i])
            {
                if (GROUP_HEADER_LENGTH > end - limit)
                {
                    return TRUNCATED_GROUP_HEADER;
                }
                final int entryBlockLength = buffer.getShort(limit, BYTE_ORDER) & 0xFFFF;
                final int numInGroup = buffer.getShort(limit + 2, BYTE_ORDER) & 0xFFFF;
                if (entryBlockLength < layout.partLengths[i])
                {
                    return GROUP_BLOCK_LENGTH_TOO_SHORT;
                }
                limit += GROUP_HEADER_LENGTH;
                final long entriesLength = (long)entryBlockLength * numInGroup;
                if (entriesLength > end - limit)
                {
                    return TRUNCATED_GROUP;
                }
                limit += (int)entriesLength;
            }
            else
            {
                final int lengthHeaderSize = layout.partLengths[i];
                if (lengthHeaderSize > end - limit)
                {
                    return TRUNCATED_VAR_DATA;
                }
                final int dataLength = lengthHeaderSize == 2 ?
                    buffer.getShort(limit, BYTE_ORDER) & 0xFFFF :
                    buffer.getInt(limit, BYTE_ORDER) & 0x7FFF_FFFF;
                limit += lengthHeaderSize;
                if (dataLength > end - limit)
                {
                    return TRUNCATED_VAR_DATA;
                }
                limit += dataLength;
            }
        }

        return limit - offset;
    }

    /**
     * @param schemaId from a message header.
     * @return true for the market data, order entry and session schemas.
     */
    public static boolean isKnownSchema(final int schemaId)
    {
        return schemaId == IncrementalRefreshDecoder.SCHEMA_ID ||
            schemaId == NewOrderDecoder.SCHEMA_ID ||
            schemaId == LogonDecoder.SCHEMA_ID;
    }

    /**
     * @param schemaId   from a message header.
     * @param templateId from a message header.
     * @return the message's name, or null when this build does not know it.
     */
    public static String messageName(final int schemaId, final int templateId)
    {
        final MessageLayout layout = LAYOUTS.get(MessageLayout.key(schemaId, templateId));
        return null == layout ? null : layout.name;
    }

    /**
     * @param code a negative result of {@link #check}.
     * @return what went wrong, for logs and error messages.
     */
    public static String describe(final int code)
    {
        return switch (code)
        {
            case TRUNCATED_HEADER -> "truncated message header";
            case UNKNOWN_SCHEMA -> "unknown schema id";
            case UNKNOWN_TEMPLATE -> "unknown template id";
            case BLOCK_LENGTH_TOO_SHORT -> "block length shorter than this version's block";
            case TRUNCATED_BLOCK -> "root block runs past the received bytes";
            case TRUNCATED_GROUP_HEADER -> "group header runs past the received bytes";
            case GROUP_BLOCK_LENGTH_TOO_SHORT -> "group entry length shorter than this version's entry";
            case TRUNCATED_GROUP -> "group entries run past the received bytes";
            case TRUNCATED_VAR_DATA -> "variable-length data runs past the received bytes";
            default -> code >= 0 ? "ok" : "unknown code " + code;
        };
    }
}
