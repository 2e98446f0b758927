package io.verbus.gateway.feed;

import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.gateway.PartCounters;
import io.verbus.gateway.book.PriceLevelBook;
import io.verbus.sbe.marketdata.BookSnapshotEncoder;
import io.verbus.sbe.marketdata.IncrementalRefreshEncoder;
import io.verbus.sbe.marketdata.InstrumentDefinitionEncoder;
import io.verbus.sbe.marketdata.MDSide;
import io.verbus.sbe.marketdata.MDUpdateAction;
import io.verbus.sbe.marketdata.MessageHeaderEncoder;
import io.verbus.sbe.marketdata.TradeEncoder;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentTerminationException;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

/**
 * The market-data feed handler: publishes the synthetic market of N instruments as SBE incremental refreshes at a
 * configured rate, in bursts, with a trade print after each price move and a book snapshot of one instrument at a time
 * in rotation (so a late or gapped subscriber recovers).
 * <p>
 * Each message is encoded once into an outbox and offered until the publication takes it: under back pressure the
 * market stands still rather than dropping changes, so subscribers never see a gap the feed caused. The publish time
 * ({@code sendingTimeNanos}, {@link System#nanoTime()}) is stamped into each message just before its offer: it is
 * where tick-to-trade starts.
 */
public final class FeedHandler implements Agent
{
    /** Index of messages published, in {@link #counters()}. */
    public static final int MESSAGES = 0;
    /** Index of incremental refreshes published. */
    public static final int REFRESHES = 1;
    /** Index of offers refused while the publication was connected (back pressure, admin action). */
    public static final int BACK_PRESSURE = 2;
    /** Index of times the feed fell so far behind its schedule that it skipped ahead. */
    public static final int SCHEDULE_RESETS = 3;
    /** Index of offers refused while no subscriber was connected (e.g. after the strategy stopped). */
    public static final int NOT_CONNECTED = 4;

    /** Every market data message has sendingTimeNanos at the start of its block, right after the header. */
    static final int SENDING_TIME_OFFSET = MessageHeaderEncoder.ENCODED_LENGTH;

    private static final int MAX_EVENTS_PER_DUTY_CYCLE = 64;
    private static final long MAX_LAG_NS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long SNAPSHOT_ROTATION_NS = TimeUnit.SECONDS.toNanos(1);
    private static final int BURST_PERCENT = 5;
    private static final int OUTBOX_CAPACITY = 256 * 1024;
    /** Room kept free in the outbox for one more message: a snapshot of the deepest book is about 4 KiB. */
    private static final int OUTBOX_HEADROOM = 8 * 1024;
    private static final int STARTUP_INSTRUMENTS_PER_DUTY_CYCLE = 16;
    private static final long START_PRICE = 100_000_000_000L;

    private final ExclusivePublication publication;
    private final NanoClock clock;
    private final SyntheticMarket[] markets;
    private final SplittableRandom random;
    private final long intervalNs;
    private final int maxBurst;
    private final long snapshotIntervalNs;
    private final PartCounters counters = new PartCounters(
        "messages", "refreshes", "back-pressure", "schedule-resets", "not-connected");

    private final UnsafeBuffer outbox = new UnsafeBuffer(ByteBuffer.allocateDirect(OUTBOX_CAPACITY));
    private final int[] outboxOffsets = new int[256];
    private final int[] outboxLengths = new int[256];
    private int outboxHead;
    private int outboxTail;
    private int outboxLimit;

    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final IncrementalRefreshEncoder refreshEncoder = new IncrementalRefreshEncoder();
    private final TradeEncoder tradeEncoder = new TradeEncoder();
    private final BookSnapshotEncoder snapshotEncoder = new BookSnapshotEncoder();
    private final InstrumentDefinitionEncoder definitionEncoder = new InstrumentDefinitionEncoder();

    private volatile boolean publishing = true;
    private boolean started;
    private int startupInstrument;
    private long nextEventNs;
    private long nextSnapshotNs;
    private int nextSnapshotInstrument;
    private int burstRemaining;
    private long feedSequence;
    private long messages;
    private long refreshes;
    private long backPressure;
    private long notConnected;
    private long scheduleResets;

    /**
     * @param publication  market data goes out on.
     * @param clock        for pacing and publish times; must be {@link System#nanoTime()}-based to match the strategy.
     * @param instruments  in the market, ids 0 to instruments - 1.
     * @param depth        book levels per side.
     * @param ratePerSecond market-data messages per second (refreshes; trades and snapshots come on top).
     * @param maxBurst     longest burst of back-to-back refreshes (1 = evenly paced).
     * @param seed         of the random market.
     */
    public FeedHandler(
        final ExclusivePublication publication,
        final NanoClock clock,
        final int instruments,
        final int depth,
        final int ratePerSecond,
        final int maxBurst,
        final long seed)
    {
        this.publication = publication;
        this.clock = clock;
        this.random = new SplittableRandom(seed);
        this.markets = new SyntheticMarket[instruments];
        for (int id = 0; id < instruments; id++)
        {
            markets[id] = new SyntheticMarket(id, depth, START_PRICE + id * 1_000L * SyntheticMarket.TICK_SIZE,
                random.split());
        }
        this.intervalNs = Math.max(1, TimeUnit.SECONDS.toNanos(1) / ratePerSecond);
        this.maxBurst = maxBurst;
        this.snapshotIntervalNs = Math.max(1, SNAPSHOT_ROTATION_NS / instruments);
    }

