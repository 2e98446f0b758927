package io.verbus.samples;

import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Echoes every ping from {@link SampleConfiguration#PING_CHANNEL} back on {@link SampleConfiguration#PONG_CHANNEL}
 * until Ctrl-C. The other half of {@link Ping}.
 */
public final class Pong
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final int PING_STREAM_ID = SampleConfiguration.PING_STREAM_ID;
    private static final int PONG_STREAM_ID = SampleConfiguration.PONG_STREAM_ID;
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;
    private static final String PING_CHANNEL = SampleConfiguration.PING_CHANNEL;
    private static final String PONG_CHANNEL = SampleConfiguration.PONG_CHANNEL;
    private static final boolean EXCLUSIVE_PUBLICATIONS = SampleConfiguration.EXCLUSIVE_PUBLICATIONS;

    private static final IdleStrategy PING_HANDLER_IDLE_STRATEGY = SampleConfiguration.newIdleStrategy();

    private Pong()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     */
    public static void main(final String[] args)
    {
        final Verbus.Context ctx = SampleConfiguration.context()
            .availableImageHandler(SamplesUtil::printAvailableImage)
            .unavailableImageHandler(SamplesUtil::printUnavailableImage);

        final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();

        System.out.println("Subscribing to pings from " + PING_CHANNEL + " on stream " + PING_STREAM_ID);
        System.out.println("Publishing pongs to " + PONG_CHANNEL + " on stream " + PONG_STREAM_ID);

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ? Verbus.launch(ctx) : Verbus.connect(ctx);
            Subscription subscription = verbus.addSubscription(PING_CHANNEL, PING_STREAM_ID);
            Publication publication = EXCLUSIVE_PUBLICATIONS ?
                verbus.addExclusivePublication(PONG_CHANNEL, PONG_STREAM_ID) :
                verbus.addPublication(PONG_CHANNEL, PONG_STREAM_ID))
        {
            final FragmentHandler fragmentHandler =
                (buffer, offset, length, header) -> pingHandler(publication, running, buffer, offset, length, header);

            while (running.get())
            {
                idleStrategy.idle(subscription.poll(fragmentHandler, FRAGMENT_COUNT_LIMIT));
            }

            System.out.println("Shutting down...");
        }
    }

    /**
     * Sends the ping straight back, retrying while the pong publication is back pressured or not yet connected.
     */
    static void pingHandler(
        final Publication pongPublication,
        final AtomicBoolean running,
        final DirectBuffer buffer,
        final int offset,
        final int length,
        final Header header)
    {
        PING_HANDLER_IDLE_STRATEGY.reset();
        long result;
        while ((result = pongPublication.offer(buffer, offset, length)) < 0L)
        {
            if (Publication.CLOSED == result || !running.get())
            {
                return;
            }
            PING_HANDLER_IDLE_STRATEGY.idle();
        }
    }
}
