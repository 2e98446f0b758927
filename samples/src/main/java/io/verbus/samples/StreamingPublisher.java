package io.verbus.samples;

import io.verbus.Publication;
import io.verbus.Verbus;
import org.agrona.BitUtil;
import org.agrona.BufferUtil;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.TimeUnit;

/**
 * Offers {@link SampleConfiguration#NUMBER_OF_MESSAGES} messages of {@link SampleConfiguration#MESSAGE_LENGTH} bytes
 * as fast as the subscribers take them, printing the rate every second and how often it was back pressured. Run
 * {@link RateSubscriber} in another process.
 * <pre>
 * ./verbus sample rate-subscriber                                   # one shell
 * ./verbus sample streaming-publisher --messages 10000000           # another
 * </pre>
 */
public final class StreamingPublisher
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final String CHANNEL = SampleConfiguration.CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final long NUMBER_OF_MESSAGES = SampleConfiguration.NUMBER_OF_MESSAGES;
    private static final int MESSAGE_LENGTH = Math.max(SampleConfiguration.MESSAGE_LENGTH, BitUtil.SIZE_OF_LONG);
    private static final long LINGER_TIMEOUT_MS = SampleConfiguration.LINGER_TIMEOUT_MS;
    private static final boolean EXCLUSIVE_PUBLICATIONS = SampleConfiguration.EXCLUSIVE_PUBLICATIONS;

    private static final UnsafeBuffer OFFER_BUFFER =
        new UnsafeBuffer(BufferUtil.allocateDirectAligned(MESSAGE_LENGTH, BitUtil.CACHE_LINE_LENGTH));

    private StreamingPublisher()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     * @throws InterruptedException if interrupted while waiting or lingering.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        System.out.println("Streaming " + NUMBER_OF_MESSAGES + " messages of " + MESSAGE_LENGTH + " bytes to " +
            CHANNEL + " on stream " + STREAM_ID);

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ?
            Verbus.launch(SampleConfiguration.context()) : Verbus.connect(SampleConfiguration.context());
            Publication publication = EXCLUSIVE_PUBLICATIONS ?
                verbus.addExclusivePublication(CHANNEL, STREAM_ID) : verbus.addPublication(CHANNEL, STREAM_ID);
            RateReporter reporter = new RateReporter("publisher", TimeUnit.SECONDS.toNanos(1)))
        {
            System.out.println("Waiting for a subscriber...");
            while (!publication.isConnected())
            {
                Thread.sleep(1);
            }

            final long backPressureCount = publishAll(publication, reporter, NUMBER_OF_MESSAGES);
            System.out.printf("Done streaming. Back pressured %,d times (%.1f%% of offers)%n", backPressureCount,
                100.0 * backPressureCount / Math.max(1, backPressureCount + NUMBER_OF_MESSAGES));

            if (LINGER_TIMEOUT_MS > 0)
            {
                System.out.println("Lingering " + LINGER_TIMEOUT_MS + " ms");
                Thread.sleep(LINGER_TIMEOUT_MS);
            }
        }
    }

    /**
     * Offers {@code count} messages, each carrying its sequence number, retrying each until it is accepted.
     *
     * @return how many offers were refused (back pressure, admin action, not connected).
     */
    static long publishAll(final Publication publication, final RateReporter reporter, final long count)
    {
        final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();
        long backPressureCount = 0;
        for (long i = 0; i < count; i++)
        {
            OFFER_BUFFER.putLong(0, i);
            idleStrategy.reset();
            long result;
            while ((result = publication.offer(OFFER_BUFFER, 0, MESSAGE_LENGTH)) < 0)
            {
                if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
                {
                    throw new IllegalStateException("offer failed: " + SamplesUtil.describeOfferResult(result));
                }
                backPressureCount++;
                idleStrategy.idle();
            }
            reporter.onMessage(MESSAGE_LENGTH);
        }
        return backPressureCount;
    }
}
