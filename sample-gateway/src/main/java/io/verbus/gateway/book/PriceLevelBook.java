package io.verbus.gateway.book;

import java.util.Arrays;

/**
 * A price-level (market-by-price) book of one instrument, as an exchange's incremental feed describes it: each side is
 * a list of levels numbered from 1 at the top, changed by NEW (insert at a level, shifting deeper levels down and
 * dropping the one pushed beyond the depth), CHANGE (new size and price at a level), DELETE (remove a level, shifting
 * deeper ones up), DELETE_THRU (empty the side) and DELETE_FROM (remove the top {@code level} levels).
 * <p>
 * Prices are Decimal64 mantissas (exponent -9), sizes are lots. Arrays are allocated once; applying an update
 * allocates nothing. Not thread-safe: owned by the agent that applies the feed.
 */
public final class PriceLevelBook
{
    /** Side index of bids; equals the wire value of {@code MDSide.BID}. */
    public static final int BID = 0;
    /** Side index of offers; equals the wire value of {@code MDSide.OFFER}. */
    public static final int OFFER = 1;

    /** Update action codes; equal the wire values of {@code MDUpdateAction}. */
    public static final int NEW = 0;
    /** See {@link #NEW}. */
    public static final int CHANGE = 1;
    /** See {@link #NEW}. */
    public static final int DELETE = 2;
    /** See {@link #NEW}. */
    public static final int DELETE_THRU = 3;
    /** See {@link #NEW}. */
    public static final int DELETE_FROM = 4;

    /** Largest depth a book may have. */
    public static final int MAX_DEPTH = 64;

    private final int instrumentId;
    private final int depth;
    private final long[][] prices = new long[2][];
    private final long[][] sizes = new long[2][];
    private final int[] counts = new int[2];
    private long lastRptSeq;

    /**
     * @param instrumentId the book is for.
     * @param depth        levels kept per side, 1 to {@link #MAX_DEPTH}.
     */
    public PriceLevelBook(final int instrumentId, final int depth)
    {
        if (depth < 1 || depth > MAX_DEPTH)
        {
            throw new IllegalArgumentException("depth " + depth + " must be 1 to " + MAX_DEPTH);
        }
        this.instrumentId = instrumentId;
        this.depth = depth;
        for (int side = BID; side <= OFFER; side++)
        {
            prices[side] = new long[depth];
            sizes[side] = new long[depth];
        }
    }

    /**
     * Apply one entry of an incremental refresh.
     *
     * @param side   {@link #BID} or {@link #OFFER}.
     * @param action {@link #NEW}, {@link #CHANGE}, {@link #DELETE}, {@link #DELETE_THRU} or {@link #DELETE_FROM}.
     * @param level  1-based level the action names (ignored by DELETE_THRU).
     * @param price  mantissa of the level's price (NEW and CHANGE).
     * @param size   of the level in lots (NEW and CHANGE).
     * @return true when applied; false when the entry does not fit this book (unknown side or action, a level beyond
     * the levels that exist): the book is then unchanged and no longer trustworthy.
     */
    public boolean apply(final int side, final int action, final int level, final long price, final long size)
    {
        if (side != BID && side != OFFER)
        {
            return false;
        }
        final long[] sidePrices = prices[side];
        final long[] sideSizes = sizes[side];
        final int count = counts[side];

        switch (action)
        {
            case NEW ->
            {
                if (level < 1 || level > count + 1 || level > depth)
                {
                    return false;
                }
                final int index = level - 1;
                final int moved = Math.min(count, depth - 1) - index;
                if (moved > 0)
                {
                    System.arraycopy(sidePrices, index, sidePrices, index + 1, moved);
                    System.arraycopy(sideSizes, index, sideSizes, index + 1, moved);
                }
                sidePrices[index] = price;
                sideSizes[index] = size;
                counts[side] = Math.min(count + 1, depth);
            }
            case CHANGE ->
            {
                if (level < 1 || level > count)
                {
                    return false;
                }
                sidePrices[level - 1] = price;
                sideSizes[level - 1] = size;
            }
            case DELETE ->
            {
                if (level < 1 || level > count)
                {
                    return false;
                }
                removeTop(side, level - 1, 1);
            }
            case DELETE_THRU -> counts[side] = 0;
            case DELETE_FROM ->
            {
                if (level < 1 || level > count)
                {
                    return false;
                }
                removeTop(side, 0, level);
            }
            default ->
            {
                return false;
            }
        }
        return true;
    }