    @Override
    public String roleName()
    {
        return "feed";
    }

    @Override
    public int doWork()
    {
        // In direct mode this thread is the media sender: connection set-up and flow control need the call.
        int work = publication.flush();
        work += drainOutbox();
        if (!isOutboxEmpty())
        {
            publishCounters();
            return work;
        }

        if (!started)
        {
            if (!publication.isConnected())
            {
                return work;
            }
            // Once someone listens: every instrument's definition and book, a few per duty cycle, then the stream.
            final int end = Math.min(markets.length, startupInstrument + STARTUP_INSTRUMENTS_PER_DUTY_CYCLE);
            for (; startupInstrument < end; startupInstrument++)
            {
                encodeDefinition(markets[startupInstrument]);
                encodeSnapshot(markets[startupInstrument]);
            }
            if (startupInstrument == markets.length)
            {
                started = true;
                final long now = clock.nanoTime();
                nextEventNs = now;
                nextSnapshotNs = now + snapshotIntervalNs;
            }
            work += drainOutbox();
            publishCounters();
            return work;
        }

        if (publishing)
        {
            final long now = clock.nanoTime();
            if (now - nextEventNs > MAX_LAG_NS)
            {
                nextEventNs = now;
                scheduleResets++;
            }
            int events = 0;
            while (events < MAX_EVENTS_PER_DUTY_CYCLE && (burstRemaining > 0 || now - nextEventNs >= 0))
            {
                if (burstRemaining == 0 && maxBurst > 1 && random.nextInt(100) < BURST_PERCENT)
                {
                    burstRemaining = 2 + random.nextInt(maxBurst - 1);
                }
                if (burstRemaining > 0)
                {
                    burstRemaining--;
                }
                // Time runs ahead during a burst, so the quiet gap after it keeps the average rate.
                nextEventNs += intervalNs;
                encodeEvent(markets[random.nextInt(markets.length)]);
                events++;
                if (outboxTail - outboxHead > outboxOffsets.length - 4 ||
                    outboxLimit > OUTBOX_CAPACITY - OUTBOX_HEADROOM)
                {
                    break;
                }
            }
            if (now - nextSnapshotNs >= 0)
            {
                nextSnapshotNs += snapshotIntervalNs;
                encodeSnapshot(markets[nextSnapshotInstrument]);
                nextSnapshotInstrument = (nextSnapshotInstrument + 1) % markets.length;
            }
            work += events + drainOutbox();
        }

        publishCounters();
        return work;
    }

    private int drainOutbox()
    {
        int sent = 0;
        while (outboxHead < outboxTail)
        {
            final int index = outboxHead & (outboxOffsets.length - 1);
            final int offset = outboxOffsets[index];
            final int length = outboxLengths[index];
            outbox.putLong(offset + SENDING_TIME_OFFSET, clock.nanoTime());
            final long result = publication.offer(outbox, offset, length);
            if (result > 0)
            {
                outboxHead++;
                sent++;
                messages++;
            }
            else if (result == Publication.CLOSED || result == Publication.MAX_POSITION_EXCEEDED)
            {
                throw new AgentTerminationException("market data publication can take no more: " + result);
            }
            else
            {
                if (Publication.NOT_CONNECTED == result)
                {
                    notConnected++;
                }
                else
                {
                    backPressure++;
                }
                break;
            }
        }
        if (outboxHead == outboxTail)
        {
            outboxHead = 0;
            outboxTail = 0;
            outboxLimit = 0;
        }
        return sent;
    }

    private boolean isOutboxEmpty()
    {
        return outboxHead == outboxTail;
    }

