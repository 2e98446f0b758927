package io.verbus.samples;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.verbus.Image;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.HdrHistogram.Histogram;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Measures round trips to {@link Pong}: sends a timestamp on {@link SampleConfiguration#PING_CHANNEL}, waits for it
 * to come back on {@link SampleConfiguration#PONG_CHANNEL}, and prints the distribution of round-trip times after a
 * warm-up. Start Pong first, in another process.
 * <pre>
 * ./verbus sample pong                      # one shell
 * ./verbus sample ping --messages 100000    # another
 * </pre>
 */
public final class Ping
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final int PING_STREAM_ID = SampleConfiguration.PING_STREAM_ID;
    private static final int PONG_STREAM_ID = SampleConfiguration.PONG_STREAM_ID;
    private static final String PING_CHANNEL = SampleConfiguration.PING_CHANNEL;
    private static final String PONG_CHANNEL = SampleConfiguration.PONG_CHANNEL;
    private static final long NUMBER_OF_MESSAGES = SampleConfiguration.NUMBER_OF_MESSAGES;
    private static final long WARMUP_NUMBER_OF_MESSAGES = SampleConfiguration.WARMUP_NUMBER_OF_MESSAGES;
    private static final int WARMUP_NUMBER_OF_ITERATIONS = SampleConfiguration.WARMUP_NUMBER_OF_ITERATIONS;
    private static final int MESSAGE_LENGTH = Math.max(SampleConfiguration.MESSAGE_LENGTH, BitUtil.SIZE_OF_LONG);
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;
    private static final boolean EXCLUSIVE_PUBLICATIONS = SampleConfiguration.EXCLUSIVE_PUBLICATIONS;

    private static final UnsafeBuffer OFFER_BUFFER =
        new UnsafeBuffer(BufferUtil.allocateDirectAligned(MESSAGE_LENGTH, BitUtil.CACHE_LINE_LENGTH));
    private static final Histogram HISTOGRAM = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
    private static final CountDownLatch PONG_CONNECTED = new CountDownLatch(1);
    private static final IdleStrategy POLLING_IDLE_STRATEGY = SampleConfiguration.newIdleStrategy();

    private Ping()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     * @throws InterruptedException if interrupted while waiting for Pong.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        final Verbus.Context ctx = SampleConfiguration.context().availableImageHandler(Ping::availablePongImage);
        final FragmentHandler fragmentHandler = new FragmentAssembler(Ping::pongHandler);

        System.out.println("Publishing pings to " + PING_CHANNEL + " on stream " + PING_STREAM_ID);
        System.out.println("Subscribing to pongs from " + PONG_CHANNEL + " on stream " + PONG_STREAM_ID);
        System.out.println("Message length of " + MESSAGE_LENGTH + " bytes");

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ? Verbus.launch(ctx) : Verbus.connect(ctx);
            Subscription subscription = verbus.addSubscription(PONG_CHANNEL, PONG_STREAM_ID);
            Publication publication = EXCLUSIVE_PUBLICATIONS ?
                verbus.addExclusivePublication(PING_CHANNEL, PING_STREAM_ID) :
                verbus.addPublication(PING_CHANNEL, PING_STREAM_ID))
        {
            System.out.println("Waiting for Pong...");
            PONG_CONNECTED.await();
            final Image image = subscription.imageAtIndex(0);

            System.out.println("Warming up: " + WARMUP_NUMBER_OF_ITERATIONS + " x " + WARMUP_NUMBER_OF_MESSAGES +
                " round trips");
            for (int i = 0; i < WARMUP_NUMBER_OF_ITERATIONS; i++)
            {
                roundTripMessages(fragmentHandler, publication, image, WARMUP_NUMBER_OF_MESSAGES);
            }

            HISTOGRAM.reset();
            System.out.println("Pinging " + NUMBER_OF_MESSAGES + " messages");
            roundTripMessages(fragmentHandler, publication, image, NUMBER_OF_MESSAGES);

            System.out.println("Histogram of RTT latencies in microseconds.");
            HISTOGRAM.outputPercentileDistribution(System.out, 1000.0);
        }
    }

    /**
     * Sends {@code count} pings one at a time, each waiting for its pong. Both streams start empty and carry
     * messages of one length, so the pong image reaches the ping's position exactly when that ping came back.
     */
    static void roundTripMessages(
        final FragmentHandler fragmentHandler, final Publication publication, final Image image, final long count)
    {
        for (long i = 0; i < count; i++)
        {
            long offeredPosition;
            POLLING_IDLE_STRATEGY.reset();
            do
            {
                OFFER_BUFFER.putLong(0, System.nanoTime());
                offeredPosition = publication.offer(OFFER_BUFFER, 0, MESSAGE_LENGTH);
                if (offeredPosition < 0)
                {
                    checkNotClosed(offeredPosition);
                    POLLING_IDLE_STRATEGY.idle();
                }
            }
            while (offeredPosition < 0);

            POLLING_IDLE_STRATEGY.reset();
            while (image.position() < offeredPosition)
            {
                if (image.poll(fragmentHandler, FRAGMENT_COUNT_LIMIT) <= 0)
                {
                    if (image.isClosed())
                    {
                        throw new IllegalStateException("Pong went away (its image closed)");
                    }
                    POLLING_IDLE_STRATEGY.idle();
                }
            }
        }
    }

    /** @return the histogram the pongs are recorded in. */
    static Histogram histogram()
    {
        return HISTOGRAM;
    }

    private static void checkNotClosed(final long result)
    {
        if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
        {
            throw new IllegalStateException("ping offer failed: " + SamplesUtil.describeOfferResult(result));
        }
    }

    private static void pongHandler(final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final long pingTimestamp = buffer.getLong(offset);
        HISTOGRAM.recordValue(System.nanoTime() - pingTimestamp);
    }

    private static void availablePongImage(final Image image)
    {
        System.out.printf("Available image: channel=%s stream=%d session=%d%n",
            image.subscription().channel(), image.streamId(), image.sessionId());
        if (PONG_STREAM_ID == image.streamId())
        {
            PONG_CONNECTED.countDown();
        }
    }
}
