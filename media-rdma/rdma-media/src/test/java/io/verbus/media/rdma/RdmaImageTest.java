package io.verbus.media.rdma;

import io.verbus.ExclusivePublication;
import io.verbus.Image;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What an {@code rdma:} image reports as an Aeron image does: the publisher's MTU (carried in the handshake's
 * CHALLENGE), and the end of the stream once its publication closed gracefully, after the subscriber, which had not
 * read anything yet, has drained every message sent before the close.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS)
@ExtendWith(RdmaTestProperties.class)
class RdmaImageTest
{
    private static final int MESSAGES = 2_000;
    private static final int LENGTH = 100;

    @TempDir
    Path dir;

    @Test
    void shouldReportThePublishersMtu()
    {
        try (Verbus publisherSide = launch("a"); Verbus subscriberSide = launch("b"))
        {
            final ExclusivePublication publication = publisherSide.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|mtu=4096", 2101);
            final int port = RdmaVerbusTest.controlPort(publisherSide.countersReader());
            final Subscription subscription =
                subscriberSide.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 2101);
            awaitTrue("connected", () -> publication.isConnected() && subscription.imageCount() == 1);

            final Image image = subscription.imageAtIndex(0);
            assertEquals(4096, image.mtuLength(), "the publisher's mtu, not the subscriber channel's default");
            assertEquals(publication.maxPayloadLength() + 32, image.mtuLength());
        }
    }

    @ParameterizedTest(name = "{0}, exclusive={1}")
    @CsvSource({ "shm, true", "shm, false", "tcp, true", "tcp, false" })
    void shouldDrainEverythingSentBeforeAGracefulCloseThenReportEndOfStream(
        final String provider, final boolean exclusive)
    {
        try (Verbus publisherSide = launch("a"); Verbus subscriberSide = launch("b"))
        {
            final String channel = "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=1m";
            final Publication publication = exclusive ?
                publisherSide.addExclusivePublication(channel, 2201) : publisherSide.addPublication(channel, 2201);
            final int port = RdmaVerbusTest.controlPort(publisherSide.countersReader());
            final Subscription subscription = subscriberSide.addSubscription(
                "rdma:endpoint=127.0.0.1:" + port + "|provider=" + provider, 2201);
            awaitTrue("connected", () -> publication.isConnected() && subscription.imageCount() == 1);
            final Image image = subscription.imageAtIndex(0);

            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(LENGTH));
            for (int i = 0; i < MESSAGES; i++)
            {
                message.putInt(0, i);
                final int sequence = i;
                // Within one window (half of a 1 MB term): the subscriber reads nothing until the close.
                awaitTrue("offer " + sequence, () -> publication.offer(message, 0, LENGTH) > 0);
            }
            final long endPosition = publication.position();
            assertFalse(image.isEndOfStream(), "open stream");
            publication.close();

            final AtomicInteger next = new AtomicInteger();
            awaitTrue("every message drained after the close", () ->
            {
                image.poll((buffer, offset, length, header) ->
                    assertEquals(next.getAndIncrement(), buffer.getInt(offset), "in order, none lost"), 100);
                return next.get() == MESSAGES;
            });
            awaitTrue("end of stream", image::isEndOfStream);
            assertEquals(endPosition, image.endOfStreamPosition());
            awaitTrue("image goes once drained", () -> subscription.imageCount() == 0);
            assertTrue(image.isEndOfStream(), "still at its end once closed");
        }
    }

    private Verbus launch(final String name)
    {
        return Verbus.launch(new Verbus.Context()
            .dir(dir.resolve(name).toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping"));
    }

    private static void awaitTrue(final String what, final BooleanSupplier condition)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadlineNs, "timed out waiting: " + what);
            Thread.yield();
        }
    }
}
