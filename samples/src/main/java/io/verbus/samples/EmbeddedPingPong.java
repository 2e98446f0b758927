package io.verbus.samples;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Image;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.concurrent.IdleStrategy;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * {@link Ping} and {@link Pong} in one process on one Verbus, over {@link SampleConfiguration#EMBEDDED_CHANNEL}
 * ({@code ipc} by default: the native log, no copy between the two). Pong runs on its own thread.
 */
public final class EmbeddedPingPong
{
    private static final int PING_STREAM_ID = SampleConfiguration.PING_STREAM_ID;
    private static final int PONG_STREAM_ID = SampleConfiguration.PONG_STREAM_ID;
    private static final String CHANNEL = SampleConfiguration.EMBEDDED_CHANNEL;
    private static final long NUMBER_OF_MESSAGES = SampleConfiguration.NUMBER_OF_MESSAGES;
    private static final long WARMUP_NUMBER_OF_MESSAGES = SampleConfiguration.WARMUP_NUMBER_OF_MESSAGES;
    private static final int WARMUP_NUMBER_OF_ITERATIONS = SampleConfiguration.WARMUP_NUMBER_OF_ITERATIONS;
    private static final int FRAGMENT_COUNT_LIMIT = SampleConfiguration.FRAGMENT_COUNT_LIMIT;

    private EmbeddedPingPong()
    {
    }

    /**
     * @param args none; settings come from {@link SampleConfiguration}.
     * @throws InterruptedException if interrupted while waiting for the pong thread.
     */
    public static void main(final String[] args) throws InterruptedException
    {
        System.out.println("Ping and Pong in one process over " + CHANNEL + ", streams " + PING_STREAM_ID + " and " +
            PONG_STREAM_ID);

        final AtomicBoolean running = new AtomicBoolean(true);
        ShutdownSignal.register(() -> running.set(false));

        try (Verbus verbus = Verbus.launch(SampleConfiguration.context());
            Subscription pingSubscription = verbus.addSubscription(CHANNEL, PING_STREAM_ID);
            Subscription pongSubscription = verbus.addSubscription(CHANNEL, PONG_STREAM_ID);
            Publication pingPublication = verbus.addExclusivePublication(CHANNEL, PING_STREAM_ID);
            Publication pongPublication = verbus.addExclusivePublication(CHANNEL, PONG_STREAM_ID))
        {
            final Thread pongThread = Thread.ofPlatform().name("pong").start(() ->
            {
                final IdleStrategy idleStrategy = SampleConfiguration.newIdleStrategy();
                final FragmentHandler echo = (buffer, offset, length, header) ->
                    Pong.pingHandler(pongPublication, running, buffer, offset, length, header);
                while (running.get())
                {
                    idleStrategy.idle(pingSubscription.poll(echo, FRAGMENT_COUNT_LIMIT));
                }
            });

            final FragmentHandler pongHandler = new FragmentAssembler((buffer, offset, length, header) ->
                Ping.histogram().recordValue(System.nanoTime() - buffer.getLong(offset)));
            while (pongSubscription.hasNoImages() || !pingPublication.isConnected())
            {
                Thread.sleep(1);
            }
            final Image pongImage = pongSubscription.imageAtIndex(0);

            System.out.println("Warming up: " + WARMUP_NUMBER_OF_ITERATIONS + " x " + WARMUP_NUMBER_OF_MESSAGES +
                " round trips");
            for (int i = 0; i < WARMUP_NUMBER_OF_ITERATIONS; i++)
            {
                Ping.roundTripMessages(pongHandler, pingPublication, pongImage, WARMUP_NUMBER_OF_MESSAGES);
            }

            Ping.histogram().reset();
            System.out.println("Pinging " + NUMBER_OF_MESSAGES + " messages");
            Ping.roundTripMessages(pongHandler, pingPublication, pongImage, NUMBER_OF_MESSAGES);
            System.out.println("Histogram of RTT latencies in microseconds.");
            Ping.histogram().outputPercentileDistribution(System.out, 1000.0);

            running.set(false);
            pongThread.join(TimeUnit.SECONDS.toMillis(5));
        }
    }
}
