package io.verbus.bench;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;

/**
 * Which of a contender's rounds a run with {@code --rounds N} reports for one part and size: the median one, whole
 * (every percentile of a latency row, or the rate of a throughput row, comes from that one round, not a percentile
 * of one round beside another's). A round that did not run or failed is reported instead, so no failure hides
 * behind two good rounds.
 */
final class MedianRound
{
    private MedianRound()
    {
    }

    /**
     * @param rounds one result per round, of one contender, part and size; not empty.
     * @return the round to report: the first that is not OK, else the median by p50 (latency) or by rate
     * (throughput), the lower middle one of an even count.
     */
    static BenchResult pick(final List<BenchResult> rounds)
    {
        for (final BenchResult round : rounds)
        {
            if (!round.ok())
            {
                return round;
            }
        }
        final List<BenchResult> sorted = new ArrayList<>(rounds);
        sorted.sort(Comparator.comparingDouble(MedianRound::measure));
        return sorted.get((sorted.size() - 1) / 2);
    }

    /**
     * @param rounds one result per round, as for {@link #pick}.
     * @return each round's p50 (latency, microseconds) or rate (throughput, messages/s) in round order, for the log.
     */
    static String spread(final List<BenchResult> rounds)
    {
        final StringBuilder text = new StringBuilder();
        for (final BenchResult round : rounds)
        {
            if (!text.isEmpty())
            {
                text.append(" / ");
            }
            if (!round.ok())
            {
                text.append(round.status().label());
            }
            else if (round.hasHistogram())
            {
                text.append(ResultTable.micros(round.valueAtPercentileNs(50)));
            }
            else
            {
                text.append(String.format(Locale.ROOT, "%,.0f", round.messagesPerSecond()));
            }
        }
        return text.toString();
    }

    private static double measure(final BenchResult result)
    {
        return result.hasHistogram() ? result.valueAtPercentileNs(50) : result.messagesPerSecond();
    }
}
