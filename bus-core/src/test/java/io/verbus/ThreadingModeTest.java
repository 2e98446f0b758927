package io.verbus;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ThreadingModeTest
{
    @TempDir
    Path tempDir;

    @ParameterizedTest
    @EnumSource(ThreadingMode.class)
    void shouldDeliverOverIpcAndAeronIpcInEveryThreadingMode(final ThreadingMode mode)
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).threadingMode(mode)))
        {
            for (final String channel : new String[]{"ipc", "aeron:ipc"})
            {
                final Subscription subscription = verbus.addSubscription(channel, 12);
                final Publication publication = verbus.addPublication(channel, 12);
                TestSupport.await(channel + " connected", publication::isConnected, verbus::invoke);
                final UnsafeBuffer buffer = new UnsafeBuffer(new byte[32]);
                final int[] received = {0};
                for (int i = 0; i < 100; i++)
                {
                    TestSupport.await("offer", () -> publication.offer(buffer, 0, 32) > 0, () ->
                    {
                        verbus.invoke();
                        received[0] += subscription.poll((b, o, l, h) -> {}, 10);
                    });
                }
                TestSupport.await(channel + " received", () -> received[0] == 100, () ->
                {
                    verbus.invoke();
                    received[0] += subscription.poll((b, o, l, h) -> {}, 10);
                });
                publication.close();
                subscription.close();
            }
        }
    }

    @Test
    void shouldMakeNoProgressInInvokerModeUntilTheApplicationInvokes()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).threadingMode(ThreadingMode.INVOKER)))
        {
            verbus.addSubscription("ipc", 13);
            final Publication publication = verbus.addPublication("ipc", 13);
            TestSupport.sleep(50);
            assertFalse(publication.isConnected(), "no driver thread: nothing computed the limit yet");
            assertEquals(0, publication.positionLimit());
            assertTrue(verbus.invoke() > 0);
            assertTrue(publication.isConnected());
        }
    }

    @Test
    void shouldTellTheApplicationWhenInvokeOnAnInterruptedThreadStopsTheAgents()
    {
        final List<Throwable> errors = new ArrayList<>();
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).threadingMode(ThreadingMode.INVOKER)
            .errorHandler(errors::add)))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 14);
            final Publication publication = verbus.addPublication("ipc", 14);
            TestSupport.await("connected", publication::isConnected, verbus::invoke);
            while (verbus.invoke() > 0)
            {
                Thread.onSpinWait(); // until a duty cycle finds no work
            }

            Thread.currentThread().interrupt();
            try
            {
                verbus.invoke();
                verbus.invoke();
            }
            finally
            {
                assertTrue(Thread.interrupted(), "invoke() leaves the interrupt set");
            }

            assertEquals(1, errors.size(), "told once: " + errors);
            assertTrue(errors.get(0).getMessage().contains("interrupted thread"), errors.get(0).getMessage());
            subscription.close(); // work for the conductor, which no longer runs
            assertEquals(0, verbus.invoke(), "the agents stay stopped: Agrona's rule, which Aeron applications " +
                "live by too");
            assertEquals(1, errors.size());
        }
    }
}
