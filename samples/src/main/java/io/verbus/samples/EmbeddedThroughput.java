package io.verbus.samples;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link StreamingPublisher} and {@link RateSubscriber} in one process on one Verbus, over
 * {@link SampleConfiguration#EMBEDDED_CHANNEL} ({@code ipc} by default): the publisher on the main thread, the
 * subscriber on its own, each message's sequence checked on arrival.
 */
public final class EmbeddedThroughput
{
    private static final String CHANNEL = SampleConfiguration.EMBEDDED_CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final long NUMBER_OF_MESSAGES = SampleConfiguration.NUMBER_OF_MESSAGES;
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;

    private EmbeddedThroughput()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     * @throws InterruptedException if interrupted while waiting for the subscriber thread.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        System.out.println("Streaming " + NUMBER_OF_MESSAGES + " messages over " + CHANNEL + " within one process");

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        try (Verbus verbus = Verbus.launch(SampleConfiguration.context());
            Subscription subscription = verbus.addSubscription(CHANNEL, STREAM_ID);
            Publication publication = verbus.addExclusivePublication(CHANNEL, STREAM_ID);
            RateReporter reporter = new RateReporter("throughput", TimeUnit.SECONDS.toNanos(1)))
        {
            final long[] received = new long[1];
            final FragmentHandler checker = new FragmentAssembler((buffer, offset, length, header) ->
            {
                if (buffer.getLong(offset) != received[0])
                {
                    throw new IllegalStateException("expected message " + received[0] + ", got " +
                        buffer.getLong(offset));
                }
                received[0]++;
            });
            final Thread subscriberThread = Thread.ofPlatform().name("subscriber").start(() ->
            {
                final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();
                while (running.get() && received[0] < NUMBER_OF_MESSAGES)
                {
                    idleStrategy.idle(subscription.poll(checker, FRAGMENT_COUNT_LIMIT));
                }
            });

            while (!publication.isConnected())
            {
                Thread.sleep(1);
            }
            final long backPressureCount = StreamingPublisher.publishAll(publication, reporter, NUMBER_OF_MESSAGES);
            subscriberThread.join();
            System.out.printf("Done: %,d sent, %,d received in order, back pressured %,d times%n",
                reporter.totalMessages(), received[0], backPressureCount);
        }
    }
}