    private void removeTop(final int side, final int fromIndex, final int levels)
    {
        final int count = counts[side];
        final int moved = count - fromIndex - levels;
        if (moved > 0)
        {
            System.arraycopy(prices[side], fromIndex + levels, prices[side], fromIndex, moved);
            System.arraycopy(sizes[side], fromIndex + levels, sizes[side], fromIndex, moved);
        }
        counts[side] = count - levels;
    }

    /** Empty both sides and forget the sequence, as before a snapshot. */
    public void clear()
    {
        counts[BID] = 0;
        counts[OFFER] = 0;
        lastRptSeq = 0;
    }

    /**
     * Replace this book with another's levels (used by the synthetic feed to describe its book in a snapshot and by
     * tests to compare books).
     *
     * @param other book to copy; must have the same depth.
     */
    public void copyFrom(final PriceLevelBook other)
    {
        if (other.depth != depth)
        {
            throw new IllegalArgumentException("depth " + other.depth + " differs from " + depth);
        }
        for (int side = BID; side <= OFFER; side++)
        {
            System.arraycopy(other.prices[side], 0, prices[side], 0, depth);
            System.arraycopy(other.sizes[side], 0, sizes[side], 0, depth);
            counts[side] = other.counts[side];
        }
        lastRptSeq = other.lastRptSeq;
    }

    /** @return the instrument this book is for. */
    public int instrumentId()
    {
        return instrumentId;
    }

    /** @return levels kept per side. */
    public int depth()
    {
        return depth;
    }

    /**
     * @param side {@link #BID} or {@link #OFFER}.
     * @return levels present on that side.
     */
    public int levelCount(final int side)
    {
        return counts[side];
    }

    /**
     * @param side  {@link #BID} or {@link #OFFER}.
     * @param level 1-based, at most {@link #levelCount(int)}.
     * @return price mantissa of that level.
     */
    public long price(final int side, final int level)
    {
        checkLevel(side, level);
        return prices[side][level - 1];
    }

    /**
     * @param side  {@link #BID} or {@link #OFFER}.
     * @param level 1-based, at most {@link #levelCount(int)}.
     * @return size of that level.
     */
    public long size(final int side, final int level)
    {
        checkLevel(side, level);
        return sizes[side][level - 1];
    }

    private void checkLevel(final int side, final int level)
    {
        if (level < 1 || level > counts[side])
        {
            throw new IndexOutOfBoundsException("level " + level + " of side " + side + " with " + counts[side]);
        }
    }

    /** @return true when both sides have a top level and the best bid is at or above the best offer. */
    public boolean isCrossed()
    {
        return counts[BID] > 0 && counts[OFFER] > 0 && prices[BID][0] >= prices[OFFER][0];
    }

    /** @return the rptSeq of the last entry applied (or of the snapshot the book was rebuilt from). */
    public long lastRptSeq()
    {
        return lastRptSeq;
    }

    /** @param rptSeq of the last entry applied. */
    public void lastRptSeq(final long rptSeq)
    {
        this.lastRptSeq = rptSeq;
    }

    /**
     * @param other book.
     * @return true when both have the same levels on both sides (sequence not compared).
     */
    public boolean sameLevelsAs(final PriceLevelBook other)
    {
        for (int side = BID; side <= OFFER; side++)
        {
            final int count = counts[side];
            if (count != other.counts[side] ||
                !Arrays.equals(prices[side], 0, count, other.prices[side], 0, count) ||
                !Arrays.equals(sizes[side], 0, count, other.sizes[side], 0, count))
            {
                return false;
            }
        }
        return true;
    }

    @Override
    public String toString()
    {
        final StringBuilder out = new StringBuilder("book[").append(instrumentId).append(" seq=").append(lastRptSeq);
        for (int side = BID; side <= OFFER; side++)
        {
            out.append(side == BID ? " bids=" : " offers=");
            for (int i = 0; i < counts[side]; i++)
            {
                out.append(i == 0 ? "" : ",").append(sizes[side][i]).append('@').append(prices[side][i]);
            }
        }
        return out.append(']').toString();
    }
}
