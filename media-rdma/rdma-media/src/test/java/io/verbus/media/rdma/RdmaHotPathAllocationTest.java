package io.verbus.media.rdma;

import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.fabric.FabricContext;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * After warm-up, the sender's and receiver's duty cycles (post, poll CQ, status, limits) and the direct-mode send
 * path allocate nothing; nor do an exclusive publication's offer, tryClaim/commit/abort and flush in direct mode.
 */
class RdmaHotPathAllocationTest
{
    @TempDir
    Path dir;

    @TempDir
    static Path fabricDir;

    /** Both commit modes: with imm the poll reaps the receive CQ and posts RECVs, the sender counts credits. */
    @ParameterizedTest
    @ValueSource(strings = { "counter", "imm" })
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldAllocateNothingOnTheDataPathAfterWarmUp(final String commit)
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        try (RdmaRig rig = new RdmaRig(dir, "shm", 1024 * 1024, null, "heartbeat", "1ms", "commit", commit))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            rig.awaitCondition("admitted", 20_000, () -> subscriber.image() != null && rig.log.isConnected());
            final RdmaSender sender = rig.sender;
            final RdmaReceiver receiver = subscriber.receiver;
            final TestImageSink.TestImage image = subscriber.image();
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final long[] sequence = { 0 };

            final Runnable cycle = () ->
            {
                for (int i = 0; i < 16; i++)
                {
                    final int length = MessageStream.encode(message, sequence[0]);
                    if (rig.appender.offer(message, 0, length) > 0)
                    {
                        sequence[0]++;
                    }
                }
                sender.sendNow(); // the direct-mode writer's send path
                sender.doWork();
                receiver.doWork();
                image.poll(checker, 64);
            };

