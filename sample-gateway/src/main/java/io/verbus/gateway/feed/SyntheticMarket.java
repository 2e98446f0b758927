package io.verbus.gateway.feed;

import io.verbus.gateway.book.PriceLevelBook;

import java.util.SplittableRandom;

/**
 * A plausible price-level market for one instrument: a one-tick spread whose mid walks at random, and level sizes
 * that keep changing. Each {@link #nextEvent()} changes the market's own book and describes the change as the entries
 * of one incremental refresh, so a subscriber that applies them in order holds exactly this book.
 * <ul>
 * <li>a tick up: NEW bid at level 1 one tick above the old best bid (the deepest bid drops out), DELETE offer level
 * 1 (now crossed), NEW offer at the deepest level one tick beyond the old worst offer: 3 entries;</li>
 * <li>a tick down: the mirror image;</li>
 * <li>otherwise one or two size changes, biased towards the top of the book: CHANGE entries.</li>
 * </ul>
 * Owned by the feed's thread; allocates nothing per event.
 */
public final class SyntheticMarket
{
    /** Most entries one event produces. */
    public static final int MAX_ENTRIES_PER_EVENT = 3;
    /** Price of one tick: 0.01 as a Decimal64 mantissa (exponent -9). */
    public static final long TICK_SIZE = 10_000_000L;
    /** Largest size of a level, in lots. */
    public static final int MAX_LEVEL_SIZE = 100;

    private static final int PRICE_MOVE_PERCENT = 25;

    private final int instrumentId;
    private final PriceLevelBook book;
    private final SplittableRandom random;
    private final int depth;
    private long rptSeq;
    private long tradeId;

    private int entryCount;
    private final int[] sides = new int[MAX_ENTRIES_PER_EVENT];
    private final int[] actions = new int[MAX_ENTRIES_PER_EVENT];
    private final int[] levels = new int[MAX_ENTRIES_PER_EVENT];
    private final long[] prices = new long[MAX_ENTRIES_PER_EVENT];
    private final long[] sizes = new long[MAX_ENTRIES_PER_EVENT];
    private final long[] rptSeqs = new long[MAX_ENTRIES_PER_EVENT];
    private boolean traded;
    private int tradeSide;
    private long tradePrice;
    private long tradeSize;

    /**
     * @param instrumentId of the instrument.
     * @param depth        levels per side, at least 2.
     * @param startPrice   initial best bid as a mantissa; a multiple of {@link #TICK_SIZE}.
     * @param random       source of randomness (its own, or split from the feed's).
     */
    public SyntheticMarket(
        final int instrumentId, final int depth, final long startPrice, final SplittableRandom random)
    {
        if (depth < 2)
        {
            throw new IllegalArgumentException("depth " + depth + " must be at least 2");
        }
        if (startPrice <= (long)depth * TICK_SIZE || startPrice % TICK_SIZE != 0)
        {
            throw new IllegalArgumentException("startPrice " + startPrice + " must be a positive multiple of the " +
                "tick above the book's depth");
        }
        this.instrumentId = instrumentId;
        this.depth = depth;
        this.random = random;
        this.book = new PriceLevelBook(instrumentId, depth);
        for (int level = 1; level <= depth; level++)
        {
            book.apply(PriceLevelBook.BID, PriceLevelBook.NEW, level, startPrice - (level - 1) * TICK_SIZE, newSize());
            book.apply(PriceLevelBook.OFFER, PriceLevelBook.NEW, level, startPrice + level * TICK_SIZE, newSize());
        }
    }

    /**
     * Change the market once.
     *
     * @return how many entries describe the change (read them with the entry accessors).
     */
    public int nextEvent()
    {
        entryCount = 0;
        traded = false;
        if (random.nextInt(100) < PRICE_MOVE_PERCENT)
        {
            final boolean up = book.price(PriceLevelBook.BID, depth) <= 2 * TICK_SIZE || random.nextBoolean();
            moveOneTick(up ? PriceLevelBook.BID : PriceLevelBook.OFFER);
        }
        else
        {
            final int changes = 1 + random.nextInt(2);
            for (int i = 0; i < changes; i++)
            {
                final int side = random.nextInt(2);
                final int level = Math.min(1 + random.nextInt(depth), 1 + random.nextInt(depth));
                add(side, PriceLevelBook.CHANGE, level, book.price(side, level), newSize());
            }
        }
        return entryCount;
    }

    /**
     * The side {@code gaining} improves by one tick; the other side's best level is taken out by a trade.
     */
    private void moveOneTick(final int gaining)
    {
        final int losing = 1 - gaining;
        final long direction = gaining == PriceLevelBook.BID ? 1 : -1;
        final long newBest = book.price(gaining, 1) + direction * TICK_SIZE;
        final long takenPrice = book.price(losing, 1);
        final long takenSize = book.size(losing, 1);
        final long newWorst = book.price(losing, depth) + direction * TICK_SIZE;

        add(gaining, PriceLevelBook.NEW, 1, newBest, newSize());
        add(losing, PriceLevelBook.DELETE, 1, takenPrice, 0);
        add(losing, PriceLevelBook.NEW, depth, newWorst, newSize());

        traded = true;
        tradeSide = gaining;
        tradePrice = takenPrice;
        tradeSize = takenSize;
        tradeId++;
    }

    private void add(final int side, final int action, final int level, final long price, final long size)
    {
        if (!book.apply(side, action, level, price, size))
        {
            throw new IllegalStateException("synthetic market produced an entry its own book refuses: " + book);
        }
        final int i = entryCount++;
        sides[i] = side;
        actions[i] = action;
        levels[i] = level;
        prices[i] = price;
        sizes[i] = size;
        rptSeqs[i] = ++rptSeq;
        book.lastRptSeq(rptSeq);
    }

    private long newSize()
    {
        return 1 + random.nextInt(MAX_LEVEL_SIZE);
    }

    /** @return the instrument. */
    public int instrumentId()
    {
        return instrumentId;
    }

    /** @return the market's own book (the truth subscribers should converge to). */
    public PriceLevelBook book()
    {
        return book;
    }

    /** @return entries of the last event. */
    public int entryCount()
    {
        return entryCount;
    }

    /** @param i entry index. @return side of the entry. */
    public int side(final int i)
    {
        return sides[i];
    }

    /** @param i entry index. @return update action of the entry. */
    public int action(final int i)
    {
        return actions[i];
    }

    /** @param i entry index. @return 1-based level of the entry. */
    public int level(final int i)
    {
        return levels[i];
    }

    /** @param i entry index. @return price mantissa of the entry. */
    public long price(final int i)
    {
        return prices[i];
    }

    /** @param i entry index. @return size of the entry. */
    public long size(final int i)
    {
        return sizes[i];
    }

    /** @param i entry index. @return rptSeq of the entry. */
    public long rptSeq(final int i)
    {
        return rptSeqs[i];
    }

    /** @return true when the last event was a price move, which prints a trade. */
    public boolean traded()
    {
        return traded;
    }

    /** @return aggressor side of the last trade. */
    public int tradeSide()
    {
        return tradeSide;
    }

    /** @return price of the last trade. */
    public long tradePrice()
    {
        return tradePrice;
    }

    /** @return size of the last trade. */
    public long tradeSize()
    {
        return tradeSize;
    }

    /** @return id of the last trade. */
    public long tradeId()
    {
        return tradeId;
    }
}
