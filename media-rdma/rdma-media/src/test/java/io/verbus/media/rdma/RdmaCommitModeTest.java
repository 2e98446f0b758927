package io.verbus.media.rdma;

import io.verbus.fabric.FaultInjection;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.logging.Handler;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The commit modes under the fault real fabrics with adaptive routing produce: one QP's WRITEs placed out of order
 * across WRITEs (a later WRITE's bytes visible before an earlier one's, completions and immediates still in order).
 * The subscriber is polled on its own thread while the test thread publishes and runs the duty cycles, so a poll can
 * fall inside the window the fault opens.
 * <ul>
 * <li>{@code commit=imm}: every message arrives intact (sequence, length and CRC32 checked), the fault having
 * placed WRITEs late many times;</li>
 * <li>{@code commit=counter}: the same fault makes the image read a position before its data, which shows as a
 * corrupt, lost or stale message (the test proves the fault bites, so the imm result means something);</li>
 * <li>the handshake refuses two ends that insist on different modes, with a clear reason on both sides;</li>
 * <li>{@code auto} picks imm where WRITEs are reordered, and the connection's self-test passes.</li>
 * </ul>
 * The in-suite imm run is {@value #DEFAULT_MESSAGES} messages; {@code -Dverbus.soak.commit.messages=10000000} runs the
 * 10M soak.
 */
class RdmaCommitModeTest
{
    private static final long DEFAULT_MESSAGES = 300_000;
    private static final String MESSAGES_PROP_NAME = "verbus.soak.commit.messages";
    /** Fraction of data WRITEs placed after the position WRITE that follows them, and how long they stay late. */
    private static final double CROSS_WRITE_FRACTION = 0.05;
    private static final long CROSS_WRITE_HOLD_NS = TimeUnit.MICROSECONDS.toNanos(100);

    @TempDir
    Path dir;

    private static FaultInjection crossWriteFault(final long seed)
    {
        return new FaultInjection().writePlacement(FaultInjection.WritePlacement.SHUFFLED)
            .crossWritePlacement(CROSS_WRITE_FRACTION, seed, CROSS_WRITE_HOLD_NS);
    }

    @Test
    @Tag("slow")
    @Timeout(value = 600, unit = TimeUnit.SECONDS)
    void shouldDeliverEveryMessageInImmModeWhileWritesArePlacedOutOfOrder() throws Exception
    {
        final long messages = Long.getLong(MESSAGES_PROP_NAME, DEFAULT_MESSAGES);
        final FaultInjection faults = crossWriteFault(42);
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, faults, "commit", "imm"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber(crossWriteFault(43), RdmaRig.SECRET);
            final Run run = run(rig, subscriber, messages, TimeUnit.SECONDS.toNanos(560), false);

            assertNull(run.failure, run.failure);
            assertEquals(messages, run.checker.received, "nothing lost");
            assertNull(run.checker.failure);
            assertTrue(faults.crossWriteReorders() > 0, "the fault placed no WRITE late");
            final ImageConnection connection = rig.subscribers.get(0).receiver.connections()[0];
            assertTrue(connection.bound instanceof ImmediateBound);
            assertTrue(connection.bound.immediates() > 0);
            assertEquals(1, rig.sender.subscriberCount(), "no subscriber was dropped");
            assertTrue(rig.support.errors.isEmpty(), rig.support.errors.toString());
            System.out.printf("rdma commit=imm: %,d messages over shm with %,d WRITEs placed after a later one, " +
                "%,d immediates reaped, in %,d ms%n", messages, faults.crossWriteReorders(),
                connection.bound.immediates(), TimeUnit.NANOSECONDS.toMillis(run.elapsedNs));
        }
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void shouldLetTheCounterModeReadAPositionBeforeItsDataUnderTheSameFault() throws Exception
    {
        final FaultInjection faults = crossWriteFault(42);
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, faults, "commit", "counter"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber(crossWriteFault(43), RdmaRig.SECRET);
            // Bounded by count and time; it stops at the first corrupt, lost or stale message.
            final Run run = run(rig, subscriber, 2_000_000, TimeUnit.SECONDS.toNanos(240), true);

            assertTrue(faults.crossWriteReorders() > 0, "the fault placed no WRITE late");
            assertNotNull(run.failure, "in " + run.checker.received + " messages with " +
                faults.crossWriteReorders() + " WRITEs placed late, counter mode never read a position before its " +
                "data: the fault does not bite, so the imm soak proves nothing");
            assertTrue(!run.failure.startsWith("stalled"), run.failure);
            System.out.printf("rdma commit=counter under cross-WRITE reordering: failed after %,d messages " +
                "(%,d WRITEs placed late): %s%n", run.checker.received, faults.crossWriteReorders(), run.failure);
        }
    }

    @Test
    void shouldRefuseTwoEndsThatInsistOnDifferentCommitModes() throws Exception
    {
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        final Logger logger = Logger.getLogger("io.verbus.media.rdma");
        final Handler handler = capture(records);
        logger.addHandler(handler);
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "commit", "imm", "timeout", "2s"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber("commit", "counter");
            final String expected = "COMMIT_MISMATCH: the publisher commits with commit=imm but this subscription " +
                "requires commit=counter";
            // Each side counts a rejection just before it logs it: wait for the lines too, not only the counters.
            rig.awaitCondition("both ends refuse and say why", 20_000,
                () -> subscriber.receiver.rejectedHandshakes() > 0 && rig.sender.rejectedHandshakes() > 0 &&
                records.stream().anyMatch(r -> r.getMessage().contains("handshake failed") &&
                    r.getMessage().contains(expected)) &&
                records.stream().anyMatch(r -> r.getMessage().contains("rejected handshake") &&
                    r.getMessage().contains("COMMIT_MISMATCH")));
            assertNull(subscriber.image(), "no image");
            assertEquals(0, rig.sender.subscriberCount());
            assertEquals(0, rig.sender.queuePairCount(), "nothing registered for it at the publisher");
            assertEquals(0, subscriber.receiver.queuePairCount(), "nothing left at the subscriber");

            // The same publication admits a subscriber that agrees, or leaves the choice to it.
            final RdmaRig.Subscriber agreeing = rig.addSubscriber("commit", "auto");
            rig.awaitCondition("an agreeing subscriber connects", 20_000, () -> null != agreeing.image());
            assertTrue(agreeing.receiver.connections()[0].bound instanceof ImmediateBound);
        }
        finally
        {
            logger.removeHandler(handler);
        }
    }

    @Test
    void shouldChooseImmUnderAutoWhereWritesAreReorderedAndPassTheSelfTest() throws Exception
    {
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        final Logger logger = Logger.getLogger("io.verbus.media.rdma");
        final Handler handler = capture(records);
        logger.addHandler(handler);
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, crossWriteFault(7), "commit", "auto"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber(crossWriteFault(8), RdmaRig.SECRET);
            final Run run = run(rig, subscriber, 20_000, TimeUnit.SECONDS.toNanos(120), false);
            assertNull(run.failure, run.failure);
            assertTrue(records.stream().anyMatch(r -> r.getMessage().contains("commit=auto chose imm (provider " +
                "shm has the cross-WRITE placement fault injected)")), "the publisher logs its choice and why");
            assertTrue(records.stream().anyMatch(r -> r.getMessage().contains("commit=imm self-test passed")));
            assertTrue(rig.subscribers.get(0).receiver.connections()[0].bound instanceof ImmediateBound);
        }
        finally
        {
            logger.removeHandler(handler);
        }
        // Without the fault, auto on shm keeps the counter mode.
        try (RdmaRig rig = new RdmaRig(dir.resolve("ordered"), "shm", 64 * 1024, null, "commit", "auto"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            rig.awaitCondition("connected", 20_000, () -> null != subscriber.image());
            assertTrue(subscriber.receiver.connections()[0].bound instanceof PositionBlockBound);
        }
    }

    @Test
    void shouldDeliverInImmModeOverTcp() throws Exception
    {
        try (RdmaRig rig = new RdmaRig(dir, "tcp", 64 * 1024, null, "commit", "imm"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            final Run run = run(rig, subscriber, 50_000, TimeUnit.SECONDS.toNanos(120), false);
            assertNull(run.failure, run.failure);
            assertEquals(50_000, run.checker.received);
            assertTrue(rig.subscribers.get(0).receiver.connections()[0].bound.immediates() > 0);
        }
    }

    @Test
    void shouldPostTheImmediateOnTheLastDataWriteSoAChainIsItsDataAlone() throws Exception
    {
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "commit", "imm"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            final SubscriberConnection connection = awaitAdmitted(rig, subscriber);
            final long wrsBefore = connection.wrsPosted;
            final long immediatesBefore = connection.immediateCommit.immediatesPosted;

            final int messages = 2_000;
            sendOneAtATime(rig, subscriber, messages);

            // With the immediate on a position-block WRITE after the data, as before, each chain was two WRs.
            final long chains = connection.immediateCommit.immediatesPosted - immediatesBefore;
            final long wrs = connection.wrsPosted - wrsBefore;
            assertEquals(messages, chains, "one immediate per message");
            assertTrue(wrs < chains * 5 / 4, wrs + " WRs for " + chains + " chains: the position block still " +
                "follows the data");
        }
    }

    @Test
    void shouldGiveTheCreditsBackBeforeAStreamOfSmallMessagesSpendsThem() throws Exception
    {
        // 15 receive credits; 2,000 messages, each received before the next is sent, take well under a second.
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "commit", "imm", "queue-depth", "16"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            final SubscriberConnection connection = awaitAdmitted(rig, subscriber);

            sendOneAtATime(rig, subscriber, 2_000);

            // When the status went out only per quarter window or per millisecond, the publisher ran out of credits
            // every 15 messages and each message after that waited for the next status (up to 1 ms).
            assertEquals(0, connection.immediateCommit.creditStalls, "chains that waited for credits");
        }
    }

    @Test
    void shouldAnnounceALateJoinerWhoseFirstImmediateRidesTheData() throws Exception
    {
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "commit", "imm"))
        {
            final RdmaRig.Subscriber first = rig.addSubscriber();
            awaitAdmitted(rig, first);
            sendOneAtATime(rig, first, 100);

            // The stream keeps flowing while the second subscriber joins: its first chain carries data, and the
            // immediate on that data WRITE is what its self-test sees.
            final MessageStream.Checker firstChecker = new MessageStream.Checker(100);
            final MessageStream.Checker lateChecker = new MessageStream.Checker(-1);
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final RdmaRig.Subscriber late = rig.addSubscriber();
            long sequence = 100;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (lateChecker.received < 1_000 && System.nanoTime() < deadlineNs)
            {
                final int length = MessageStream.encode(message, sequence);
                if (rig.appender.offer(message, 0, length) > 0)
                {
                    sequence++;
                }
                rig.dutyCycle();
                first.image().poll(firstChecker, 16);
                if (null != late.image())
                {
                    late.image().poll(lateChecker, 16);
                }
                assertNull(firstChecker.failure);
                assertNull(lateChecker.failure);
            }

            assertTrue(lateChecker.received >= 1_000, "the late joiner received " + lateChecker.received);
            final ImageConnection lateConnection = late.receiver.connections()[0];
            assertTrue(lateConnection.bound instanceof ImmediateBound);
            assertEquals(2, rig.sender.subscriberCount());
            assertTrue(rig.support.errors.isEmpty(), rig.support.errors.toString());
        }
    }

    private static SubscriberConnection awaitAdmitted(final RdmaRig rig, final RdmaRig.Subscriber subscriber)
    {
        rig.awaitCondition("subscriber admitted", 30_000,
            () -> rig.sender.subscriberCount() == 1 && null != subscriber.image() && rig.log.isConnected());
        return rig.sender.lastAdmittedConnection();
    }

    /** One message per chain: offer, then run the duty cycles and poll until it is delivered, checked. */
    private static void sendOneAtATime(final RdmaRig rig, final RdmaRig.Subscriber subscriber, final int messages)
    {
        final TestImageSink.TestImage image = subscriber.image();
        final MessageStream.Checker checker = new MessageStream.Checker(0);
        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
        for (int sequence = 0; sequence < messages; sequence++)
        {
            final int length = MessageStream.encode(message, sequence);
            rig.awaitCondition("offer accepted", 10_000, () -> rig.appender.offer(message, 0, length) > 0);
            final long expected = sequence + 1;
            rig.awaitCondition("message delivered", 10_000, () ->
            {
                image.poll(checker, 16);
                return checker.received == expected || null != checker.failure || null != image.error;
            });
            assertNull(checker.failure);
            assertNull(image.error);
        }
    }

    private static Handler capture(final List<LogRecord> records)
    {
        return new Handler()
        {
            public void publish(final LogRecord record)
            {
                records.add(record);
            }

            public void flush()
            {
            }

            public void close()
            {
            }
        };
    }

    private static final class Run
    {
        final MessageStream.Checker checker = new MessageStream.Checker(0);
        volatile String failure;
        long elapsedNs;
    }

    /**
     * Publish {@code messages} checked messages on the test thread (which also runs every duty cycle) while another
     * thread polls the subscriber's image; stop at the first failure, at the count, or at the time bound.
     *
     * @param spin poll without pausing when idle (to catch short reordering windows); else park 20 us.
     */
    private static Run run(final RdmaRig rig, final RdmaRig.Subscriber subscriber, final long messages,
        final long boundNs, final boolean spin) throws InterruptedException
    {
        awaitAdmitted(rig, subscriber);
        final TestImageSink.TestImage image = subscriber.image();
        final Run run = new Run();
        final long startNs = System.nanoTime();
        final long deadlineNs = startNs + boundNs;
        final AtomicBoolean done = new AtomicBoolean();
        final AtomicReference<Throwable> pollerError = new AtomicReference<>();
        final Thread poller = Thread.ofPlatform().name("commit-mode-poller").start(() ->
        {
            try
            {
                while (!done.get() && run.checker.received < messages && System.nanoTime() < deadlineNs)
                {
                    if (0 == image.poll(run.checker, 1024))
                    {
                        if (null != run.checker.failure || null != image.error)
                        {
                            run.failure = run.checker.failure + " / " + image.error;
                            return;
                        }
                        if (spin)
                        {
                            Thread.onSpinWait();
                        }
                        else
                        {
                            RdmaRig.sleepMicros(20);
                        }
                    }
                }
            }
            catch (final Throwable t)
            {
                pollerError.set(t);
            }
        });

        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
        long sequence = 0;
        int length = MessageStream.encode(message, 0);
        while (poller.isAlive() && System.nanoTime() < deadlineNs)
        {
            int work = 0;
            for (int burst = 0; burst < 256 && sequence < messages; burst++)
            {
                if (rig.appender.offer(message, 0, length) < 0)
                {
                    break;
                }
                work++;
                if (++sequence < messages)
                {
                    length = MessageStream.encode(message, sequence);
                }
            }
            work += rig.dutyCycle();
            if (0 == work)
            {
                RdmaRig.sleepMicros(20);
            }
        }
        done.set(true);
        poller.join(TimeUnit.SECONDS.toMillis(30));
        run.elapsedNs = System.nanoTime() - startNs;
        if (null != pollerError.get())
        {
            throw new AssertionError("poller failed", pollerError.get());
        }
        if (null == run.failure && run.checker.received < messages)
        {
            run.failure = "stalled: " + run.checker.received + " of " + messages + " received within the bound" +
                " (published " + sequence + ")";
        }
        return run;
    }
}
