package io.verbus.gateway.strategy;

import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.gateway.PartCounters;
import io.verbus.gateway.SessionProtocol;
import io.verbus.gateway.book.PriceLevelBook;
import io.verbus.sbe.MessageBounds;
import io.verbus.sbe.marketdata.BookSnapshotDecoder;
import io.verbus.sbe.marketdata.IncrementalRefreshDecoder;
import io.verbus.sbe.marketdata.InstrumentDefinitionDecoder;
import io.verbus.sbe.marketdata.TradeDecoder;
import io.verbus.sbe.orderentry.CancelOrderEncoder;
import io.verbus.sbe.orderentry.ExecType;
import io.verbus.sbe.orderentry.ExecutionReportDecoder;
import io.verbus.sbe.orderentry.NewOrderEncoder;
import io.verbus.sbe.orderentry.OrdType;
import io.verbus.sbe.orderentry.OrderRejectDecoder;
import io.verbus.sbe.orderentry.Side;
import io.verbus.sbe.orderentry.TimeInForce;
import io.verbus.sbe.session.LogonDecoder;
import io.verbus.sbe.session.LogonEncoder;
import io.verbus.sbe.session.LogoutDecoder;
import org.HdrHistogram.Recorder;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;

/**
 * The strategy: keeps a price-level book per instrument from the feed, and when the top of a book leans hard to one
 * side (the size at the best bid against the best offer passes the imbalance threshold) it takes the thin side with a
 * limit order at the touch. Every order and cancel is a request that the order gateway answers exactly once; the
 * strategy keeps one request in flight per instrument, and checks each answer against it.
 * <p>
 * Before its first order it logs on to the order gateway with the session Logon (protocol and schema versions), and
 * trades only once the gateway has answered with its own Logon.
 * <p>
 * Tick-to-trade is measured here: each order carries the publish time of the refresh that triggered it, the gateway
 * echoes it, and the answer's arrival time minus it goes into an HdrHistogram {@link Recorder} (wait-free, no
 * allocation) that the main thread samples.
 * <p>
 * Book integrity: entries must arrive in rptSeq order per instrument; a gap or an entry that does not fit the book
 * marks the book stale until the next snapshot rebuilds it. A snapshot of an up-to-date book is compared with it.
 */
public final class Strategy implements Agent
{
    /** Index of market data messages received, in {@link #counters()}. */
    public static final int MD_MESSAGES = 0;
    /** Index of book entries applied. */
    public static final int ENTRIES_APPLIED = 1;
    /** Index of sequence gaps and entries that did not fit a book. */
    public static final int BOOK_FAULTS = 2;
    /** Index of snapshots that disagreed with an up-to-date book. */
    public static final int SNAPSHOT_MISMATCHES = 3;
    /** Index of messages refused by bounds checks or for an unknown instrument. */
    public static final int MALFORMED = 4;
    /** Index of new orders sent. */
    public static final int ORDERS_SENT = 5;
    /** Index of cancels sent. */
    public static final int CANCELS_SENT = 6;
    /** Index of requests that could not be sent (not connected or back-pressured): the signal is skipped. */
    public static final int SEND_FAILURES = 7;
    /** Index of answers received for the request in flight. */
    public static final int ANSWERS = 8;
    /** Index of answers that matched no request in flight (a duplicate or a stray): must stay 0. */
    public static final int UNEXPECTED_ANSWERS = 9;
    /** Index of fills. */
    public static final int FILLS = 10;
    /** Index of acks (order resting). */
    public static final int ACKS = 11;
    /** Index of rejects. */
    public static final int REJECTS = 12;
    /** Index of requests in flight now. */
    public static final int IN_FLIGHT = 13;
    /** Index of trades seen. */
    public static final int TRADES = 14;
    /** Index of the session state: 1 once the order gateway accepted our logon, 0 before, -1 when refused. */
    public static final int SESSION = 15;

    private static final int FRAGMENT_LIMIT = 64;
    private static final long NO_REQUEST = 0;

    private final Subscription marketData;
    private final ExclusivePublication orders;
    private final Subscription reports;
    private final NanoClock clock;
    private final Recorder tickToTrade;
    private final int imbalancePercent;
    private final int maxOrderQty;

    private final PriceLevelBook[] books;
    private final boolean[] bookValid;
    private final long[] inFlightClOrdId;
    private final boolean[] inFlightIsNewOrder;
    private final long[] tickSizes;
    private final PriceLevelBook snapshotScratch;

