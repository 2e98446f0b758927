package io.verbus.gateway.strategy;

import io.verbus.gateway.LoopbackAccess;
import io.verbus.gateway.SessionProtocol;
import io.verbus.gateway.book.PriceLevelBook;
import io.verbus.sbe.marketdata.BookSnapshotEncoder;
import io.verbus.sbe.marketdata.IncrementalRefreshEncoder;
import io.verbus.sbe.marketdata.MDSide;
import io.verbus.sbe.marketdata.MDUpdateAction;
import io.verbus.sbe.marketdata.MessageHeaderEncoder;
import io.verbus.sbe.orderentry.ExecType;
import io.verbus.sbe.orderentry.ExecutionReportEncoder;
import io.verbus.sbe.orderentry.NewOrderDecoder;
import io.verbus.sbe.orderentry.RejectReason;
import io.verbus.sbe.orderentry.Side;
import io.verbus.sbe.session.LogonDecoder;
import io.verbus.sbe.session.LogonEncoder;
import org.HdrHistogram.Recorder;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import static io.verbus.gateway.book.PriceLevelBook.BID;
import static io.verbus.gateway.book.PriceLevelBook.OFFER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class StrategyTest
{
    private static final int INSTRUMENT = 1;
    private static final long TICK = 10_000_000L;
    private static final long P100 = 100 * 1_000_000_000L;

    private final LoopbackAccess.Channel marketData = LoopbackAccess.channel(64);
    private final LoopbackAccess.Channel orders = LoopbackAccess.channel(64);
    private final LoopbackAccess.Channel reports = LoopbackAccess.channel(64);
    private final Recorder recorder = new Recorder(60_000_000_000L, 3);
    private final long[] clock = { 1_000_000L };
    private final Strategy strategy = new Strategy(marketData.subscription(), orders.publication(),
        reports.subscription(), () -> clock[0], recorder, 2, 4, 80, 50);
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[4096]);

    private record Entry(int side, int action, int level, long price, long size, long rptSeq)
    {
    }

    private void publishRefresh(final long sendingTime, final Entry... entries)
    {
        final IncrementalRefreshEncoder encoder = new IncrementalRefreshEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.sendingTimeNanos(sendingTime).feedSequence(1);
        final IncrementalRefreshEncoder.EntriesEncoder group = encoder.entriesCount(entries.length);
        for (final Entry entry : entries)
        {
            group.next().size(entry.size).rptSeq(entry.rptSeq).instrumentId(INSTRUMENT)
                .priceLevel((short)entry.level).side(MDSide.get((short)entry.side))
                .updateAction(MDUpdateAction.get((short)entry.action)).price().mantissa(entry.price);
        }
        marketData.publication().offer(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private void publishSnapshot(final long lastRptSeq, final long[][] bids, final long[][] offers)
    {
        final BookSnapshotEncoder encoder = new BookSnapshotEncoder()
            .wrapAndApplyHeader(buffer, 0, new MessageHeaderEncoder());
        encoder.sendingTimeNanos(5).lastRptSeq(lastRptSeq).instrumentId(INSTRUMENT);
        final BookSnapshotEncoder.LevelsEncoder levels = encoder.levelsCount(bids.length + offers.length);
        for (int i = 0; i < bids.length; i++)
        {
            levels.next().priceLevel((short)(i + 1)).side(MDSide.BID).size(bids[i][1]).numberOfOrders(1)
                .price().mantissa(bids[i][0]);
        }
        for (int i = 0; i < offers.length; i++)
        {
            levels.next().priceLevel((short)(i + 1)).side(MDSide.OFFER).size(offers[i][1]).numberOfOrders(1)
                .price().mantissa(offers[i][0]);
        }
        marketData.publication().offer(buffer, 0, MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }

    private void drain()
    {
        for (int i = 0; i < 10 && strategy.doWork() > 0; i++)
        {
            // each duty cycle polls up to 64 fragments
        }
    }

    private void logOn()
    {
        drain();
        assertEquals(1, orders.pending(), "the logon goes out first");
        final LogonDecoder logon = new LogonDecoder().wrapAndApplyHeader(orders.peek(0), 0,
            new io.verbus.sbe.session.MessageHeaderDecoder());
        assertEquals(SessionProtocol.MAJOR, logon.protocolVersion().major());
        orders.subscription().poll((b, o, l, h) -> {}, 1);
        final LogonEncoder answer = new LogonEncoder()
            .wrapAndApplyHeader(buffer, 0, new io.verbus.sbe.session.MessageHeaderEncoder());
        answer.sendingTimeNanos(1).heartbeatIntervalMs(1000).senderCompId("GW").marketDataSchemaVersion(0)
            .orderEntrySchemaVersion(0).protocolVersion().major(SessionProtocol.MAJOR).minor(0);
        reports.publication().offer(buffer, 0,
            io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + answer.encodedLength());
        drain();
        assertTrue(strategy.isLoggedOn());
    }

    /** Logged on, and a balanced two-level book at rptSeq 10, so no order is triggered. */
    private void startBook()
    {
        logOn();
        publishSnapshot(10, new long[][]{ { P100, 40 }, { P100 - TICK, 30 } },
            new long[][]{ { P100 + TICK, 40 }, { P100 + 2 * TICK, 30 } });
        drain();
        assertTrue(strategy.isBookValid(INSTRUMENT));
    }

    @Test
    void shouldHoldExactlyTheBookThatAKnownSequenceOfRefreshesDescribes()
    {
        startBook();
        // Price moves up: new best bid, the best offer is taken, a new deepest offer.
        publishRefresh(100,
            new Entry(BID, PriceLevelBook.NEW, 1, P100 + TICK, 35, 11),
            new Entry(OFFER, PriceLevelBook.DELETE, 1, P100 + TICK, 0, 12),
            new Entry(OFFER, PriceLevelBook.NEW, 2, P100 + 3 * TICK, 25, 13));
        publishRefresh(200, new Entry(OFFER, PriceLevelBook.CHANGE, 1, P100 + 2 * TICK, 33, 14));
        publishRefresh(300, new Entry(BID, PriceLevelBook.DELETE, 3, P100 - TICK, 0, 15));
        drain();

        final PriceLevelBook book = strategy.book(INSTRUMENT);
        assertTrue(strategy.isBookValid(INSTRUMENT));
        assertEquals(15, book.lastRptSeq());
        assertEquals(2, book.levelCount(BID));
        assertEquals(P100 + TICK, book.price(BID, 1));
        assertEquals(35, book.size(BID, 1));
        assertEquals(P100, book.price(BID, 2));
        assertEquals(40, book.size(BID, 2));
        assertEquals(2, book.levelCount(OFFER));
        assertEquals(P100 + 2 * TICK, book.price(OFFER, 1));
        assertEquals(33, book.size(OFFER, 1));
        assertEquals(P100 + 3 * TICK, book.price(OFFER, 2));
        assertEquals(25, book.size(OFFER, 2));
        assertEquals(0, strategy.counters().get(Strategy.BOOK_FAULTS));
        assertEquals(0, orders.pending(), "balanced book: no signal");
    }

    @Test
    void shouldMarkTheBookStaleOnASequenceGapAndRebuildItFromTheNextSnapshot()
    {
        startBook();
        publishRefresh(100, new Entry(BID, PriceLevelBook.CHANGE, 1, P100, 41, 12)); // 11 never came
        publishRefresh(200, new Entry(BID, PriceLevelBook.CHANGE, 1, P100, 42, 13));
        drain();
        assertFalse(strategy.isBookValid(INSTRUMENT));
        assertEquals(1, strategy.counters().get(Strategy.BOOK_FAULTS));
        assertEquals(40, strategy.book(INSTRUMENT).size(BID, 1), "nothing applied after the gap");

        publishSnapshot(13, new long[][]{ { P100, 42 } }, new long[][]{ { P100 + TICK, 44 } });
        publishRefresh(300, new Entry(OFFER, PriceLevelBook.CHANGE, 1, P100 + TICK, 45, 14));
        drain();
        assertTrue(strategy.isBookValid(INSTRUMENT));
        assertEquals(14, strategy.book(INSTRUMENT).lastRptSeq());
        assertEquals(42, strategy.book(INSTRUMENT).size(BID, 1));
        assertEquals(45, strategy.book(INSTRUMENT).size(OFFER, 1));
    }

    @Test
    void shouldCountASnapshotThatDisagreesWithAnUpToDateBook()
    {
        startBook();
        publishSnapshot(10, new long[][]{ { P100, 41 } }, new long[][]{ { P100 + TICK, 40 } });
        drain();
        assertEquals(1, strategy.counters().get(Strategy.SNAPSHOT_MISMATCHES));
        assertFalse(strategy.isBookValid(INSTRUMENT));
    }

    @Test
    void shouldBuyTheOfferWhenBidsOutweighItAndRecordTickToTradeFromTheAnswer()
    {
        startBook();
        publishRefresh(500_000L, new Entry(BID, PriceLevelBook.CHANGE, 1, P100, 400, 11));
        drain();

        assertEquals(1, orders.pending());
        final NewOrderDecoder order = new NewOrderDecoder().wrapAndApplyHeader(orders.peek(0), 0,
            new io.verbus.sbe.orderentry.MessageHeaderDecoder());
        assertEquals(Side.BUY, order.side());
        assertEquals(P100 + TICK, order.price().mantissa());
        assertEquals(40, order.quantity(), "the size at the offer, under the max order quantity");
        assertEquals(500_000L, order.tickTimeNanos());

        // A second signal while the order is in flight sends nothing.
        publishRefresh(600_000L, new Entry(BID, PriceLevelBook.CHANGE, 1, P100, 500, 12));
        drain();
        assertEquals(1, orders.pending());

        clock[0] = 2_500_000L;
        answer(order.clOrdId(), ExecType.FILL, 500_000L);
        drain();
        assertEquals(1, strategy.counters().get(Strategy.ANSWERS));
        assertEquals(1, strategy.counters().get(Strategy.FILLS));
        assertEquals(0, strategy.counters().get(Strategy.IN_FLIGHT));
        assertEquals(2_000_000L, recorder.getIntervalHistogram().getMaxValue(), 2_000_000L / 500);
    }

    @Test
    void shouldBeQuiescentOnlyAfterACycleThatBeganStoppedAndSendNoOrderThen()
    {
        startBook();
        publishRefresh(500_000L, new Entry(BID, PriceLevelBook.CHANGE, 1, P100, 400, 11));
        strategy.stopTrading();
        assertFalse(strategy.isQuiescent(), "no duty cycle has run since the stop");
        drain();
        assertTrue(strategy.isQuiescent());
        assertEquals(0, orders.pending(), "a strong signal after the stop sends nothing");
        assertEquals(0, strategy.counters().get(Strategy.IN_FLIGHT));
    }

    @Test
    void shouldNotTradeBeforeTheOrderGatewayAcceptedTheLogon()
    {
        drain();
        orders.subscription().poll((b, o, l, h) -> {}, 1); // the logon, never answered
        publishSnapshot(10, new long[][]{ { P100, 40 } }, new long[][]{ { P100 + TICK, 40 } });
        publishRefresh(500_000L, new Entry(BID, PriceLevelBook.CHANGE, 1, P100, 400, 11));
        drain();
        assertFalse(strategy.isLoggedOn());
        assertEquals(0, orders.pending(), "a strong signal, but no session");
        assertEquals(11, strategy.book(INSTRUMENT).lastRptSeq(), "the book is kept all the same");
    }

    @Test
    void shouldCountADuplicateAnswerAsUnexpected()
    {
        startBook();
        publishRefresh(500_000L, new Entry(OFFER, PriceLevelBook.CHANGE, 1, P100 + TICK, 400, 11));
        drain();
        final long clOrdId = new NewOrderDecoder().wrapAndApplyHeader(orders.peek(0), 0,
            new io.verbus.sbe.orderentry.MessageHeaderDecoder()).clOrdId();
        answer(clOrdId, ExecType.FILL, 500_000L);
        answer(clOrdId, ExecType.FILL, 500_000L);
        drain();
        assertEquals(1, strategy.counters().get(Strategy.ANSWERS));
        assertEquals(1, strategy.counters().get(Strategy.UNEXPECTED_ANSWERS));
    }

    private void answer(final long clOrdId, final ExecType execType, final long tickTime)
    {
        final ExecutionReportEncoder encoder = new ExecutionReportEncoder()
            .wrapAndApplyHeader(buffer, 0, new io.verbus.sbe.orderentry.MessageHeaderEncoder());
        encoder.orderId(1).clOrdId(clOrdId).execId(1).lastQty(40).leavesQty(0).cumQty(40).tickTimeNanos(tickTime)
            .transactTimeNanos(tickTime).instrumentId(INSTRUMENT).execType(execType).side(Side.BUY)
            .rejectReason(RejectReason.NONE).lastPx().mantissa(P100 + TICK);
        reports.publication().offer(buffer, 0,
            io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength());
    }
}
