package io.verbus.samples;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.concurrent.IdleStrategy;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The market-data fan-out in one process: one publication of {@link Quote}s and
 * {@link SampleConfiguration#SUBSCRIBERS} subscriptions, each polled by its own thread, over
 * {@link SampleConfiguration#EMBEDDED_CHANNEL} ({@code ipc} by default: every subscriber reads the publisher's log
 * in place, nothing is copied per subscriber). Each checks it received every quote in order.
 */
public final class MarketDataFanOut
{
    private static final String CHANNEL = SampleConfiguration.EMBEDDED_CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final long NUMBER_OF_MESSAGES = SampleConfiguration.NUMBER_OF_MESSAGES;
    private static final int SUBSCRIBERS = SampleConfiguration.SUBSCRIBERS;
    private static final int INSTRUMENTS = SampleConfiguration.INSTRUMENTS;
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;

    private MarketDataFanOut()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     * @throws InterruptedException if interrupted while waiting for the subscriber threads.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        System.out.printf("Fan-out of %,d quotes to %d subscribers over %s within one process%n", NUMBER_OF_MESSAGES,
            SUBSCRIBERS, CHANNEL);

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        try (Verbus verbus = Verbus.launch(SampleConfiguration.context()))
        {
            final List<TopOfBook> books = new ArrayList<>();
            final List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < SUBSCRIBERS; i++)
            {
                final Subscription subscription = verbus.addSubscription(CHANNEL, STREAM_ID);
                final TopOfBook book = new TopOfBook(INSTRUMENTS);
                final FragmentHandler fragmentHandler = new FragmentAssembler(book);
                books.add(book);
                threads.add(Thread.ofPlatform().name("subscriber-" + i).start(() ->
                {
                    final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();
                    while (running.get() && book.nextSequence() < NUMBER_OF_MESSAGES)
                    {
                        idleStrategy.idle(subscription.poll(fragmentHandler, FRAGMENT_COUNT_LIMIT));
                    }
                }));
            }

            try (Publication publication = verbus.addExclusivePublication(CHANNEL, STREAM_ID);
                RateReporter reporter = new RateReporter("quotes sent", TimeUnit.SECONDS.toNanos(1)))
            {
                while (!publication.isConnected())
                {
                    Thread.sleep(1);
                }
                MarketDataPublisher.publishQuotes(publication, reporter, NUMBER_OF_MESSAGES, running);
                for (final Thread thread : threads)
                {
                    thread.join();
                }
            }

            boolean complete = true;
            for (int i = 0; i < books.size(); i++)
            {
                final TopOfBook book = books.get(i);
                System.out.printf("subscriber %d: %,d quotes, %d gaps%n", i, book.quotes(), book.gaps());
                complete &= book.quotes() == NUMBER_OF_MESSAGES && 0 == book.gaps();
            }
            System.out.println(complete ? "Every subscriber received every quote, in order." :
                "Some subscriber missed quotes (stopped early?)");
        }
    }
}
