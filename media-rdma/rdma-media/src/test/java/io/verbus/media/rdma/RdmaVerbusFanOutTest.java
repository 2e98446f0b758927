package io.verbus.media.rdma;

import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.fabric.FabricContext;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * The concurrent path: a publication and three subscriptions through the Verbus API, with the driver's own
 * sender and receiver agent threads, the publisher on the test thread and the subscribers polled on another,
 * and every WRITE's bytes shuffled: ten million sequence-numbered, checksummed messages of mixed sizes (16..1376
 * bytes) arrive at each subscription with none lost, duplicated, reordered or corrupt. This is issue 5's soak
 * through the real driver path; {@link RdmaSoakTest} is the deterministic single-thread protocol soak.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RdmaVerbusFanOutTest
{
    private static final long MESSAGES = 10_000_000;
    /** Bound on the whole run (it takes 20-60 s here); every loop below stops at it. */
    private static final long RUN_BOUND_S = 270;

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
    @Timeout(value = 330, unit = TimeUnit.SECONDS)
    void shouldFanOutTenMillionMessagesThroughTheDriverAgentsWithNoneLostDuplicatedReorderedOrCorrupt() throws Exception
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
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(RUN_BOUND_S);
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
                                checker.onMessage(view, 0, length);
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
            long payloadBytes = 0;
            int length = MessageStream.encode(message, 0);
            final long startNs = System.nanoTime();
            while (sequence < MESSAGES && System.nanoTime() < deadlineNs && null == pollerFailure.get())
            {
                if (publication.offer(message, 0, length) > 0)
                {
                    payloadBytes += length;
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
            poller.join(TimeUnit.SECONDS.toMillis(RUN_BOUND_S + 10));
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            assertNull(pollerFailure.get());
            assertEquals(MESSAGES, sequence, "the publisher stopped at the run bound");
            for (final MessageStream.Checker checker : checkers)
            {
                assertNull(checker.failure);
                assertEquals(MESSAGES, checker.received);
            }
            System.out.printf("rdma fan-out via Verbus agents (provider=shm, shuffled placement): %,d messages " +
                "(%,d bytes) x 3 subscriptions in %,d ms, %,d msgs/s per subscription%n",
                MESSAGES, payloadBytes, elapsedMs, MESSAGES * 1000 / Math.max(1, elapsedMs));
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
