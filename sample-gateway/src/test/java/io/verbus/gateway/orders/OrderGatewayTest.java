package io.verbus.gateway.orders;

import io.verbus.gateway.LoopbackAccess;
import io.verbus.gateway.SessionProtocol;
import io.verbus.sbe.orderentry.CancelOrderEncoder;
import io.verbus.sbe.orderentry.ExecType;
import io.verbus.sbe.orderentry.ExecutionReportDecoder;
import io.verbus.sbe.orderentry.MessageHeaderDecoder;
import io.verbus.sbe.orderentry.MessageHeaderEncoder;
import io.verbus.sbe.orderentry.NewOrderEncoder;
import io.verbus.sbe.orderentry.OrdType;
import io.verbus.sbe.orderentry.OrderRejectDecoder;
import io.verbus.sbe.orderentry.RejectReason;
import io.verbus.sbe.orderentry.Side;
import io.verbus.sbe.orderentry.TimeInForce;
import io.verbus.sbe.session.LogonDecoder;
import io.verbus.sbe.session.LogonEncoder;
import io.verbus.sbe.session.LogoutDecoder;
import io.verbus.sbe.session.LogoutReason;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OrderGatewayTest
{
    private static final long PRICE = 100_000_000_000L;

    private final LoopbackAccess.Channel requests = LoopbackAccess.channel(64);
    private final LoopbackAccess.Channel answers = LoopbackAccess.channel(64);
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[512]);

    private OrderGateway gateway(final int fillPercent)
    {
        return new OrderGateway(requests.subscription(), answers.publication(), () -> 42L, 4, 50, 100,
            fillPercent, 7);
    }

    private void newOrder(final long clOrdId, final int instrument, final Side side, final long qty, final long price)
    {
        final NewOrderEncoder encoder = new NewOrderEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.clOrdId(clOrdId).quantity(qty).tickTimeNanos(1000 + clOrdId).sendingTimeNanos(0)
            .instrumentId(instrument).side(side).ordType(OrdType.LIMIT).timeInForce(TimeInForce.DAY)
            .price().mantissa(price);
        requests.publication().offer(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private void cancel(final long clOrdId, final long origClOrdId)
    {
        final CancelOrderEncoder encoder = new CancelOrderEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.clOrdId(clOrdId).origClOrdId(origClOrdId).instrumentId(0).side(Side.BUY);
        requests.publication().offer(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private void logon(final int major)
    {
        final LogonEncoder encoder = new LogonEncoder()
            .wrapAndApplyHeader(buffer, 0, new io.verbus.sbe.session.MessageHeaderEncoder());
        encoder.sendingTimeNanos(1).heartbeatIntervalMs(1000).senderCompId("STRATEGY").marketDataSchemaVersion(0)
            .orderEntrySchemaVersion(0).protocolVersion().major(major).minor(3);
        requests.publication().offer(buffer, 0,
            io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    /** Answer i to the orders, after the answer to the logon. */
    private ExecutionReportDecoder report(final int i)
    {
        return new ExecutionReportDecoder().wrapAndApplyHeader(answers.peek(i + 1), 0, new MessageHeaderDecoder());
    }

    @Test
    void shouldAcceptALogonOfTheSameMajorVersionAndRejectOrdersBeforeIt()
    {
        final OrderGateway gateway = gateway(100);
        newOrder(1, 0, Side.BUY, 10, PRICE);
        logon(SessionProtocol.MAJOR);
        newOrder(2, 0, Side.BUY, 10, PRICE);
        gateway.doWork();

        assertEquals(3, answers.pending());
        final ExecutionReportDecoder early = new ExecutionReportDecoder()
            .wrapAndApplyHeader(answers.peek(0), 0, new MessageHeaderDecoder());
        assertEquals(RejectReason.NOT_LOGGED_ON, early.rejectReason());
        final LogonDecoder accepted = new LogonDecoder()
            .wrapAndApplyHeader(answers.peek(1), 0, new io.verbus.sbe.session.MessageHeaderDecoder());
        assertEquals(SessionProtocol.MAJOR, accepted.protocolVersion().major());
        assertEquals(ExecType.FILL, new ExecutionReportDecoder()
            .wrapAndApplyHeader(answers.peek(2), 0, new MessageHeaderDecoder()).execType());
        assertTrue(gateway.isLoggedOn());
    }

    @Test
    void shouldRefuseALogonOfAnotherMajorVersionWithALogout()
    {
        final OrderGateway gateway = gateway(100);
        logon(SessionProtocol.MAJOR + 1);
        newOrder(1, 0, Side.BUY, 10, PRICE);
        gateway.doWork();

        final LogoutDecoder logout = new LogoutDecoder()
            .wrapAndApplyHeader(answers.peek(0), 0, new io.verbus.sbe.session.MessageHeaderDecoder());
        assertEquals(LogoutReason.UNSUPPORTED_VERSION, logout.reason());
        assertEquals(RejectReason.NOT_LOGGED_ON, report(0).rejectReason());
        assertEquals(1, gateway.counters().get(OrderGateway.LOGONS_REFUSED));
    }

    @Test
    void shouldRejectOrdersFailingRiskChecksWithTheReasonAndEchoTheTickTime()
    {
        final OrderGateway gateway = gateway(100);
        logon(SessionProtocol.MAJOR);
        newOrder(1, 9, Side.BUY, 10, PRICE);
        newOrder(2, 0, Side.BUY, 51, PRICE);
        newOrder(3, 0, Side.BUY, 10, 0);
        newOrder(4, 0, Side.BUY, 50, PRICE);
        newOrder(5, 0, Side.BUY, 50, PRICE);
        newOrder(6, 0, Side.BUY, 1, PRICE);
        gateway.doWork();

        assertEquals(1 + 6, answers.pending());
        assertEquals(RejectReason.UNKNOWN_INSTRUMENT, report(0).rejectReason());
        assertEquals(ExecType.REJECTED, report(0).execType());
        assertEquals(1001, report(0).tickTimeNanos());
        assertEquals(RejectReason.INVALID_QUANTITY, report(1).rejectReason());
        assertEquals(RejectReason.INVALID_PRICE, report(2).rejectReason());
        assertEquals(ExecType.FILL, report(3).execType());
        assertEquals(50, report(3).lastQty());
        assertEquals(PRICE, report(3).lastPx().mantissa());
        assertEquals(ExecType.FILL, report(4).execType());
        assertEquals(RejectReason.RISK_LIMIT, report(5).rejectReason(), "position 100 is the limit");
        assertEquals(100, gateway.position(0));
    }

    @Test
    void shouldAckOrdersItDoesNotFillAndCancelThemOnce()
    {
        final OrderGateway gateway = gateway(0);
        logon(SessionProtocol.MAJOR);
        newOrder(1, 2, Side.SELL, 10, PRICE);
        cancel(2, 1);
        cancel(3, 1);
        gateway.doWork();

        assertEquals(1 + 3, answers.pending());
        assertEquals(ExecType.NEW, report(0).execType());
        assertEquals(10, report(0).leavesQty());
        assertEquals(ExecType.CANCELED, report(1).execType());
        assertEquals(2, report(1).clOrdId());
        final OrderRejectDecoder reject = new OrderRejectDecoder()
            .wrapAndApplyHeader(answers.peek(1 + 2), 0, new MessageHeaderDecoder());
        assertEquals(3, reject.clOrdId());
        assertEquals(RejectReason.UNKNOWN_ORDER, reject.rejectReason());
        assertEquals(CancelOrderEncoder.TEMPLATE_ID, reject.refTemplateId());
        assertEquals(0, gateway.restingOrders());
    }

    @Test
    void shouldAnswerEachOrderExactlyOnceWhenAnswersAreBackPressured()
    {
        final OrderGateway gateway = gateway(100);
        logon(SessionProtocol.MAJOR);
        gateway.doWork();
        for (int i = 1; i <= 5; i++)
        {
            newOrder(i, 1, Side.BUY, 1, PRICE);
        }
        answers.refuseNextOffers(3);
        for (int cycle = 0; cycle < 10; cycle++)
        {
            gateway.doWork();
        }

        assertEquals(1 + 5, answers.pending());
        for (int i = 0; i < 5; i++)
        {
            assertEquals(i + 1, report(i).clOrdId(), "in order, once each");
        }
        assertEquals(5, gateway.position(1), "state changed once per order, not per attempt");
        assertEquals(3, gateway.counters().get(OrderGateway.BACK_PRESSURE));
        assertEquals(5, gateway.counters().get(OrderGateway.ANSWERED), "the logon's answer is not an order's");
    }

    @Test
    void shouldCountAnswersRefusedBeforeTheStrategyConnectedApartFromBackPressure()
    {
        final OrderGateway gateway = gateway(100);
        answers.connected(false);
        logon(SessionProtocol.MAJOR);
        for (int cycle = 0; cycle < 4; cycle++)
        {
            gateway.doWork();
        }
        assertEquals(0, answers.pending(), "nothing taken while not connected");

        answers.connected(true);
        answers.refuseNextOffers(2);
        for (int cycle = 0; cycle < 4; cycle++)
        {
            gateway.doWork();
        }

        assertEquals(1, answers.pending(), "the logon answered once, when it could be");
        assertEquals(4, gateway.counters().get(OrderGateway.NOT_CONNECTED));
        assertEquals(2, gateway.counters().get(OrderGateway.BACK_PRESSURE));
    }

    @Test
    void shouldAnswerATruncatedRequestWithAMalformedReject()
    {
        final OrderGateway gateway = gateway(100);
        logon(SessionProtocol.MAJOR);
        gateway.doWork();
        final NewOrderEncoder encoder = new NewOrderEncoder().wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.clOrdId(77).quantity(1).instrumentId(0).side(Side.BUY).price().mantissa(PRICE);
        requests.publication().offer(buffer, 0, 30);
        gateway.doWork();

        final OrderRejectDecoder reject = new OrderRejectDecoder()
            .wrapAndApplyHeader(answers.peek(1), 0, new MessageHeaderDecoder());
        assertEquals(77, reject.clOrdId());
        assertEquals(RejectReason.MALFORMED, reject.rejectReason());
        assertEquals(0, gateway.position(0));
    }
}
