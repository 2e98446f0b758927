package io.verbus.sbe;

import io.verbus.sbe.marketdata.IncrementalRefreshDecoder;
import io.verbus.sbe.marketdata.MDSide;
import io.verbus.sbe.marketdata.MDUpdateAction;
import io.verbus.sbe.marketdata.MessageHeaderDecoder;
import io.verbus.sbe.test.marketdata.next.IncrementalRefreshEncoder;
import io.verbus.sbe.test.marketdata.next.MessageHeaderEncoder;
import io.verbus.sbe.test.marketdata.next.StatisticsUpdateEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A reader built today (market data version 0) meets messages written by the next version (1), which grows the root
 * block, grows each group entry, appends a var-data field and adds a new message type.
 */
class SchemaEvolutionTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[2048]);

    private int encodeNextVersionRefresh(final int offset, final int entryCount)
    {
        final IncrementalRefreshEncoder encoder = new IncrementalRefreshEncoder()
            .wrapAndApplyHeader(buffer, offset, new MessageHeaderEncoder());
        encoder.sendingTimeNanos(555).feedSequence(9).tradingSessionId(20261129L);
        encoder.matchEventIndicator().clear().endOfEvent(true);
        final IncrementalRefreshEncoder.EntriesEncoder entries = encoder.entriesCount(entryCount);
        for (int i = 0; i < entryCount; i++)
        {
            entries.next()
                .size(10 + i).rptSeq(300 + i).instrumentId(5).priceLevel((short)(i + 1))
                .side(io.verbus.sbe.test.marketdata.next.MDSide.OFFER)
                .updateAction(io.verbus.sbe.test.marketdata.next.MDUpdateAction.CHANGE)
                .numberOfOrders(3 + i).impliedSize(-1)
                .price().mantissa(1_000 + i);
        }
        encoder.venueText("XVRB");
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    @Test
    void shouldDecodeEveryKnownFieldOfANewerVersionRefresh()
    {
        final int length = encodeNextVersionRefresh(0, 3);

        final MessageHeaderDecoder header = new MessageHeaderDecoder().wrap(buffer, 0);
        assertEquals(1, header.version());
        assertTrue(header.blockLength() > IncrementalRefreshDecoder.BLOCK_LENGTH);

        final IncrementalRefreshDecoder decoder = new IncrementalRefreshDecoder().wrapAndApplyHeader(buffer, 0, header);
        assertEquals(555, decoder.sendingTimeNanos());
        assertEquals(9, decoder.feedSequence());
        assertTrue(decoder.matchEventIndicator().endOfEvent());
        int i = 0;
        for (final IncrementalRefreshDecoder.EntriesDecoder entry : decoder.entries())
        {
            assertEquals(1_000 + i, entry.price().mantissa());
            assertEquals(10 + i, entry.size());
            assertEquals(300 + i, entry.rptSeq());
            assertEquals(5, entry.instrumentId());
            assertEquals(i + 1, entry.priceLevel());
            assertEquals(MDSide.OFFER, entry.side());
            assertEquals(MDUpdateAction.CHANGE, entry.updateAction());
            i++;
        }
        assertEquals(3, i);

        final int knownLength = MessageBounds.check(buffer, 0, length);
        assertEquals(length - (2 + "XVRB".length()), knownLength, "the appended var data is beyond what v0 knows");
    }

    @Test
    void shouldFindTheNextMessageAfterANewerVersionMessageUsingWireLengths()
    {
        final int first = encodeNextVersionRefresh(0, 2);
        final int firstKnown = MessageBounds.check(buffer, 0, first);
        assertTrue(firstKnown > 0);

        // Fragments carry one message each in Verbus, so a reader skips by the fragment length, not by what it knows.
        final int second = SampleMessages.trade(buffer, first);
        assertEquals(second, MessageBounds.check(buffer, first, second));
        final io.verbus.sbe.marketdata.TradeDecoder trade = new io.verbus.sbe.marketdata.TradeDecoder()
            .wrapAndApplyHeader(buffer, first, new MessageHeaderDecoder());
        assertEquals(42, trade.tradeId());
    }

    @Test
    void shouldReportAMessageTypeFromANewerVersionAsUnknownTemplate()
    {
        final StatisticsUpdateEncoder encoder = new StatisticsUpdateEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.sendingTimeNanos(1).openInterest(2).instrumentId(3);
        final int length = MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();

        assertEquals(MessageBounds.UNKNOWN_TEMPLATE, MessageBounds.check(buffer, 0, length));
    }

    @Test
    void shouldRejectABlockShorterThanTheOneThisVersionReads()
    {
        final int length = SampleMessages.incrementalRefresh(buffer, 0);
        buffer.putShort(0, (short)(IncrementalRefreshDecoder.BLOCK_LENGTH - 4), java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(MessageBounds.BLOCK_LENGTH_TOO_SHORT, MessageBounds.check(buffer, 0, length));
    }

    @Test
    void shouldRejectAGroupEntryShorterThanTheOneThisVersionReads()
    {
        final int length = SampleMessages.incrementalRefresh(buffer, 0);
        final int groupHeader = 8 + IncrementalRefreshDecoder.BLOCK_LENGTH;
        buffer.putShort(groupHeader, (short)16, java.nio.ByteOrder.LITTLE_ENDIAN);
        assertEquals(MessageBounds.GROUP_BLOCK_LENGTH_TOO_SHORT, MessageBounds.check(buffer, 0, length));
    }
}
