package io.verbus.samples;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Prints every message sent to {@link SampleConfiguration#CHANNEL}, and each publisher that comes or goes, until
 * Ctrl-C. Pairs with {@link BasicPublisher}.
 */
public final class BasicSubscriber
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final String CHANNEL = SampleConfiguration.CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;

    private BasicSubscriber()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     */
    public static void main(final String[] args)
    {
        System.out.println("Subscribing to " + CHANNEL + " on stream " + STREAM_ID);

        final Verbus.Context ctx = SampleConfiguration.context()
            .availableImageHandler(SamplesUtil::printAvailableImage)
            .unavailableImageHandler(SamplesUtil::printUnavailableImage);

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        final FragmentHandler fragmentHandler = new FragmentAssembler(SamplesUtil.printAsciiMessage(STREAM_ID));
        final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ? Verbus.launch(ctx) : Verbus.connect(ctx);
            Subscription subscription = verbus.addSubscription(CHANNEL, STREAM_ID))
        {
            SamplesUtil.pollUntilStopped(running, fragmentHandler, FRAGMENT_COUNT_LIMIT, subscription, idleStrategy);
            System.out.println("Shutting down...");
        }
    }
}
