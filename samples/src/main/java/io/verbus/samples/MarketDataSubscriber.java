package io.verbus.samples;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Keeps a top of book per instrument from {@link MarketDataPublisher}'s quotes and prints, every second, the rate,
 * the gaps in the publisher's sequence and the one-way latency, until Ctrl-C. Run several for a fan-out.
 */
public final class MarketDataSubscriber
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final String CHANNEL = SampleConfiguration.CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;
    private static final int INSTRUMENTS = SampleConfiguration.INSTRUMENTS;
    private static final long REPORT_INTERVAL_NS = TimeUnit.SECONDS.toNanos(1);

    private MarketDataSubscriber()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     */
    public static void main(final String[] args)
    {
        System.out.println("Subscribing to quotes on " + CHANNEL + " stream " + STREAM_ID);

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        final Verbus.Context ctx = SampleConfiguration.context()
            .availableImageHandler(SamplesUtil::printAvailableImage)
            .unavailableImageHandler(SamplesUtil::printUnavailableImage);
        final TopOfBook book = new TopOfBook(INSTRUMENTS);
        final FragmentHandler fragmentHandler = new FragmentAssembler(book);
        final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();
        final String name = "subscriber pid " + ProcessHandle.current().pid();

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ? Verbus.launch(ctx) : Verbus.connect(ctx);
            Subscription subscription = verbus.addSubscription(CHANNEL, STREAM_ID))
        {
            long nextReportNs = System.nanoTime() + REPORT_INTERVAL_NS;
            while (running.get())
            {
                idleStrategy.idle(subscription.poll(fragmentHandler, FRAGMENT_COUNT_LIMIT));
                final long nowNs = System.nanoTime();
                if (nowNs >= nextReportNs)
                {
                    System.out.println(book.intervalReport(name));
                    nextReportNs = nowNs + REPORT_INTERVAL_NS;
                }
            }
            System.out.printf("Shutting down: %,d quotes, %d gaps, last sequence %,d%n", book.quotes(), book.gaps(),
                book.nextSequence() - 1);
        }
    }
}
