package io.verbus.samples;

import io.verbus.Publication;
import io.verbus.Verbus;
import org.agrona.BufferUtil;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.TimeUnit;

/**
 * Sends a short text message once a second to whoever subscribes to {@link SampleConfiguration#CHANNEL}, saying
 * what became of each offer. Run {@link BasicSubscriber} in another process to receive them.
 * <pre>
 * ./verbus sample basic-subscriber          # one shell
 * ./verbus sample basic-publisher           # another
 * </pre>
 */
public final class BasicPublisher
{
    private static final boolean EMBEDDED_MEDIA_DRIVER = SampleConfiguration.EMBEDDED_MEDIA_DRIVER;
    private static final String CHANNEL = SampleConfiguration.CHANNEL;
    private static final int STREAM_ID = SampleConfiguration.STREAM_ID;
    private static final long NUMBER_OF_MESSAGES = SampleConfiguration.NUMBER_OF_MESSAGES;
    private static final long LINGER_TIMEOUT_MS = SampleConfiguration.LINGER_TIMEOUT_MS;

    private BasicPublisher()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     * @throws InterruptedException if interrupted while pausing between messages.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        System.out.println("Publishing to " + CHANNEL + " on stream " + STREAM_ID);

        final Verbus.Context ctx = SampleConfiguration.context();

        try (Verbus verbus = EMBEDDED_MEDIA_DRIVER ? Verbus.launch(ctx) : Verbus.connect(ctx);
            Publication publication = verbus.addPublication(CHANNEL, STREAM_ID))
        {
            final UnsafeBuffer buffer = new UnsafeBuffer(BufferUtil.allocateDirectAligned(256, 64));

            for (long i = 0; i < NUMBER_OF_MESSAGES; i++)
            {
                final int length = buffer.putStringWithoutLengthAscii(0, "Hello World! " + i);

                System.out.print("Offering " + (i + 1) + "/" + NUMBER_OF_MESSAGES + ": ");
                final long result = publication.offer(buffer, 0, length);
                System.out.println(result > 0 ? "sent" : "failed, " + SamplesUtil.describeOfferResult(result));

                if (!publication.isConnected())
                {
                    System.out.println("No subscriber is connected yet");
                }

                Thread.sleep(TimeUnit.SECONDS.toMillis(1));
            }

            System.out.println("Done sending.");

            if (LINGER_TIMEOUT_MS > 0)
            {
                System.out.println("Lingering " + LINGER_TIMEOUT_MS + " ms so subscribers can read the last one");
                Thread.sleep(LINGER_TIMEOUT_MS);
            }
        }
    }
}
