package io.verbus.samples;

import io.verbus.Publication;
import io.verbus.Verbus;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.LockSupport;

/**
 * Publishes {@link SampleConfiguration#NUMBER_OF_MESSAGES} top-of-book {@link Quote}s for
 * {@link SampleConfiguration#INSTRUMENTS} instruments at {@link SampleConfiguration#QUOTES_PER_SECOND} on one
 * publication. Every subscriber gets every quote: over {@code rdma:} each subscriber process has its own connection,
 * ring and WRITEs (the fan-out is the sender's), and flow control waits for the slowest. Start as many
 * {@link MarketDataSubscriber} processes as you like, before or after it.
 * <pre>
 * ./verbus sample market-data-subscriber           # as many shells as subscribers
 * ./verbus sample market-data-publisher --messages 1000000 --rate 200000
 * </pre>
 */
public final class MarketDataPublisher
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final String CHANNEL = SampleConfiguration.CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final long NUMBER_OF_MESSAGES = SampleConfiguration.NUMBER_OF_MESSAGES;
    private static final int INSTRUMENTS = SampleConfiguration.INSTRUMENTS;
    private static final long QUOTES_PER_SECOND = SampleConfiguration.QUOTES_PER_SECOND;
    private static final long LINGER_TIMEOUT_MS = SampleConfiguration.LINGER_TIMEOUT_MS;
    private static final boolean EXCLUSIVE_PUBLICATIONS = SampleConfiguration.EXCLUSIVE_PUBLICATIONS;

    private MarketDataPublisher()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     * @throws InterruptedException if interrupted while waiting or lingering.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        System.out.printf("Publishing %,d quotes for %d instruments at %s to %s on stream %d%n", NUMBER_OF_MESSAGES,
            INSTRUMENTS, QUOTES_PER_SECOND > 0 ? String.format("%,d/s", QUOTES_PER_SECOND) : "full speed", CHANNEL,
            STREAM_ID);

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ?
            Verbus.launch(SampleConfiguration.context()) : Verbus.connect(SampleConfiguration.context());
            Publication publication = EXCLUSIVE_PUBLICATIONS ?
                verbus.addExclusivePublication(CHANNEL, STREAM_ID) : verbus.addPublication(CHANNEL, STREAM_ID);
            RateReporter reporter = new RateReporter("quotes sent", TimeUnit.SECONDS.toNanos(1)))
        {
            System.out.println("Waiting for a subscriber...");
            while (!publication.isConnected() && running.get())
            {
                Thread.sleep(1);
            }

            final long sent = publishQuotes(publication, reporter, NUMBER_OF_MESSAGES, running);
            System.out.printf("Done: %,d quotes sent%n", sent);

            if (LINGER_TIMEOUT_MS > 0 && running.get())
            {
                System.out.println("Lingering " + LINGER_TIMEOUT_MS + " ms");
                Thread.sleep(LINGER_TIMEOUT_MS);
            }
        }
    }

    /**
     * Sends {@code count} quotes, paced to {@link SampleConfiguration#QUOTES_PER_SECOND}, prices on a random walk
     * around 100.0000. Allocates nothing per quote.
     *
     * @return how many were sent before the count was reached or {@code running} cleared.
     */
    static long publishQuotes(
        final Publication publication, final RateReporter reporter, final long count, final AtomicBoolean running)
    {
        final UnsafeBuffer buffer =
            new UnsafeBuffer(BufferUtil.allocateDirectAligned(Quote.LENGTH, BitUtil.CACHE_LINE_LENGTH));
        final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();
        final long[] midPrices = new long[INSTRUMENTS];
        java.util.Arrays.fill(midPrices, 1_000_000L);
        long random = 0x9E3779B97F4A7C15L;
        final long startNs = System.nanoTime();

        long sequence = 0;
        for (; sequence < count && running.get(); sequence++)
        {
            if (QUOTES_PER_SECOND > 0)
            {
                final long dueNs = startNs + (long)(sequence * (1_000_000_000.0 / QUOTES_PER_SECOND));
                long aheadNs;
                while ((aheadNs = dueNs - System.nanoTime()) > 0)
                {
                    if (aheadNs > 100_000)
                    {
                        LockSupport.parkNanos(aheadNs - 50_000);
                    }
                    else
                    {
                        Thread.onSpinWait();
                    }
                }
            }

            random ^= random << 13;
            random ^= random >>> 7;
            random ^= random << 17;
            final int instrument = (int)(sequence % INSTRUMENTS);
            final long mid = Math.max(1_000, midPrices[instrument] + (random % 3) * 100);
            midPrices[instrument] = mid;
            final int quantity = 100 * (1 + (int)((random >>> 40) & 15));
            Quote.encode(buffer, 0, sequence, System.nanoTime(), instrument, mid - 50, quantity, mid + 50, quantity);

            idleStrategy.reset();
            long result;
            while ((result = publication.offer(buffer, 0, Quote.LENGTH)) < 0)
            {
                if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result || !running.get())
                {
                    return sequence;
                }
                idleStrategy.idle();
            }
            reporter.onMessage(Quote.LENGTH);
        }
        return sequence;
    }
}
