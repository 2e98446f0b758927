package io.verbus.gateway.feed;

import io.verbus.gateway.book.PriceLevelBook;
import org.junit.jupiter.api.Test;

import java.util.SplittableRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SyntheticMarketTest
{
    @Test
    void shouldDescribeEveryChangeSoThatASubscriberBookStaysIdenticalAndUncrossed()
    {
        final int depth = 5;
        final SyntheticMarket market = new SyntheticMarket(3, depth, 100_000_000_000L, new SplittableRandom(42));
        final PriceLevelBook subscriber = new PriceLevelBook(3, depth);
        subscriber.copyFrom(market.book());
        int moves = 0;

        for (int event = 0; event < 20_000; event++)
        {
            final int entries = market.nextEvent();
            assertTrue(entries >= 1 && entries <= SyntheticMarket.MAX_ENTRIES_PER_EVENT);
            for (int i = 0; i < entries; i++)
            {
                assertEquals(subscriber.lastRptSeq() + 1, market.rptSeq(i), "rptSeq has no gaps");
                assertTrue(subscriber.apply(market.side(i), market.action(i), market.level(i), market.price(i),
                    market.size(i)), "entry " + i + " of event " + event);
                subscriber.lastRptSeq(market.rptSeq(i));
            }
            moves += market.traded() ? 1 : 0;
            assertTrue(subscriber.sameLevelsAs(market.book()), "after event " + event);
            assertFalse(subscriber.isCrossed(), "after event " + event + ": " + subscriber);
            assertEquals(depth, subscriber.levelCount(PriceLevelBook.BID));
            assertEquals(depth, subscriber.levelCount(PriceLevelBook.OFFER));
            assertEquals(SyntheticMarket.TICK_SIZE,
                subscriber.price(PriceLevelBook.OFFER, 1) - subscriber.price(PriceLevelBook.BID, 1), "one-tick spread");
        }
        assertTrue(moves > 3_000 && moves < 7_000, "about a quarter of events move the price: " + moves);
    }
}
