package io.verbus.bench;

import org.HdrHistogram.Histogram;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;

class MedianRoundTest
{
    @Test
    void shouldReportTheRoundWithTheMedianP50Whole()
    {
        final BenchResult fast = latency(1_000, 90_000);
        final BenchResult middle = latency(2_000, 5_000);
        final BenchResult slow = latency(3_000, 4_000);

        final BenchResult picked = MedianRound.pick(List.of(slow, fast, middle));

        assertSame(middle, picked);
        assertEquals(5_000, picked.valueAtPercentileNs(99.9), 50, "its tail is its own, not another round's");
    }

    @Test
    void shouldReportTheLowerMiddleOfAnEvenCount()
    {
        final BenchResult a = latency(1_000, 1_000);
        final BenchResult b = latency(2_000, 2_000);
        final BenchResult c = latency(3_000, 3_000);
        final BenchResult d = latency(4_000, 4_000);

        assertSame(b, MedianRound.pick(List.of(d, c, b, a)));
    }

    @Test
    void shouldReportTheMedianRateOfThroughputRounds()
    {
        final BenchResult low = throughput(1_000_000);
        final BenchResult mid = throughput(2_000_000);
        final BenchResult high = throughput(9_000_000);

        assertSame(mid, MedianRound.pick(List.of(high, low, mid)));
        assertEquals("9,000,000 / 1,000,000 / 2,000,000", MedianRound.spread(List.of(high, low, mid)));
    }

    @Test
    void shouldNotHideAFailedRoundBehindGoodOnes()
    {
        final BenchResult failed = BenchResult.failed(BenchResult.LATENCY, "c", "p", 32, "stalled");

        assertSame(failed, MedianRound.pick(List.of(latency(1_000, 1_000), failed, latency(2_000, 2_000))));
        assertEquals("1.00 / failed / 2.00",
            MedianRound.spread(List.of(latency(1_000, 1_000), failed, latency(2_000, 2_000))));
    }

    /** A round whose round trips all take {@code p50Ns} but for one in a thousand, which takes {@code tailNs}. */
    private static BenchResult latency(final long p50Ns, final long tailNs)
    {
        final Histogram histogram = new Histogram(TimeUnit.SECONDS.toNanos(1), 3);
        histogram.recordValueWithCount(p50Ns, 998);
        histogram.recordValueWithCount(tailNs, 2);
        return new BenchResult(BenchResult.LATENCY, "c", "p", 32, BenchResult.Status.OK, null, histogram,
            histogram.getTotalCount(), TimeUnit.SECONDS.toNanos(1), -1);
    }

    private static BenchResult throughput(final long messagesPerSecond)
    {
        return new BenchResult(BenchResult.THROUGHPUT, "c", "p", 32, BenchResult.Status.OK, null, null,
            messagesPerSecond, TimeUnit.SECONDS.toNanos(1), -1);
    }
}
