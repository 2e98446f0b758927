package io.verbus.media.rdma;

import io.aeron.logbuffer.FragmentHandler;
import io.verbus.EventIdleStrategy;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Event-driven subscriptions ({@code rdma:...|idle=event}): a polling thread that found nothing blocks on its
 * connection's completion channel and is woken by the publisher's next WRITE_WITH_IMM.
 * <p>
 * The lost-wake-up check publishes one message at a time and waits for it before the next, so every message arrives
 * while the subscriber is somewhere between its empty poll, the arm and the wait. A wait that times out although a
 * message was offered before it began is a lost wake-up (the message was there and no event came): counted, and must
 * be 0. The soft providers produce a receive completion on the thread that polls or waits, except tcp's NIC thread,
 * which steps in for a QP no application thread progressed for 1 ms: so the poller sometimes pauses up to 2 ms between
 * its empty poll and the wait (as a user's loop doing other work would), and over tcp the completion then lands on the
 * CQ before the arm, the race a hardware NIC runs all the time. Without the look after the arm this test fails.
 */
@ExtendWith(RdmaTestProperties.class)
class RdmaEventIdleTest
{
    private static final int ROUNDS = 2_000;
    private static final long ROUND_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final long TEST_BUDGET_NS = TimeUnit.SECONDS.toNanos(120);

    @TempDir
    Path dir;

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    @Timeout(value = 240, unit = TimeUnit.SECONDS)
    void shouldWakeTheBlockedSubscriberForEveryMessageWithoutALostWakeUp(final String provider) throws Exception
    {
        try (Verbus verbus = launch())
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=64k|commit=auto", 4001);
            final Subscription subscription = verbus.addSubscription("rdma:endpoint=127.0.0.1:" +
                RdmaVerbusTest.controlPort(verbus.countersReader()) + "|provider=" + provider + "|idle=event", 4001);
            awaitConnected(publication, subscription);
            assertTrue(subscription.canAwaitData(), "an idle=event subscription with its image can wait");

            final AtomicLong offered = new AtomicLong();
            final AtomicLong received = new AtomicLong();
            final AtomicLong lostWakeUps = new AtomicLong();
            final AtomicLong waits = new AtomicLong();
            final AtomicReference<String> failure = new AtomicReference<>();
            final Thread poller = new Thread(() ->
            {
                final FragmentHandler handler = (buffer, offset, length, header) ->
                {
                    final long sequence = buffer.getLong(offset);
                    if (sequence != received.get())
                    {
                        failure.compareAndSet(null, "expected " + received.get() + " got " + sequence);
                    }
                    received.incrementAndGet();
                };
                while (received.get() < ROUNDS && null == failure.get() && !Thread.currentThread().isInterrupted())
                {
                    if (subscription.poll(handler, 10) > 0)
                    {
                        continue;
                    }
                    if (0 == (waits.incrementAndGet() & 3))
                    {
                        // The user's loop did other work between its empty poll and the idle strategy: long enough
                        // (past the tcp NIC's 1 ms grace) for the NIC thread to complete the next immediate on the CQ
                        // before the arm, which then fires no event: only the look after the arm can see it.
                        LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(0, 2_000_000));
                    }
                    final long offeredBeforeWait = offered.get();
                    final long receivedBeforeWait = received.get();
                    if (!subscription.awaitData(TimeUnit.SECONDS.toNanos(10)) &&
                        offeredBeforeWait > receivedBeforeWait)
                    {
                        lostWakeUps.incrementAndGet(); // a whole wait (250 ms) passed with an offered message there
                    }
                }
            }, "event-poller");
            poller.start();

            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
            final long deadlineNs = System.nanoTime() + TEST_BUDGET_NS;
            for (long sequence = 0; sequence < ROUNDS && null == failure.get(); sequence++)
            {
                message.putLong(0, sequence);
                while (publication.offer(message, 0, 32) < 0)
                {
                    assertTrue(System.nanoTime() < deadlineNs, "offer " + sequence);
                    LockSupport.parkNanos(10_000);
                }
                offered.set(sequence + 1);
                final long roundDeadlineNs = System.nanoTime() + ROUND_TIMEOUT_NS;
                while (received.get() <= sequence && null == failure.get())
                {
                    assertTrue(System.nanoTime() < roundDeadlineNs, "round " + sequence + " not delivered in 5 s");
                    Thread.onSpinWait();
                }
                // vary the phase: the next message lands before, during or after the subscriber's arm and wait
                LockSupport.parkNanos(ThreadLocalRandom.current().nextLong(0, 200_000));
            }
            poller.join(TimeUnit.SECONDS.toMillis(10));
            assertFalse(poller.isAlive(), "poller done");
            assertNull(failure.get());
            assertEquals(ROUNDS, received.get());
            assertEquals(0, lostWakeUps.get(), "waits that timed out with a message there (of " + waits.get() + ")");
            final long wakeUps = awaitCounter(verbus.countersReader(), RdmaCounters.WAKE_UPS_TYPE_ID, 1);
            assertTrue(wakeUps > 0 && wakeUps <= waits.get(), "wake-ups " + wakeUps + " of " + waits.get() + " waits");
        }
    }

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void shouldServeAPlainUserLoopWithTheEventIdleStrategyAndShowWakeUpsInStat() throws Exception
    {
        try (Verbus verbus = launch())
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|commit=imm", 4002);
            final Subscription subscription = verbus.addSubscription("rdma:endpoint=127.0.0.1:" +
                RdmaVerbusTest.controlPort(verbus.countersReader()) + "|provider=shm|idle=event|commit=imm", 4002);
            awaitConnected(publication, subscription);

            final int messages = 300;
            final AtomicLong received = new AtomicLong();
            final Thread poller = new Thread(() ->
            {
                final EventIdleStrategy idle = new EventIdleStrategy(subscription);
                final FragmentHandler handler = (buffer, offset, length, header) -> received.incrementAndGet();
                final long deadlineNs = System.nanoTime() + TEST_BUDGET_NS;
                while (received.get() < messages && System.nanoTime() < deadlineNs)
                {
                    idle.idle(subscription.poll(handler, 10));
                }
            }, "user-loop");
            poller.start();
            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
            final long deadlineNs = System.nanoTime() + TEST_BUDGET_NS;
            for (int i = 0; i < messages; i++)
            {
                // bursts of ten, then a pause long enough for the loop to spin out and block
                while (publication.offer(message, 0, 32) < 0)
                {
                    assertTrue(System.nanoTime() < deadlineNs, "offer " + i);
                    LockSupport.parkNanos(10_000);
                }
                if (9 == i % 10)
                {
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(2));
                }
            }
            poller.join(TimeUnit.SECONDS.toMillis(130));
            assertEquals(messages, received.get());
            assertTrue(awaitCounter(verbus.countersReader(), RdmaCounters.WAKE_UPS_TYPE_ID, 1) > 0, "it blocked");

            final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            final int status = io.verbus.tools.VerbusStat.run(
                new String[]{ "--dir", dir.resolve("verbus").toString(), "--once" },
                new java.io.PrintStream(out, true), new java.io.PrintStream(new java.io.ByteArrayOutputStream()));
            assertEquals(0, status);
            assertTrue(out.toString().contains("rdma wake-ups (idle=event)"), out.toString());
        }
    }

    @Test
    void shouldRefuseEventIdleWithoutImmediatesAndOnAPublication()
    {
        final IllegalArgumentException counter = assertThrows(IllegalArgumentException.class,
            () -> RdmaChannelParams.parse("rdma:endpoint=127.0.0.1:40123|idle=event|commit=counter"));
        assertTrue(counter.getMessage().contains("'idle=event' needs commit=imm"), counter.getMessage());
        final IllegalArgumentException auto = assertThrows(IllegalArgumentException.class,
            () -> RdmaChannelParams.parse("rdma:endpoint=127.0.0.1:40123|idle=event|commit=auto"));
        assertTrue(auto.getMessage().contains("commit=auto"), auto.getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> RdmaChannelParams.parse("rdma:endpoint=127.0.0.1:40123|idle=sleep"));
        assertEquals(CommitMode.IMM, RdmaChannelParams.parse("rdma:endpoint=127.0.0.1:40123|idle=event").commitMode());
        assertEquals(CommitMode.AUTO,
            RdmaChannelParams.parse("rdma:endpoint=127.0.0.1:40123|idle=poll").commitMode());

        try (Verbus verbus = launch())
        {
            final IllegalArgumentException publication = assertThrows(IllegalArgumentException.class,
                () -> verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm|idle=event", 4003));
            assertTrue(publication.getMessage().contains("subscription key"), publication.getMessage());
            final Subscription ipc = verbus.addSubscription("ipc", 4003);
            assertFalse(ipc.canAwaitData());
            assertFalse(ipc.awaitData(TimeUnit.SECONDS.toNanos(10)), "cannot wait: returns at once");
        }
    }

    private Verbus launch()
    {
        return Verbus.launch(new Verbus.Context().dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff"));
    }

    private static void awaitConnected(final ExclusivePublication publication, final Subscription subscription)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (!publication.isConnected() || 0 == subscription.imageCount())
        {
            assertTrue(System.nanoTime() < deadlineNs, "connected");
            RdmaRig.sleepMicros(1000);
        }
    }

    /** Counters are published on the receiver's housekeeping cadence: wait for one to reach {@code atLeast}. */
    private static long awaitCounter(final CountersReader counters, final int type, final long atLeast)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        long value;
        do
        {
            final long[] sum = { 0 };
            counters.forEach((counterId, typeId, keyBuffer, label) ->
            {
                if (type == typeId)
                {
                    sum[0] += counters.getCounterValue(counterId);
                }
            });
            value = sum[0];
            RdmaRig.sleepMicros(2000);
        }
        while (value < atLeast && System.nanoTime() < deadlineNs);
        return value;
    }
}
