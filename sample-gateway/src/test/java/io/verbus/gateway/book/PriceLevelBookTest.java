package io.verbus.gateway.book;

import org.junit.jupiter.api.Test;

import static io.verbus.gateway.book.PriceLevelBook.BID;
import static io.verbus.gateway.book.PriceLevelBook.CHANGE;
import static io.verbus.gateway.book.PriceLevelBook.DELETE;
import static io.verbus.gateway.book.PriceLevelBook.DELETE_FROM;
import static io.verbus.gateway.book.PriceLevelBook.DELETE_THRU;
import static io.verbus.gateway.book.PriceLevelBook.NEW;
import static io.verbus.gateway.book.PriceLevelBook.OFFER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PriceLevelBookTest
{
    private final PriceLevelBook book = new PriceLevelBook(7, 3);

    private static void assertLevels(final PriceLevelBook book, final int side, final long... priceSizePairs)
    {
        assertEquals(priceSizePairs.length / 2, book.levelCount(side), book.toString());
        for (int i = 0; i < priceSizePairs.length / 2; i++)
        {
            assertEquals(priceSizePairs[2 * i], book.price(side, i + 1), "price of level " + (i + 1) + " " + book);
            assertEquals(priceSizePairs[2 * i + 1], book.size(side, i + 1), "size of level " + (i + 1) + " " + book);
        }
    }

    @Test
    void shouldInsertAtALevelShiftingDeeperLevelsDown()
    {
        assertTrue(book.apply(BID, NEW, 1, 100, 5));
        assertTrue(book.apply(BID, NEW, 2, 98, 7));
        assertTrue(book.apply(BID, NEW, 2, 99, 3));
        assertLevels(book, BID, 100, 5, 99, 3, 98, 7);
        assertLevels(book, OFFER);
    }

    @Test
    void shouldDropTheDeepestLevelWhenANewLevelOverfillsTheDepth()
    {
        book.apply(OFFER, NEW, 1, 101, 1);
        book.apply(OFFER, NEW, 2, 102, 2);
        book.apply(OFFER, NEW, 3, 103, 3);
        assertTrue(book.apply(OFFER, NEW, 1, 100, 9));
        assertLevels(book, OFFER, 100, 9, 101, 1, 102, 2);
        assertFalse(book.apply(OFFER, NEW, 4, 104, 4), "beyond the depth");
    }

    @Test
    void shouldChangeAndDeleteLevels()
    {
        book.apply(BID, NEW, 1, 100, 5);
        book.apply(BID, NEW, 2, 99, 6);
        book.apply(BID, NEW, 3, 98, 7);
        assertTrue(book.apply(BID, CHANGE, 2, 99, 60));
        assertTrue(book.apply(BID, DELETE, 1, 0, 0));
        assertLevels(book, BID, 99, 60, 98, 7);
    }

    @Test
    void shouldDeleteFromTheTopThroughALevelAndDeleteThruTheWholeSide()
    {
        book.apply(BID, NEW, 1, 100, 5);
        book.apply(BID, NEW, 2, 99, 6);
        book.apply(BID, NEW, 3, 98, 7);
        book.apply(OFFER, NEW, 1, 101, 1);
        assertTrue(book.apply(BID, DELETE_FROM, 2, 0, 0));
        assertLevels(book, BID, 98, 7);
        assertTrue(book.apply(OFFER, DELETE_THRU, 0, 0, 0));
        assertLevels(book, OFFER);
        assertLevels(book, BID, 98, 7);
    }

    @Test
    void shouldRefuseEntriesThatDoNotFitAndLeaveTheBookUnchanged()
    {
        book.apply(BID, NEW, 1, 100, 5);
        assertFalse(book.apply(BID, NEW, 3, 98, 1), "a gap in levels");
        assertFalse(book.apply(BID, CHANGE, 2, 99, 1), "no such level");
        assertFalse(book.apply(OFFER, DELETE, 1, 0, 0), "empty side");
        assertFalse(book.apply(2, NEW, 1, 1, 1), "no such side");
        assertFalse(book.apply(BID, 9, 1, 1, 1), "no such action");
        assertFalse(book.apply(BID, NEW, 0, 1, 1), "levels start at 1");
        assertLevels(book, BID, 100, 5);
    }

    @Test
    void shouldDetectACrossedBookAndCompareLevels()
    {
        book.apply(BID, NEW, 1, 100, 5);
        book.apply(OFFER, NEW, 1, 101, 5);
        assertFalse(book.isCrossed());
        final PriceLevelBook copy = new PriceLevelBook(7, 3);
        copy.copyFrom(book);
        assertTrue(copy.sameLevelsAs(book));
        book.apply(BID, NEW, 1, 101, 1);
        assertTrue(book.isCrossed());
        assertFalse(copy.sameLevelsAs(book));
        assertThrows(IndexOutOfBoundsException.class, () -> book.price(OFFER, 2));
    }
}