    private final io.verbus.sbe.marketdata.MessageHeaderDecoder mdHeader =
        new io.verbus.sbe.marketdata.MessageHeaderDecoder();
    private final IncrementalRefreshDecoder refreshDecoder = new IncrementalRefreshDecoder();
    private final BookSnapshotDecoder snapshotDecoder = new BookSnapshotDecoder();
    private final InstrumentDefinitionDecoder definitionDecoder = new InstrumentDefinitionDecoder();
    private final TradeDecoder tradeDecoder = new TradeDecoder();
    private final io.verbus.sbe.orderentry.MessageHeaderDecoder oeHeader =
        new io.verbus.sbe.orderentry.MessageHeaderDecoder();
    private final ExecutionReportDecoder reportDecoder = new ExecutionReportDecoder();
    private final OrderRejectDecoder rejectDecoder = new OrderRejectDecoder();
    private final io.verbus.sbe.orderentry.MessageHeaderEncoder oeHeaderEncoder =
        new io.verbus.sbe.orderentry.MessageHeaderEncoder();
    private final NewOrderEncoder newOrderEncoder = new NewOrderEncoder();
    private final CancelOrderEncoder cancelEncoder = new CancelOrderEncoder();
    private final io.verbus.sbe.session.MessageHeaderEncoder sessionHeaderEncoder =
        new io.verbus.sbe.session.MessageHeaderEncoder();
    private final LogonEncoder logonEncoder = new LogonEncoder();
    private final LogonDecoder logonDecoder = new LogonDecoder();
    private final LogoutDecoder logoutDecoder = new LogoutDecoder();
    private final UnsafeBuffer sendBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(256));

    private final FragmentHandler marketDataHandler = this::onMarketData;
    private final FragmentHandler reportHandler = this::onReport;
    private final PartCounters counters = new PartCounters(
        "md-messages", "entries-applied", "book-faults", "snapshot-mismatches", "malformed", "orders-sent",
        "cancels-sent", "send-failures", "answers", "unexpected-answers", "fills", "acks", "rejects", "in-flight",
        "trades", "session");
    private final long[] counts = new long[16];

    private volatile boolean trading = true;
    /**
     * Set by the strategy's own thread at the end of its first duty cycle that began after {@link #stopTrading()}:
     * from then on it sends no new order, and its published counters include every request it sent.
     */
    private volatile boolean quiescent;
    private boolean logonSent;
    private long nextClOrdId = 1;

    /**
     * @param marketData       subscription to the feed.
     * @param orders           publication to the order gateway.
     * @param reports          subscription to the order gateway's answers.
     * @param clock            {@link System#nanoTime()}-based, like the feed's.
     * @param tickToTrade      where tick-to-trade latencies (ns) are recorded.
     * @param instruments      ids 0 to instruments - 1.
     * @param depth            book levels per side (at least the feed's).
     * @param imbalancePercent share of top-of-book size on one side that triggers an order, 51 to 100.
     * @param maxOrderQty      largest order quantity.
     */
    public Strategy(
        final Subscription marketData,
        final ExclusivePublication orders,
        final Subscription reports,
        final NanoClock clock,
        final Recorder tickToTrade,
        final int instruments,
        final int depth,
        final int imbalancePercent,
        final int maxOrderQty)
    {
        this.marketData = marketData;
        this.orders = orders;
        this.reports = reports;
        this.clock = clock;
        this.tickToTrade = tickToTrade;
        this.imbalancePercent = imbalancePercent;
        this.maxOrderQty = maxOrderQty;
        this.books = new PriceLevelBook[instruments];
        for (int id = 0; id < instruments; id++)
        {
            books[id] = new PriceLevelBook(id, depth);
        }
        this.bookValid = new boolean[instruments];
        this.inFlightClOrdId = new long[instruments];
        this.inFlightIsNewOrder = new boolean[instruments];
        this.tickSizes = new long[instruments];
        this.snapshotScratch = new PriceLevelBook(-1, depth);
    }

    @Override
    public String roleName()
    {
        return "strategy";
    }

    @Override
    public int doWork()
    {
        final boolean stopped = !trading;
        int work = orders.flush();
        if (!logonSent)
        {
            work += sendLogon();
        }
        work += reports.poll(reportHandler, FRAGMENT_LIMIT);
        work += marketData.poll(marketDataHandler, FRAGMENT_LIMIT);
        for (int i = 0; i < counts.length; i++)
        {
            counters.publish(i, counts[i]);
        }
        if (stopped && !quiescent)
        {
            quiescent = true;
        }
        return work;
    }

    private void onMarketData(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        counts[MD_MESSAGES]++;
        if (MessageBounds.check(buffer, offset, length) < 0)
        {
            counts[MALFORMED]++;
            return;
        }
        mdHeader.wrap(buffer, offset);
        if (mdHeader.schemaId() != IncrementalRefreshDecoder.SCHEMA_ID)
        {
            counts[MALFORMED]++;
            return;
        }
        final int body = offset + io.verbus.sbe.marketdata.MessageHeaderDecoder.ENCODED_LENGTH;
        switch (mdHeader.templateId())
        {
            case IncrementalRefreshDecoder.TEMPLATE_ID ->
                onIncrementalRefresh(refreshDecoder.wrap(buffer, body, mdHeader.blockLength(), mdHeader.version()));
            case BookSnapshotDecoder.TEMPLATE_ID ->
                onSnapshot(snapshotDecoder.wrap(buffer, body, mdHeader.blockLength(), mdHeader.version()));
            case InstrumentDefinitionDecoder.TEMPLATE_ID ->
            {
                definitionDecoder.wrap(buffer, body, mdHeader.blockLength(), mdHeader.version());
                final int id = definitionDecoder.instrumentId();
                if (id >= 0 && id < tickSizes.length)
                {
                    tickSizes[id] = definitionDecoder.tickSize().mantissa();
                }
            }
            case TradeDecoder.TEMPLATE_ID -> counts[TRADES]++;
            default ->
            {
                // a message type from a newer schema version: not ours to act on
            }
        }
    }

    private void onIncrementalRefresh(final IncrementalRefreshDecoder refresh)
    {
        final long tickTimeNanos = refresh.sendingTimeNanos();
        int touched = -1;
        for (final IncrementalRefreshDecoder.EntriesDecoder entry : refresh.entries())
        {
            final int id = entry.instrumentId();
            if (id < 0 || id >= books.length)
            {
                counts[MALFORMED]++;
                continue;
            }
            if (id != touched)
            {
                if (touched >= 0)
                {
                    onBookChanged(touched, tickTimeNanos);
                }
                touched = id;
            }
            if (!bookValid[id])
            {
                continue;
            }
            final PriceLevelBook book = books[id];
            final long rptSeq = entry.rptSeq();
            if (rptSeq != book.lastRptSeq() + 1 ||
                !book.apply(entry.sideRaw(), entry.updateActionRaw(), entry.priceLevel(), entry.price().mantissa(),
                    entry.size()))
            {
                bookValid[id] = false;
                counts[BOOK_FAULTS]++;
                continue;
            }
            book.lastRptSeq(rptSeq);
            counts[ENTRIES_APPLIED]++;
        }
        if (touched >= 0)
        {
            onBookChanged(touched, tickTimeNanos);
        }
    }

    private void onSnapshot(final BookSnapshotDecoder snapshot)
    {
        final int id = snapshot.instrumentId();
        if (id < 0 || id >= books.length)
        {
            counts[MALFORMED]++;
            return;
        }
        final PriceLevelBook book = books[id];
        final long lastRptSeq = snapshot.lastRptSeq();
        final boolean rebuild = !bookValid[id];
        if (!rebuild && lastRptSeq != book.lastRptSeq())
        {
            return; // the snapshot describes another moment than our book: nothing to compare
        }

        final PriceLevelBook target = rebuild ? book : snapshotScratch;
        target.clear();
        boolean fits = true;
        for (final BookSnapshotDecoder.LevelsDecoder level : snapshot.levels())
        {
            fits &= target.apply(level.sideRaw(), PriceLevelBook.NEW, level.priceLevel(), level.price().mantissa(),
                level.size());
        }
        if (rebuild)
        {
            bookValid[id] = fits;
            book.lastRptSeq(lastRptSeq);
        }
        else if (!fits || !snapshotScratch.sameLevelsAs(book))
        {
            counts[SNAPSHOT_MISMATCHES]++;
            bookValid[id] = false;
        }
    }

    private int sendLogon()
    {
        logonEncoder.wrapAndApplyHeader(sendBuffer, 0, sessionHeaderEncoder)
            .sendingTimeNanos(clock.nanoTime())
            .heartbeatIntervalMs(SessionProtocol.HEARTBEAT_INTERVAL_MS)
            .senderCompId("STRATEGY")
            .marketDataSchemaVersion(IncrementalRefreshDecoder.SCHEMA_VERSION)
            .orderEntrySchemaVersion(NewOrderEncoder.SCHEMA_VERSION)
            .protocolVersion().major(SessionProtocol.MAJOR).minor(SessionProtocol.MINOR);
        final int length = io.verbus.sbe.session.MessageHeaderEncoder.ENCODED_LENGTH + logonEncoder.encodedLength();
        // Until the order stream is connected this is refused; it is offered again next duty cycle.
        logonSent = orders.offer(sendBuffer, 0, length) > 0;
        return logonSent ? 1 : 0;
    }

    private void onBookChanged(final int id, final long tickTimeNanos)
    {
        if (!trading || counts[SESSION] != 1 || !bookValid[id] || inFlightClOrdId[id] != NO_REQUEST)
        {
            return;
        }
        final PriceLevelBook book = books[id];
        if (book.levelCount(PriceLevelBook.BID) == 0 || book.levelCount(PriceLevelBook.OFFER) == 0)
        {
            return;
        }
        final long bidSize = book.size(PriceLevelBook.BID, 1);
        final long offerSize = book.size(PriceLevelBook.OFFER, 1);
        final long total = bidSize + offerSize;
        if (bidSize * 100 >= imbalancePercent * total)
        {
            // Buyers stack up behind the bid: the offer is likely to be lifted, take it first.
            sendNewOrder(id, Side.BUY, book.price(PriceLevelBook.OFFER, 1), Math.min(offerSize, maxOrderQty),
                tickTimeNanos);
        }
        else if (offerSize * 100 >= imbalancePercent * total)
        {
            sendNewOrder(id, Side.SELL, book.price(PriceLevelBook.BID, 1), Math.min(bidSize, maxOrderQty),
                tickTimeNanos);
        }
    }

    private void sendNewOrder(final int id, final Side side, final long price, final long qty, final long tickTimeNanos)
    {
        final long clOrdId = nextClOrdId;
        newOrderEncoder.wrapAndApplyHeader(sendBuffer, 0, oeHeaderEncoder)
            .clOrdId(clOrdId)
            .quantity(qty)
            .tickTimeNanos(tickTimeNanos)
            .sendingTimeNanos(clock.nanoTime())
            .instrumentId(id)
            .side(side)
            .ordType(OrdType.LIMIT)
            .timeInForce(TimeInForce.DAY)
            .price().mantissa(price);
        final int length = io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH +
            newOrderEncoder.encodedLength();
        if (orders.offer(sendBuffer, 0, length) > 0)
        {
            nextClOrdId++;
            inFlightClOrdId[id] = clOrdId;
            inFlightIsNewOrder[id] = true;
            counts[ORDERS_SENT]++;
            counts[IN_FLIGHT]++;
        }
        else
        {
            counts[SEND_FAILURES]++;
        }
    }

    private void sendCancel(final int id, final long origClOrdId, final Side side)
    {
        final long clOrdId = nextClOrdId;
        cancelEncoder.wrapAndApplyHeader(sendBuffer, 0, oeHeaderEncoder)
            .clOrdId(clOrdId)
            .origClOrdId(origClOrdId)
            .instrumentId(id)
            .side(side);
        final int length = io.verbus.sbe.orderentry.MessageHeaderEncoder.ENCODED_LENGTH +
            cancelEncoder.encodedLength();
        if (orders.offer(sendBuffer, 0, length) > 0)
        {
            nextClOrdId++;
            inFlightClOrdId[id] = clOrdId;
            inFlightIsNewOrder[id] = false;
            counts[CANCELS_SENT]++;
            counts[IN_FLIGHT]++;
        }
        else
        {
            counts[SEND_FAILURES]++;
        }
    }

    private void onReport(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final long receivedNs = clock.nanoTime();
        if (MessageBounds.check(buffer, offset, length) < 0)
        {
            counts[MALFORMED]++;
            return;
        }
        oeHeader.wrap(buffer, offset);
        final int body = offset + io.verbus.sbe.orderentry.MessageHeaderDecoder.ENCODED_LENGTH;
        if (oeHeader.schemaId() == LogonDecoder.SCHEMA_ID)
        {
            onSessionAnswer(buffer, body, oeHeader.templateId(), oeHeader.blockLength(), oeHeader.version());
            return;
        }
        if (oeHeader.schemaId() != ExecutionReportDecoder.SCHEMA_ID)
        {
            counts[MALFORMED]++;
            return;
        }
        switch (oeHeader.templateId())
        {
            case ExecutionReportDecoder.TEMPLATE_ID ->
            {
                reportDecoder.wrap(buffer, body, oeHeader.blockLength(), oeHeader.version());
                final int id = reportDecoder.instrumentId();
                if (!matchesInFlight(id, reportDecoder.clOrdId()))
                {
                    return;
                }
                final boolean wasNewOrder = inFlightIsNewOrder[id];
                if (wasNewOrder)
                {
                    tickToTrade.recordValue(Math.max(0, receivedNs - reportDecoder.tickTimeNanos()));
                }
                final ExecType execType = reportDecoder.execType();
                switch (execType)
                {
                    case FILL, PARTIAL_FILL -> counts[FILLS]++;
                    case REJECTED -> counts[REJECTS]++;
                    case NEW -> counts[ACKS]++;
                    default ->
                    {
                        // CANCELED / REPLACED answer our cancels
                    }
                }
                if (wasNewOrder && execType == ExecType.NEW)
                {
                    // A resting order is not what this strategy wants: pull it at once.
                    sendCancel(id, reportDecoder.clOrdId(), reportDecoder.side());
                }
            }
            case OrderRejectDecoder.TEMPLATE_ID ->
            {
                rejectDecoder.wrap(buffer, body, oeHeader.blockLength(), oeHeader.version());
                if (matchesInFlight(rejectDecoder.instrumentId(), rejectDecoder.clOrdId()))
                {
                    counts[REJECTS]++;
                }
            }
            default -> counts[MALFORMED]++;
        }
    }

    private void onSessionAnswer(
        final DirectBuffer buffer, final int body, final int templateId, final int blockLength, final int version)
    {
        if (templateId == LogonDecoder.TEMPLATE_ID)
        {
            logonDecoder.wrap(buffer, body, blockLength, version);
            counts[SESSION] = logonDecoder.protocolVersion().major() == SessionProtocol.MAJOR ? 1 : -1;
        }
        else if (templateId == LogoutDecoder.TEMPLATE_ID)
        {
            logoutDecoder.wrap(buffer, body, blockLength, version);
            counts[SESSION] = -1;
        }
        else
        {
            counts[MALFORMED]++;
        }
    }

    private boolean matchesInFlight(final int id, final long clOrdId)
    {
        if (id < 0 || id >= inFlightClOrdId.length || inFlightClOrdId[id] != clOrdId || clOrdId == NO_REQUEST)
        {
            counts[UNEXPECTED_ANSWERS]++;
            return false;
        }
        inFlightClOrdId[id] = NO_REQUEST;
        counts[ANSWERS]++;
        counts[IN_FLIGHT]--;
        return true;
    }

    /** Stop sending new orders (answers are still taken, and acked orders still cancelled). Any thread. */
    public void stopTrading()
    {
        trading = false;
    }

    /**
     * @return true once a whole duty cycle has run after {@link #stopTrading()}: no new order follows, and the
     * published {@link #IN_FLIGHT} only falls (a cancel goes out in the same cycle as the ack it answers). Any thread.
     */
    public boolean isQuiescent()
    {
        return quiescent;
    }

    /** @return true once the order gateway accepted the logon. */
    public boolean isLoggedOn()
    {
        return counters.get(SESSION) == 1;
    }

    /** @return the strategy's counts (index constants above). */
    public PartCounters counters()
    {
        return counters;
    }

    /**
     * @param instrumentId of an instrument.
     * @return the strategy's book of it (read only once the strategy's thread has stopped).
     */
    public PriceLevelBook book(final int instrumentId)
    {
        return books[instrumentId];
    }

    /**
     * @param instrumentId of an instrument.
     * @return true when that book is up to date (no gap since its last snapshot).
     */
    public boolean isBookValid(final int instrumentId)
    {
        return bookValid[instrumentId];
    }
}
