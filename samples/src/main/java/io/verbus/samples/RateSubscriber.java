package io.verbus.samples;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Reads {@link SampleConfiguration#CHANNEL} as fast as it can and prints the rate every second, until Ctrl-C. The
 * other half of {@link StreamingPublisher}.
 */
public final class RateSubscriber
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final String CHANNEL = SampleConfiguration.CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;

    private RateSubscriber()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     */
    public static void main(final String[] args)
    {
        System.out.println("Subscribing to " + CHANNEL + " on stream " + STREAM_ID);

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        final Verbus.Context ctx = SampleConfiguration.context()
            .availableImageHandler(SamplesUtil::printAvailableImage)
            .unavailableImageHandler(SamplesUtil::printUnavailableImage);
        final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ? Verbus.launch(ctx) : Verbus.connect(ctx);
            Subscription subscription = verbus.addSubscription(CHANNEL, STREAM_ID);
            RateReporter reporter = new RateReporter("subscriber", TimeUnit.SECONDS.toNanos(1)))
        {
            final FragmentHandler rateCounter =
                new FragmentAssembler((buffer, offset, length, header) -> reporter.onMessage(length));
            SamplesUtil.pollUntilStopped(running, rateCounter, FRAGMENT_COUNT_LIMIT, subscription, idleStrategy);
            System.out.printf("Shutting down after %,d messages%n", reporter.totalMessages());
        }
    }
}