            for (int i = 0; i < 60_000; i++)
            {
                cycle.run();
            }
            final long[] rounds = allocatedPerRound(threads, cycle, 6, 5_000);
            assertNull(checker.failure);
            assertTrue(checker.received > 30_000, "messages flowed: " + checker.received);
            assertEquals(0, Arrays.stream(rounds).min().orElseThrow(),
                "bytes allocated on the data path per round of 5,000 cycles: " + Arrays.toString(rounds));
        }
    }

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldAllocateNothingInDirectModeOnOfferClaimCommitAbortFlushAndPollAfterWarmUp()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final String previousSecret =
            System.setProperty(RdmaSecret.SECRET_PROP_NAME, "allocation-test-secret-0123456789");
        final String previousShmDir = System.setProperty(FabricContext.SHM_DIR_PROP_NAME, fabricDir.toString());
        // Invoker mode: the driver's agents run on this thread too, so everything measured is on one thread.
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.INVOKER).idleStrategy("sleeping")))
        {
            final ExclusivePublication publication =
                verbus.addExclusivePublication("rdma:endpoint=127.0.0.1:0|provider=shm|term-length=1m", 5001);
            final Subscription subscription = verbus.addSubscription(
                "rdma:endpoint=127.0.0.1:" + RdmaVerbusTest.controlPort(verbus.countersReader()) + "|provider=shm",
                5001);
            final long connectDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!publication.isConnected() || 0 == subscription.imageCount())
            {
                assertTrue(System.nanoTime() < connectDeadlineNs, "connected");
                verbus.invoke();
                RdmaRig.sleepMicros(100);
            }
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            final FragmentHandler handler = (buffer, offset, length, header) ->
            {
                view.wrap(buffer, offset, length);
                checker.onMessage(view, 0, length);
            };
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final BufferClaim claim = new BufferClaim();
            final long[] sequence = { 0 };
            final Runnable cycle = () ->
            {
                final long next = sequence[0];
                final int length = MessageStream.encode(message, next);
                final long result;
                if (0 == (next & 1))
                {
                    result = publication.offer(message, 0, length);
                }
                else if ((result = publication.tryClaim(length, claim)) > 0)
                {
                    claim.buffer().putBytes(claim.offset(), message, 0, length);
                    claim.commit();
                }
                if (result > 0)
                {
                    sequence[0]++;
                    if (0 == next % 7 && publication.tryClaim(48, claim) > 0)
                    {
                        claim.abort();
                    }
                }
                else
                {
                    publication.flush();
                }
                verbus.invoke();
                subscription.poll(handler, 64);
            };

            for (int i = 0; i < 100_000; i++)
            {
                cycle.run();
            }
            final long receivedBefore = checker.received;
            final long[] rounds = allocatedPerRound(threads, cycle, 5, 10_000);
            assertNull(checker.failure);
            assertTrue(checker.received - receivedBefore > 10_000, "messages flowed: " + checker.received);
            assertEquals(0, Arrays.stream(rounds).min().orElseThrow(),
                "bytes allocated by offer, claim, commit, abort, flush, invoke and poll per round of 10,000 cycles: " +
                Arrays.toString(rounds));
        }
        finally
        {
            restore(RdmaSecret.SECRET_PROP_NAME, previousSecret);
            restore(FabricContext.SHM_DIR_PROP_NAME, previousShmDir);
        }
    }

    /**
     * idle=event: the steady state of publish, poll and awaitData (arm, the look after the arm, a stale event taken
     * and acknowledged, and waits that time out) allocates nothing. One thread (invoker mode) drives everything, so
     * a woken wait here is a stale event left by the look after the arm, which takes the same path as a real one.
     */
    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldAllocateNothingOnTheEventIdlePathAfterWarmUp()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final String previousSecret =
            System.setProperty(RdmaSecret.SECRET_PROP_NAME, "allocation-test-secret-0123456789");
        final String previousShmDir = System.setProperty(FabricContext.SHM_DIR_PROP_NAME, fabricDir.toString());
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.INVOKER).idleStrategy("sleeping")))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=1m|commit=imm", 5002);
            final Subscription subscription = verbus.addSubscription("rdma:endpoint=127.0.0.1:" +
                RdmaVerbusTest.controlPort(verbus.countersReader()) + "|provider=shm|idle=event", 5002);
            final long connectDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!publication.isConnected() || 0 == subscription.imageCount())
            {
                assertTrue(System.nanoTime() < connectDeadlineNs, "connected");
                verbus.invoke();
                RdmaRig.sleepMicros(100);
            }
            assertTrue(subscription.canAwaitData());
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            final FragmentHandler handler = (buffer, offset, length, header) ->
            {
                view.wrap(buffer, offset, length);
                checker.onMessage(view, 0, length);
            };
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final long[] sequence = { 0 };
            final long[] cycles = { 0 };
            final long[] woken = { 0 };
            final Runnable cycle = () ->
            {
                if (0 != (++cycles[0] & 3))
                {
                    final int length = MessageStream.encode(message, sequence[0]);
                    if (publication.offer(message, 0, length) > 0)
                    {
                        sequence[0]++;
                    }
                }
                verbus.invoke();
                if (0 == subscription.poll(handler, 64))
                {
                    woken[0] += subscription.awaitData(20_000) ? 1 : 0;
                    subscription.poll(handler, 64);
                }
            };

            for (int i = 0; i < 20_000; i++)
            {
                cycle.run();
            }
            final long receivedBefore = checker.received;
            final long wokenBefore = woken[0];
            final long[] rounds = allocatedPerRound(threads, cycle, 5, 2_000);
            assertNull(checker.failure);
            assertTrue(checker.received - receivedBefore > 5_000, "messages flowed: " + checker.received);
            assertTrue(woken[0] - wokenBefore > 0, "waits returned true: " + woken[0]);
            assertEquals(0, Arrays.stream(rounds).min().orElseThrow(),
                "bytes allocated by offer, invoke, poll and awaitData per round of 2,000 cycles: " +
                Arrays.toString(rounds));
        }
        finally
        {
            restore(RdmaSecret.SECRET_PROP_NAME, previousSecret);
            restore(FabricContext.SHM_DIR_PROP_NAME, previousShmDir);
        }
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

    /**
     * Bytes this thread allocated in each of {@code rounds} rounds of {@code cyclesPerRound} cycles. The tests take
     * the smallest: a JIT deoptimisation (more likely when a test class runs alone in a fresh JVM) may materialise a
     * few objects once, in one round, while an allocation per message or per duty cycle shows in every round.
     */
    private static long[] allocatedPerRound(
        final com.sun.management.ThreadMXBean threads, final Runnable cycle, final int rounds, final int cyclesPerRound)
    {
        final long threadId = Thread.currentThread().threadId();
        final long[] allocated = new long[rounds];
        for (int round = 0; round < rounds; round++)
        {
            final long before = threads.getThreadAllocatedBytes(threadId);
            for (int i = 0; i < cyclesPerRound; i++)
            {
                cycle.run();
            }
            allocated[round] = threads.getThreadAllocatedBytes(threadId) - before;
        }
        return allocated;
    }
}
