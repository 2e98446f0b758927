package io.verbus.media.rdma;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.fabric.FabricContext;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The concurrent path: a publication and three subscriptions through the Verbus API, with the driver's own
 * sender and receiver agent threads, the publisher on the test thread and the subscribers polled on another,
 * and every WRITE's bytes shuffled: one million messages arrive intact and in order at each subscription.
 */
class RdmaVerbusFanOutTest
{
    private static final long MESSAGES = 1_000_000;

    @TempDir
    static Path fabricDir;

    @TempDir
    Path dir;

    private static String previousSecret;
    private static String previousShmDir;
    private static String previousPlacement;

    @BeforeAll
    static void configure()
    {
        previousSecret = System.setProperty(RdmaSecret.SECRET_PROP_NAME, "verbus-fan-out-secret-0123456789");
        previousShmDir = System.setProperty(FabricContext.SHM_DIR_PROP_NAME, fabricDir.toString());
        previousPlacement = System.setProperty(RdmaMediaFactory.WRITE_PLACEMENT_PROP_NAME, "shuffled");
    }

    @AfterAll
    static void restore()
    {
        restore(RdmaSecret.SECRET_PROP_NAME, previousSecret);
        restore(FabricContext.SHM_DIR_PROP_NAME, previousShmDir);
        restore(RdmaMediaFactory.WRITE_PLACEMENT_PROP_NAME, previousPlacement);
    }

    private static void restore(final String name, final String value)
    {
        if (null == value)
        {
            System.clearProperty(name);
        }
        else
        {
            System.setProperty(name, value);
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void shouldFanOutAMillionMessagesThroughTheDriverAgents() throws Exception
    {
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff")))
        {
            final Publication publication =
                verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm|term-length=1m", 4001);
            final int port = RdmaVerbusTest.controlPort(verbus.countersReader());
            final Subscription[] subscriptions = new Subscription[3];
            final MessageStream.Checker[] checkers = new MessageStream.Checker[3];
            for (int i = 0; i < 3; i++)
            {
                subscriptions[i] = verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 4001);
                checkers[i] = new MessageStream.Checker(0);
            }
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
            while (subscriptions[0].imageCount() + subscriptions[1].imageCount() + subscriptions[2].imageCount() < 3)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("subscriptions did not connect");
                }
                RdmaRig.sleepMicros(1000);
            }

            final AtomicReference<Throwable> pollerFailure = new AtomicReference<>();
            final Thread poller = Thread.ofPlatform().name("fan-out-poller").start(() ->
            {
                try
                {
                    final UnsafeBuffer view = new UnsafeBuffer(0, 0);
                    while (min(checkers) < MESSAGES && System.nanoTime() < deadlineNs)
                    {
                        int fragments = 0;
                        for (int i = 0; i < 3; i++)
                        {
                            final MessageStream.Checker checker = checkers[i];
                            fragments += subscriptions[i].poll((buffer, offset, length, header) ->
                            {
                                view.wrap(buffer, offset, length);
                                checker.onFragment(view, 0, length);
                            }, 1024);
                            if (null != checker.failure)
                            {
                                throw new AssertionError("subscription " + i + ": " + checker.failure);
                            }
                        }
                        if (0 == fragments)
                        {
                            RdmaRig.sleepMicros(50);
                        }
                    }
                }
                catch (final Throwable t)
                {
                    pollerFailure.set(t);
                }
            });

            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            long sequence = 0;
            int length = MessageStream.encode(message, 0);
            final long startNs = System.nanoTime();
            while (sequence < MESSAGES && System.nanoTime() < deadlineNs && null == pollerFailure.get())
            {
                if (publication.offer(message, 0, length) > 0)
                {
                    if (++sequence < MESSAGES)
                    {
                        length = MessageStream.encode(message, sequence);
                    }
                }
                else
                {
                    RdmaRig.sleepMicros(20);
                }
            }
            poller.join(TimeUnit.SECONDS.toMillis(160));
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertNull(pollerFailure.get());
            for (final MessageStream.Checker checker : checkers)
            {
                assertNull(checker.failure);
                assertEquals(MESSAGES, checker.received);
            }
            System.out.printf("rdma fan-out via Verbus agents: %,d messages x 3 subscriptions, shuffled, in %,d ms%n",
                MESSAGES, elapsedMs);
        }
    }

    private static long min(final MessageStream.Checker[] checkers)
    {
        long min = Long.MAX_VALUE;
        for (final MessageStream.Checker checker : checkers)
        {
            min = Math.min(min, checker.received);
        }
        return min;
    }
}
