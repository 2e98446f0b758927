package io.verbus.samples;

import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import org.agrona.DirectBuffer;

/**
 * One subscriber's view of the market: the latest quote per instrument, how many quotes arrived, the gaps in the
 * publisher's sequence since the first quote seen (a late joiner starts wherever it joined), and the one-way
 * latency of the quotes (the publisher's {@code System.nanoTime()} against ours: meaningful on one host only).
 * Arrays sized once; the handler allocates nothing.
 */
public final class TopOfBook implements FragmentHandler
{
    private final long[] bidPrices;
    private final long[] askPrices;
    private final int[] bidQuantities;
    private final int[] askQuantities;
    private long quotes;
    private long gaps;
    private long nextSequence = -1;
    private long intervalLatencyNs;
    private long intervalMaxLatencyNs;
    private long intervalQuotes;

    /**
     * @param instruments quoted, ids 0 to instruments - 1.
     */
    public TopOfBook(final int instruments)
    {
        bidPrices = new long[instruments];
        askPrices = new long[instruments];
        bidQuantities = new int[instruments];
        askQuantities = new int[instruments];
    }

    public void onFragment(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final long latencyNs = System.nanoTime() - Quote.timestampNs(buffer, offset);
        final long sequence = Quote.sequence(buffer, offset);
        if (nextSequence >= 0 && sequence != nextSequence)
        {
            gaps++;
        }
        nextSequence = sequence + 1;

        final int instrument = Quote.instrumentId(buffer, offset);
        if (instrument >= 0 && instrument < bidPrices.length)
        {
            bidPrices[instrument] = Quote.bidPrice(buffer, offset);
            bidQuantities[instrument] = Quote.bidQuantity(buffer, offset);
            askPrices[instrument] = Quote.askPrice(buffer, offset);
            askQuantities[instrument] = Quote.askQuantity(buffer, offset);
        }
        quotes++;
        intervalQuotes++;
        intervalLatencyNs += latencyNs;
        intervalMaxLatencyNs = Math.max(intervalMaxLatencyNs, latencyNs);
    }

    /** @return quotes received. */
    public long quotes()
    {
        return quotes;
    }

    /** @return breaks in the publisher's sequence since the first quote received. */
    public long gaps()
    {
        return gaps;
    }

    /** @return the sequence number expected next, or -1 before the first quote. */
    public long nextSequence()
    {
        return nextSequence;
    }

    /**
     * @param name of this subscriber.
     * @return one line on the interval since the last call (rate, latency) and the book of instrument 0; resets the
     * interval.
     */
    public String intervalReport(final String name)
    {
        final String line = String.format("%s: %,d quotes (total %,d, gaps %d), one-way latency mean %.1f us max " +
            "%.1f us; instrument 0 %d x %.4f / %.4f x %d", name, intervalQuotes, quotes, gaps,
            intervalQuotes > 0 ? intervalLatencyNs / 1000.0 / intervalQuotes : 0.0, intervalMaxLatencyNs / 1000.0,
            bidQuantities[0], bidPrices[0] / 10_000.0, askPrices[0] / 10_000.0, askQuantities[0]);
        intervalQuotes = 0;
        intervalLatencyNs = 0;
        intervalMaxLatencyNs = 0;
        return line;
    }
}
