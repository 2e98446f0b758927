package io.verbus.sbe;

import io.verbus.sbe.marketdata.BookSnapshotEncoder;
import io.verbus.sbe.marketdata.IncrementalRefreshEncoder;
import io.verbus.sbe.marketdata.InstrumentDefinitionEncoder;
import io.verbus.sbe.marketdata.MDSide;
import io.verbus.sbe.marketdata.MDUpdateAction;
import io.verbus.sbe.marketdata.TradeEncoder;
import io.verbus.sbe.orderentry.CancelOrderEncoder;
import io.verbus.sbe.orderentry.ExecType;
import io.verbus.sbe.orderentry.ExecutionReportEncoder;
import io.verbus.sbe.orderentry.NewOrderEncoder;
import io.verbus.sbe.orderentry.OrdType;
import io.verbus.sbe.orderentry.OrderRejectEncoder;
import io.verbus.sbe.orderentry.RejectReason;
import io.verbus.sbe.orderentry.ReplaceOrderEncoder;
import io.verbus.sbe.orderentry.Side;
import io.verbus.sbe.orderentry.TimeInForce;
import io.verbus.sbe.session.HeartbeatEncoder;
import io.verbus.sbe.session.LogonEncoder;
import io.verbus.sbe.session.LogoutEncoder;
import io.verbus.sbe.session.LogoutReason;
import org.agrona.MutableDirectBuffer;

import java.util.List;
import java.util.function.ToIntBiFunction;

/**
 * One fully populated instance of every message, each encoder returning the encoded length including the header.
 */
final class SampleMessages
{
    static final long SENDING_TIME = 1_234_567_890_123L;
    static final long PRICE = 101_250_000_000L;

    record Sample(String name, ToIntBiFunction<MutableDirectBuffer, Integer> encoder)
    {
        int encode(final MutableDirectBuffer buffer, final int offset)
        {
            return encoder.applyAsInt(buffer, offset);
        }

        @Override
        public String toString()
        {
            return name;
        }
    }

    static List<Sample> all()
    {
        return List.of(
            new Sample("IncrementalRefresh", SampleMessages::incrementalRefresh),
            new Sample("Trade", SampleMessages::trade),
            new Sample("BookSnapshot", SampleMessages::bookSnapshot),
            new Sample("InstrumentDefinition", SampleMessages::instrumentDefinition),
            new Sample("NewOrder", SampleMessages::newOrder),
            new Sample("CancelOrder", SampleMessages::cancelOrder),
            new Sample("ReplaceOrder", SampleMessages::replaceOrder),
            new Sample("ExecutionReport", SampleMessages::executionReport),
            new Sample("OrderReject", SampleMessages::orderReject),
            new Sample("Logon", SampleMessages::logon),
            new Sample("Logout", SampleMessages::logout),
            new Sample("Heartbeat", SampleMessages::heartbeat));
    }

