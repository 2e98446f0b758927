package io.verbus.gateway;

import io.verbus.gateway.feed.FeedHandler;
import io.verbus.gateway.orders.OrderGateway;
import io.verbus.gateway.strategy.Strategy;
import org.HdrHistogram.Recorder;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The three parts wired back to back through loopback streams and stepped on the test thread: a deterministic
 * end-to-end check of the parts' logic, and of their allocation-free hot path.
 */
class PartsPipelineTest
{
    private static final int INSTRUMENTS = 4;
    private static final int DEPTH = 6;

    private final long[] now = { 1_000_000_000L };
    private final LoopbackAccess.Channel marketData = LoopbackAccess.channel(1024);
    private final LoopbackAccess.Channel orders = LoopbackAccess.channel(256);
    private final LoopbackAccess.Channel reports = LoopbackAccess.channel(256);
    private final Recorder recorder = new Recorder(60_000_000_000L, 3);
    private final FeedHandler feed = new FeedHandler(marketData.publication(), () -> now[0], INSTRUMENTS, DEPTH,
        1_000_000, 8, 99);
    private final Strategy strategy = new Strategy(marketData.subscription(), orders.publication(),
        reports.subscription(), () -> now[0], recorder, INSTRUMENTS, DEPTH, 75, 50);
    private final OrderGateway gateway = new OrderGateway(orders.subscription(), reports.publication(),
        () -> now[0], INSTRUMENTS, 50, 200, 60, 5);

    private void cycle()
    {
        now[0] += 20_000; // 20 us per duty cycle at 1M msgs/s: about 20 events
        feed.doWork();
        strategy.doWork();
        gateway.doWork();
    }

    @Test
    void shouldKeepEveryBookIdenticalToTheFeedsAndAnswerEveryRequestOnce()
    {
        for (int i = 0; i < 3_000; i++)
        {
            cycle();
        }
        feed.stopPublishing();
        strategy.stopTrading();
        for (int i = 0; i < 100; i++)
        {
            cycle();
        }

        final PartCounters s = strategy.counters();
        assertTrue(feed.counters().get(FeedHandler.REFRESHES) > 30_000, "refreshes: " +
            feed.counters().get(FeedHandler.REFRESHES));
        assertTrue(s.get(Strategy.ORDERS_SENT) > 100, "orders: " + s.get(Strategy.ORDERS_SENT));
        assertEquals(0, s.get(Strategy.BOOK_FAULTS));
        assertEquals(0, s.get(Strategy.SNAPSHOT_MISMATCHES));
        assertEquals(0, s.get(Strategy.MALFORMED));
        assertEquals(0, s.get(Strategy.UNEXPECTED_ANSWERS));
        assertEquals(0, s.get(Strategy.IN_FLIGHT));
        assertEquals(s.get(Strategy.ORDERS_SENT) + s.get(Strategy.CANCELS_SENT), s.get(Strategy.ANSWERS));
        assertEquals(s.get(Strategy.ANSWERS), gateway.counters().get(OrderGateway.ANSWERED));
        assertEquals(s.get(Strategy.ORDERS_SENT), recorder.getIntervalHistogram().getTotalCount());
        assertTrue(s.get(Strategy.FILLS) > 0 && s.get(Strategy.ACKS) > 0, "fills and acks both happen");
        for (int id = 0; id < INSTRUMENTS; id++)
        {
            assertTrue(strategy.isBookValid(id));
            assertTrue(strategy.book(id).sameLevelsAs(feed.market(id).book()),
                "instrument " + id + ": " + strategy.book(id) + " vs " + feed.market(id).book());
            assertEquals(feed.market(id).book().lastRptSeq(), strategy.book(id).lastRptSeq());
        }
    }

    @Test
    void shouldCountFeedOffersRefusedWhileNoSubscriberIsConnectedApartFromBackPressure()
    {
        for (int i = 0; i < 10; i++)
        {
            cycle();
        }
        final long published = feed.counters().get(FeedHandler.MESSAGES);
        assertTrue(published > 0, "the feed started");

        marketData.connected(false); // the subscriber went away: what the demo's feed sees once the strategy stops
        for (int i = 0; i < 5; i++)
        {
            cycle();
        }
        assertEquals(published, feed.counters().get(FeedHandler.MESSAGES));
        assertEquals(5, feed.counters().get(FeedHandler.NOT_CONNECTED), "one refused offer per duty cycle");
        assertEquals(0, feed.counters().get(FeedHandler.BACK_PRESSURE));

        marketData.connected(true);
        marketData.refuseNextOffers(3);
        for (int i = 0; i < 5; i++)
        {
            cycle();
        }
        assertEquals(3, feed.counters().get(FeedHandler.BACK_PRESSURE));
        assertEquals(5, feed.counters().get(FeedHandler.NOT_CONNECTED));
        assertTrue(feed.counters().get(FeedHandler.MESSAGES) > published, "the feed publishes again once it can");
    }

    @Test
    void shouldAllocateNothingOnTheHotPathOnceWarm()
    {
        for (int i = 0; i < 20_000; i++)
        {
            cycle();
        }
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final long threadId = Thread.currentThread().threadId();

        // An allocation per message, order or answer would show in every window. A window may still catch a one-off
        // from the JIT (a deoptimisation re-materialises objects it had scalar-replaced, once), so the hot path is
        // proven by a window that allocated nothing at all while thousands of messages went through.
        final long[] windows = new long[8];
        int cleanWindow = -1;
        for (int w = 0; w < windows.length && cleanWindow < 0; w++)
        {
            final long ordersBefore = strategy.counters().get(Strategy.ORDERS_SENT);
            final long before = threads.getThreadAllocatedBytes(threadId);
            for (int i = 0; i < 2_000; i++)
            {
                cycle();
            }
            windows[w] = threads.getThreadAllocatedBytes(threadId) - before;
            assertTrue(strategy.counters().get(Strategy.ORDERS_SENT) - ordersBefore > 20, "orders flow in the window");
            if (windows[w] == 0)
            {
                cleanWindow = w;
            }
        }
        assertTrue(cleanWindow >= 0, "bytes allocated per window of 2,000 duty cycles (~40,000 messages): " +
            java.util.Arrays.toString(windows));
    }
}