    private void encodeEvent(final SyntheticMarket market)
    {
        final int entries = market.nextEvent();
        final int offset = outboxLimit;
        refreshEncoder.wrapAndApplyHeader(outbox, offset, headerEncoder)
            .sendingTimeNanos(0)
            .feedSequence(++feedSequence);
        refreshEncoder.matchEventIndicator().clear().lastQuoteMsg(!market.traded()).endOfEvent(true);
        final IncrementalRefreshEncoder.EntriesEncoder group = refreshEncoder.entriesCount(entries);
        for (int i = 0; i < entries; i++)
        {
            group.next()
                .size(market.size(i))
                .rptSeq(market.rptSeq(i))
                .instrumentId(market.instrumentId())
                .priceLevel((short)market.level(i))
                .side(market.side(i) == PriceLevelBook.BID ? MDSide.BID : MDSide.OFFER)
                .updateAction(MDUpdateAction.get((short)market.action(i)))
                .price().mantissa(market.price(i));
        }
        enqueue(offset, MessageHeaderEncoder.ENCODED_LENGTH + refreshEncoder.encodedLength());
        refreshes++;

        if (market.traded())
        {
            final int tradeOffset = outboxLimit;
            tradeEncoder.wrapAndApplyHeader(outbox, tradeOffset, headerEncoder)
                .sendingTimeNanos(0)
                .tradeId(market.tradeId())
                .size(market.tradeSize())
                .rptSeq(market.book().lastRptSeq())
                .instrumentId(market.instrumentId())
                .aggressorSide(market.tradeSide() == PriceLevelBook.BID ? MDSide.BID : MDSide.OFFER)
                .price().mantissa(market.tradePrice());
            enqueue(tradeOffset, MessageHeaderEncoder.ENCODED_LENGTH + tradeEncoder.encodedLength());
        }
    }

    private void encodeSnapshot(final SyntheticMarket market)
    {
        final PriceLevelBook book = market.book();
        final int offset = outboxLimit;
        snapshotEncoder.wrapAndApplyHeader(outbox, offset, headerEncoder)
            .sendingTimeNanos(0)
            .lastRptSeq(book.lastRptSeq())
            .instrumentId(market.instrumentId());
        final int bids = book.levelCount(PriceLevelBook.BID);
        final int offers = book.levelCount(PriceLevelBook.OFFER);
        final BookSnapshotEncoder.LevelsEncoder levels = snapshotEncoder.levelsCount(bids + offers);
        for (int side = PriceLevelBook.BID; side <= PriceLevelBook.OFFER; side++)
        {
            for (int level = 1, count = book.levelCount(side); level <= count; level++)
            {
                levels.next()
                    .size(book.size(side, level))
                    .numberOfOrders(1)
                    .priceLevel((short)level)
                    .side(side == PriceLevelBook.BID ? MDSide.BID : MDSide.OFFER)
                    .price().mantissa(book.price(side, level));
            }
        }
        enqueue(offset, MessageHeaderEncoder.ENCODED_LENGTH + snapshotEncoder.encodedLength());
    }

    private void encodeDefinition(final SyntheticMarket market)
    {
        final int offset = outboxLimit;
        definitionEncoder.wrapAndApplyHeader(outbox, offset, headerEncoder)
            .sendingTimeNanos(0)
            .lotSize(1)
            .instrumentId(market.instrumentId())
            .symbol(symbol(market.instrumentId()))
            .currency("USD")
            .tickSize().mantissa(SyntheticMarket.TICK_SIZE);
        enqueue(offset, MessageHeaderEncoder.ENCODED_LENGTH + definitionEncoder.encodedLength());
    }

    /**
     * @param instrumentId of an instrument.
     * @return its synthetic symbol, such as VRB0007.
     */
    public static String symbol(final int instrumentId)
    {
        return String.format("VRB%04d", instrumentId);
    }

    private void enqueue(final int offset, final int length)
    {
        if (outboxTail - outboxHead >= outboxOffsets.length || offset + length > OUTBOX_CAPACITY)
        {
            throw new IllegalStateException("feed outbox overflow: " + (outboxTail - outboxHead) + " messages");
        }
        final int index = outboxTail & (outboxOffsets.length - 1);
        outboxOffsets[index] = offset;
        outboxLengths[index] = length;
        outboxTail++;
        // 32-byte steps keep each message where the codecs expect aligned longs; cheap at this size.
        outboxLimit = (offset + length + 31) & ~31;
    }

    private void publishCounters()
    {
        counters.publish(MESSAGES, messages);
        counters.publish(REFRESHES, refreshes);
        counters.publish(BACK_PRESSURE, backPressure);
        counters.publish(NOT_CONNECTED, notConnected);
        counters.publish(SCHEDULE_RESETS, scheduleResets);
    }

    /** Stop generating market changes (any message already encoded is still sent). Any thread. */
    public void stopPublishing()
    {
        publishing = false;
    }

    /** @return true once definitions and snapshots went out and the incremental stream began. */
    public boolean hasStarted()
    {
        return started;
    }

    /** @return the feed's counts (index constants above). */
    public PartCounters counters()
    {
        return counters;
    }

    /**
     * @param instrumentId of an instrument.
     * @return the market of that instrument (its book is the truth; read it only once the feed has stopped).
     */
    public SyntheticMarket market(final int instrumentId)
    {
        return markets[instrumentId];
    }

    /** @return instruments in the market. */
    public int instruments()
    {
        return markets.length;
    }
}