    static int incrementalRefresh(final MutableDirectBuffer buffer, final Integer offset)
    {
        final IncrementalRefreshEncoder encoder = new IncrementalRefreshEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.marketdata.MessageHeaderEncoder());
        encoder.sendingTimeNanos(SENDING_TIME).feedSequence(77);
        encoder.matchEventIndicator().clear().lastQuoteMsg(true).endOfEvent(true);
        final IncrementalRefreshEncoder.EntriesEncoder entries = encoder.entriesCount(3);
        for (int i = 0; i < 3; i++)
        {
            entries.next()
                .size(100 + i)
                .rptSeq(1000 + i)
                .instrumentId(7 + i)
                .priceLevel((short)(i + 1))
                .side(i % 2 == 0 ? MDSide.BID : MDSide.OFFER)
                .updateAction(MDUpdateAction.get((short)i))
                .price().mantissa(PRICE + i);
        }
        return io.verbus.sbe.marketdata.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int trade(final MutableDirectBuffer buffer, final Integer offset)
    {
        final TradeEncoder encoder = new TradeEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.marketdata.MessageHeaderEncoder());
        encoder.sendingTimeNanos(SENDING_TIME).tradeId(42).size(5).rptSeq(99).instrumentId(3)
            .aggressorSide(MDSide.OFFER).price().mantissa(PRICE);
        return io.verbus.sbe.marketdata.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int bookSnapshot(final MutableDirectBuffer buffer, final Integer offset)
    {
        final BookSnapshotEncoder encoder = new BookSnapshotEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.marketdata.MessageHeaderEncoder());
        encoder.sendingTimeNanos(SENDING_TIME).lastRptSeq(500).instrumentId(11);
        final BookSnapshotEncoder.LevelsEncoder levels = encoder.levelsCount(4);
        for (int i = 0; i < 4; i++)
        {
            levels.next().size(10L * (i + 1)).numberOfOrders(i + 2).priceLevel((short)(i / 2 + 1))
                .side(i % 2 == 0 ? MDSide.BID : MDSide.OFFER).price().mantissa(PRICE - i);
        }
        return io.verbus.sbe.marketdata.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int instrumentDefinition(final MutableDirectBuffer buffer, final Integer offset)
    {
        final InstrumentDefinitionEncoder encoder = new InstrumentDefinitionEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.marketdata.MessageHeaderEncoder());
        encoder.sendingTimeNanos(SENDING_TIME).lotSize(100).instrumentId(17).symbol("VRBS-DEC26").currency("EUR")
            .tickSize().mantissa(10_000_000L);
        return io.verbus.sbe.marketdata.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int newOrder(final MutableDirectBuffer buffer, final Integer offset)
    {
        final NewOrderEncoder encoder = new NewOrderEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.orderentry.MessageHeaderEncoder());
        encoder.clOrdId(9001).quantity(25).tickTimeNanos(SENDING_TIME - 500).sendingTimeNanos(SENDING_TIME)
            .instrumentId(4).side(Side.SELL).ordType(OrdType.LIMIT).timeInForce(TimeInForce.IOC)
            .price().mantissa(PRICE);
        return io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int cancelOrder(final MutableDirectBuffer buffer, final Integer offset)
    {
        final CancelOrderEncoder encoder = new CancelOrderEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.orderentry.MessageHeaderEncoder());
        encoder.clOrdId(9002).origClOrdId(9001).instrumentId(4).side(Side.BUY);
        return io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int replaceOrder(final MutableDirectBuffer buffer, final Integer offset)
    {
        final ReplaceOrderEncoder encoder = new ReplaceOrderEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.orderentry.MessageHeaderEncoder());
        encoder.clOrdId(9003).origClOrdId(9001).quantity(30).tickTimeNanos(SENDING_TIME).instrumentId(4)
            .side(Side.BUY).price().mantissa(PRICE + 1);
        return io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int executionReport(final MutableDirectBuffer buffer, final Integer offset)
    {
        final ExecutionReportEncoder encoder = new ExecutionReportEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.orderentry.MessageHeaderEncoder());
        encoder.orderId(1).clOrdId(9001).execId(2).lastQty(25).leavesQty(0).cumQty(25)
            .tickTimeNanos(SENDING_TIME - 500).transactTimeNanos(SENDING_TIME + 800).instrumentId(4)
            .execType(ExecType.FILL).side(Side.SELL).rejectReason(RejectReason.NONE).lastPx().mantissa(PRICE);
        return io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int orderReject(final MutableDirectBuffer buffer, final Integer offset)
    {
        final OrderRejectEncoder encoder = new OrderRejectEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.orderentry.MessageHeaderEncoder());
        encoder.clOrdId(9004).tickTimeNanos(SENDING_TIME).instrumentId(4).rejectReason(RejectReason.UNKNOWN_ORDER)
            .refTemplateId(CancelOrderEncoder.TEMPLATE_ID).text("no resting order 9001");
        return io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int logon(final MutableDirectBuffer buffer, final Integer offset)
    {
        final LogonEncoder encoder = new LogonEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.session.MessageHeaderEncoder());
        encoder.sendingTimeNanos(SENDING_TIME).heartbeatIntervalMs(1000).senderCompId("STRATEGY-1")
            .marketDataSchemaVersion(0).orderEntrySchemaVersion(0).protocolVersion().major(1).minor(2);
        return io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int logout(final MutableDirectBuffer buffer, final Integer offset)
    {
        final LogoutEncoder encoder = new LogoutEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.session.MessageHeaderEncoder());
        encoder.sendingTimeNanos(SENDING_TIME).reason(LogoutReason.HEARTBEAT_TIMEOUT);
        return io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    static int heartbeat(final MutableDirectBuffer buffer, final Integer offset)
    {
        final HeartbeatEncoder encoder = new HeartbeatEncoder().wrapAndApplyHeader(
            buffer, offset, new io.verbus.sbe.session.MessageHeaderEncoder());
        encoder.sendingTimeNanos(SENDING_TIME).nextExpectedSequence(31);
        return io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }

    private SampleMessages()
    {
    }
}
