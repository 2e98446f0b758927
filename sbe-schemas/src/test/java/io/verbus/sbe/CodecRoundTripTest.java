package io.verbus.sbe;

import io.verbus.sbe.marketdata.BookSnapshotDecoder;
import io.verbus.sbe.marketdata.IncrementalRefreshDecoder;
import io.verbus.sbe.marketdata.InstrumentDefinitionDecoder;
import io.verbus.sbe.marketdata.MDSide;
import io.verbus.sbe.marketdata.MDUpdateAction;
import io.verbus.sbe.marketdata.TradeDecoder;
import io.verbus.sbe.orderentry.CancelOrderDecoder;
import io.verbus.sbe.orderentry.ExecType;
import io.verbus.sbe.orderentry.ExecutionReportDecoder;
import io.verbus.sbe.orderentry.NewOrderDecoder;
import io.verbus.sbe.orderentry.OrdType;
import io.verbus.sbe.orderentry.OrderRejectDecoder;
import io.verbus.sbe.orderentry.RejectReason;
import io.verbus.sbe.orderentry.ReplaceOrderDecoder;
import io.verbus.sbe.orderentry.Side;
import io.verbus.sbe.orderentry.TimeInForce;
import io.verbus.sbe.session.HeartbeatDecoder;
import io.verbus.sbe.session.LogonDecoder;
import io.verbus.sbe.session.LogoutDecoder;
import io.verbus.sbe.session.LogoutReason;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.List;
import java.util.Set;

