package io.verbus;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Bad arguments to publications and subscriptions throw {@code IllegalArgumentException} before anything changes:
 * no hole in the log (the next offer is delivered at once, not after the unblock timeout), never a raw
 * NullPointerException or IndexOutOfBoundsException from Agrona. A handler that throws in poll goes to the error
 * handler; the fragment counts as consumed and the poll carries on.
 */
class PublicationArgumentsTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldRejectBadOfferAndClaimArgumentsWithoutLeavingAHole()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 5);
            final Publication concurrent = verbus.addPublication("ipc", 5);
            final ExclusivePublication exclusive = verbus.addExclusivePublication("ipc", 5);
            TestSupport.await("connected", () -> concurrent.isConnected() && exclusive.isConnected());

            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
            final List<Long> received = new ArrayList<>();
            long value = 0;
            for (final Publication publication : List.of(concurrent, exclusive))
            {
                rejected(() -> publication.offer(null, 0, 10), "must not be null");
                rejected(() -> publication.offer(buffer, -1, 10), "not within its capacity");
                rejected(() -> publication.offer(buffer, 60, 10), "not within its capacity");
                rejected(() -> publication.offer(buffer, 0, 65), "not within its capacity");
                rejected(() -> publication.offer(buffer, Integer.MAX_VALUE, 10), "not within its capacity");
                rejected(() -> publication.offer(buffer, 0, -1), "must not be negative");
                rejected(() -> publication.offer(buffer, 0, 8, null, 0, 0), "must not be null");
                rejected(() -> publication.offer(buffer, 0, 8, buffer, 60, 8), "not within its capacity");
                rejected(() -> publication.tryClaim(10, null), "bufferClaim must not be null");
                // With a reserved value supplier: the same checks, before any space is claimed.
                final ReservedValueSupplier supplier = (b, o, l) -> 7L;
                rejected(() -> publication.offer(null, 0, 10, supplier), "must not be null");
                rejected(() -> publication.offer(buffer, -1, 10, supplier), "not within its capacity");
                rejected(() -> publication.offer(buffer, 0, 8, buffer, 60, 8, supplier), "not within its capacity");
                rejected(() -> publication.offer((DirectBufferVector[])null), "vectors must not be null");
                rejected(() -> publication.offer(new DirectBufferVector[]{ null }), "vectors[0] must not be null");
                if (publication == exclusive)
                {
                    rejected(() -> exclusive.offerBlock(null, 0, 64), "offerBlock: buffer must not be null");
                }

                buffer.putLong(0, ++value);
                assertTrue(publication.offer(buffer, 0, 64) > 0);
                final long expected = value;
                final long deadlineNs = System.nanoTime() + 2_000_000_000L;
                while (!received.contains(expected) && System.nanoTime() < deadlineNs)
                {
                    subscription.poll((b, o, l, h) -> received.add(b.getLong(o)), 10);
                    TestSupport.sleep(1);
                }
                assertTrue(received.contains(expected), "a message after the bad calls arrives at once: no hole");
            }
            assertEquals(List.of(1L, 2L), received);
        }
    }

    @Test
    void shouldRejectBadArgumentsOnAeronChannelsAndTheVerbusItself()
    {
        rejected(() -> Verbus.launch(null), "must not be null");
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            rejected(() -> verbus.addSubscription("ipc", 1, null, image -> {}), "availableImageHandler");
            rejected(() -> verbus.addSubscription("ipc", 1, image -> {}, null), "unavailableImageHandler");

            final Publication aeron = verbus.addPublication("aeron:ipc", 9);
            final Subscription aeronSubscription = verbus.addSubscription("aeron:ipc", 9);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
            rejected(() -> aeron.offer(null, 0, 10), "must not be null");
            rejected(() -> aeron.offer(buffer, 60, 10), "not within its capacity");
            rejected(() -> aeron.offer(buffer, 0, 8, buffer, -1, 8), "not within its capacity");
            rejected(() -> aeron.tryClaim(10, null), "bufferClaim must not be null");
            final ReservedValueSupplier supplier = (b, o, l) -> 7L;
            rejected(() -> aeron.offer(null, 0, 10, supplier), "must not be null");
            rejected(() -> aeron.offer(buffer, 60, 10, supplier), "not within its capacity");
            rejected(() -> aeron.offer(buffer, 0, 8, buffer, -1, 8, supplier), "not within its capacity");
            rejected(() -> aeron.offer(new DirectBufferVector[]{ null }), "vectors[0] must not be null");
            rejected(() -> aeronSubscription.poll(null, 10), "must not be null");
            rejected(() -> aeronSubscription.controlledPoll(null, 10), "must not be null");
        }
    }

    @Test
    void shouldRejectANullHandler()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 6);
            rejected(() -> subscription.poll(null, 10), "must not be null");
            rejected(() -> subscription.controlledPoll(null, 10), "must not be null");
        }
    }

    @Test
    void shouldHandAHandlerExceptionToTheErrorHandlerAndCarryOn()
    {
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).errorHandler(errors::add)))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 7);
            final Publication publication = verbus.addPublication("ipc", 7);
            TestSupport.await("connected", publication::isConnected);

            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[16]);
            for (long i = 1; i <= 6; i++)
            {
                buffer.putLong(0, i);
                assertTrue(publication.offer(buffer, 0, 16) > 0);
            }

            final List<Long> seen = new ArrayList<>();
            final FragmentHandler throwing = (b, o, l, h) ->
            {
                seen.add(b.getLong(o));
                if (2 == b.getLong(o))
                {
                    throw new IllegalStateException("handler bug");
                }
            };
            TestSupport.await(
                "first three", () -> seen.size() >= 3, () -> assertTrue(subscription.poll(throwing, 3) >= 0));
            assertEquals(List.of(1L, 2L, 3L), seen, "the poll carried on after the throw");
            assertEquals(1, errors.size());
            assertTrue(errors.get(0).getCause().getMessage().contains("handler bug"));

            final ControlledFragmentHandler controlled = (b, o, l, h) ->
            {
                seen.add(b.getLong(o));
                if (4 == b.getLong(o))
                {
                    throw new IllegalArgumentException("controlled handler bug");
                }
                return ControlledFragmentHandler.Action.CONTINUE;
            };
            TestSupport.await("the rest", () -> seen.size() >= 6, () -> subscription.controlledPoll(controlled, 10));
            assertEquals(List.of(1L, 2L, 3L, 4L, 5L, 6L), seen, "the fragment that threw counts as consumed");
            assertEquals(2, errors.size());
        }
    }

    private static void rejected(final Executable call, final String messagePart)
    {
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class, call);
        assertTrue(ex.getMessage().contains(messagePart), ex.getMessage());
    }
}