import static io.verbus.sbe.SampleMessages.PRICE;
import static io.verbus.sbe.SampleMessages.SENDING_TIME;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CodecRoundTripTest
{
    private static final int OFFSET = 64;
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[1024]);

    static List<SampleMessages.Sample> samples()
    {
        return SampleMessages.all();
    }

    @Test
    void shouldRoundTripIncrementalRefreshWithEveryEntry()
    {
        final int length = SampleMessages.incrementalRefresh(buffer, OFFSET);
        assertEquals(8 + 20 + 4 + 3 * 32, length);

        final IncrementalRefreshDecoder decoder = new IncrementalRefreshDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.marketdata.MessageHeaderDecoder());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(77, decoder.feedSequence());
        assertTrue(decoder.matchEventIndicator().endOfEvent());
        assertTrue(decoder.matchEventIndicator().lastQuoteMsg());
        assertFalse(decoder.matchEventIndicator().lastTradeMsg());
        int i = 0;
        for (final IncrementalRefreshDecoder.EntriesDecoder entry : decoder.entries())
        {
            assertEquals(PRICE + i, entry.price().mantissa());
            assertEquals(-9, entry.price().exponent());
            assertEquals(100 + i, entry.size());
            assertEquals(1000 + i, entry.rptSeq());
            assertEquals(7 + i, entry.instrumentId());
            assertEquals(i + 1, entry.priceLevel());
            assertEquals(i % 2 == 0 ? MDSide.BID : MDSide.OFFER, entry.side());
            assertEquals(MDUpdateAction.get((short)i), entry.updateAction());
            i++;
        }
        assertEquals(3, i);
        assertEquals(length - 8, decoder.encodedLength());
    }

    @Test
    void shouldRoundTripTrade()
    {
        SampleMessages.trade(buffer, OFFSET);
        final TradeDecoder decoder = new TradeDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.marketdata.MessageHeaderDecoder());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(42, decoder.tradeId());
        assertEquals(PRICE, decoder.price().mantissa());
        assertEquals(5, decoder.size());
        assertEquals(99, decoder.rptSeq());
        assertEquals(3, decoder.instrumentId());
        assertEquals(MDSide.OFFER, decoder.aggressorSide());
    }

    @Test
    void shouldRoundTripBookSnapshotWithEveryLevel()
    {
        final int length = SampleMessages.bookSnapshot(buffer, OFFSET);
        assertEquals(8 + 20 + 4 + 4 * 32, length);
        final BookSnapshotDecoder decoder = new BookSnapshotDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.marketdata.MessageHeaderDecoder());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(500, decoder.lastRptSeq());
        assertEquals(11, decoder.instrumentId());
        int i = 0;
        for (final BookSnapshotDecoder.LevelsDecoder level : decoder.levels())
        {
            assertEquals(PRICE - i, level.price().mantissa());
            assertEquals(10L * (i + 1), level.size());
            assertEquals(i + 2, level.numberOfOrders());
            assertEquals(i / 2 + 1, level.priceLevel());
            assertEquals(i % 2 == 0 ? MDSide.BID : MDSide.OFFER, level.side());
            i++;
        }
        assertEquals(4, i);
    }

    @Test
    void shouldRoundTripInstrumentDefinition()
    {
        SampleMessages.instrumentDefinition(buffer, OFFSET);
        final InstrumentDefinitionDecoder decoder = new InstrumentDefinitionDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.marketdata.MessageHeaderDecoder());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(10_000_000L, decoder.tickSize().mantissa());
        assertEquals(100, decoder.lotSize());
        assertEquals(17, decoder.instrumentId());
        assertEquals("VRBS-DEC26", decoder.symbol());
        assertEquals("EUR", decoder.currency());
    }

    @Test
    void shouldRoundTripNewOrder()
    {
        SampleMessages.newOrder(buffer, OFFSET);
        final NewOrderDecoder decoder = new NewOrderDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.orderentry.MessageHeaderDecoder());
        assertEquals(9001, decoder.clOrdId());
        assertEquals(PRICE, decoder.price().mantissa());
        assertEquals(25, decoder.quantity());
        assertEquals(SENDING_TIME - 500, decoder.tickTimeNanos());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(4, decoder.instrumentId());
        assertEquals(Side.SELL, decoder.side());
        assertEquals(OrdType.LIMIT, decoder.ordType());
        assertEquals(TimeInForce.IOC, decoder.timeInForce());
    }

    @Test
    void shouldRoundTripCancelOrder()
    {
        SampleMessages.cancelOrder(buffer, OFFSET);
        final CancelOrderDecoder decoder = new CancelOrderDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.orderentry.MessageHeaderDecoder());
        assertEquals(9002, decoder.clOrdId());
        assertEquals(9001, decoder.origClOrdId());
        assertEquals(4, decoder.instrumentId());
        assertEquals(Side.BUY, decoder.side());
    }

    @Test
    void shouldRoundTripReplaceOrder()
    {
        SampleMessages.replaceOrder(buffer, OFFSET);
        final ReplaceOrderDecoder decoder = new ReplaceOrderDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.orderentry.MessageHeaderDecoder());
        assertEquals(9003, decoder.clOrdId());
        assertEquals(9001, decoder.origClOrdId());
        assertEquals(PRICE + 1, decoder.price().mantissa());
        assertEquals(30, decoder.quantity());
        assertEquals(SENDING_TIME, decoder.tickTimeNanos());
        assertEquals(4, decoder.instrumentId());
        assertEquals(Side.BUY, decoder.side());
    }

    @Test
    void shouldRoundTripExecutionReport()
    {
        SampleMessages.executionReport(buffer, OFFSET);
        final ExecutionReportDecoder decoder = new ExecutionReportDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.orderentry.MessageHeaderDecoder());
        assertEquals(1, decoder.orderId());
        assertEquals(9001, decoder.clOrdId());
        assertEquals(2, decoder.execId());
        assertEquals(PRICE, decoder.lastPx().mantissa());
        assertEquals(25, decoder.lastQty());
        assertEquals(0, decoder.leavesQty());
        assertEquals(25, decoder.cumQty());
        assertEquals(SENDING_TIME - 500, decoder.tickTimeNanos());
        assertEquals(SENDING_TIME + 800, decoder.transactTimeNanos());
        assertEquals(4, decoder.instrumentId());
        assertEquals(ExecType.FILL, decoder.execType());
        assertEquals(Side.SELL, decoder.side());
        assertEquals(RejectReason.NONE, decoder.rejectReason());
    }

    @Test
    void shouldRoundTripOrderRejectWithItsText()
    {
        final int length = SampleMessages.orderReject(buffer, OFFSET);
        final OrderRejectDecoder decoder = new OrderRejectDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.orderentry.MessageHeaderDecoder());
        assertEquals(9004, decoder.clOrdId());
        assertEquals(SENDING_TIME, decoder.tickTimeNanos());
        assertEquals(4, decoder.instrumentId());
        assertEquals(RejectReason.UNKNOWN_ORDER, decoder.rejectReason());
        assertEquals(CancelOrderDecoder.TEMPLATE_ID, decoder.refTemplateId());
        assertEquals("no resting order 9001", decoder.text());
        assertEquals(length - 8, decoder.encodedLength());
    }

    @Test
    void shouldRoundTripLogonWithProtocolVersion()
    {
        SampleMessages.logon(buffer, OFFSET);
        final LogonDecoder decoder = new LogonDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.session.MessageHeaderDecoder());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(1000, decoder.heartbeatIntervalMs());
        assertEquals(1, decoder.protocolVersion().major());
        assertEquals(2, decoder.protocolVersion().minor());
        assertEquals("STRATEGY-1", decoder.senderCompId());
        assertEquals(0, decoder.marketDataSchemaVersion());
        assertEquals(0, decoder.orderEntrySchemaVersion());
    }

    @Test
    void shouldRoundTripLogout()
    {
        SampleMessages.logout(buffer, OFFSET);
        final LogoutDecoder decoder = new LogoutDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.session.MessageHeaderDecoder());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(LogoutReason.HEARTBEAT_TIMEOUT, decoder.reason());
    }

    @Test
    void shouldRoundTripHeartbeat()
    {
        SampleMessages.heartbeat(buffer, OFFSET);
        final HeartbeatDecoder decoder = new HeartbeatDecoder()
            .wrapAndApplyHeader(buffer, OFFSET, new io.verbus.sbe.session.MessageHeaderDecoder());
        assertEquals(SENDING_TIME, decoder.sendingTimeNanos());
        assertEquals(31, decoder.nextExpectedSequence());
    }

    @ParameterizedTest
    @MethodSource("samples")
    void shouldReportTheEncodedLengthOfEveryMessageFromItsBounds(final SampleMessages.Sample sample)
    {
        final int length = sample.encode(buffer, OFFSET);
        assertEquals(length, MessageBounds.check(buffer, OFFSET, length));
        assertEquals(length, MessageBounds.check(buffer, OFFSET, length + 100), "trailing bytes are not the message's");
    }

    @ParameterizedTest
    @MethodSource("samples")
    void shouldKeepMessagesThirtyTwoByteAlignedExceptVariableText(final SampleMessages.Sample sample)
    {
        final int length = sample.encode(buffer, OFFSET);
        final Set<String> variableLength = Set.of("OrderReject");
        assertEquals(
            !variableLength.contains(sample.name()), length % 32 == 0, sample.name() + " is " + length + " bytes");
    }
}
