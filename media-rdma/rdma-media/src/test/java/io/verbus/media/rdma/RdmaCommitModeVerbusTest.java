package io.verbus.media.rdma;

import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code commit=imm} through the Verbus API with an exclusive publication, so the writer's own thread posts the
 * WRITE_WITH_IMMs (direct mode) and reads the subscriber's status when it runs out of receive credit, while the
 * driver's agents run the rest; the subscription's poll reaps the immediates. Every message is checked, and the
 * counters say which mode ran and how many immediates were reaped.
 */
@ExtendWith(RdmaTestProperties.class)
class RdmaCommitModeVerbusTest
{
    private static final long MESSAGES = 200_000;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void shouldDeliverInImmModeFromAnExclusivePublicationsWriterThread()
    {
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff")))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|commit=imm|queue-depth=64", 3001);
            final int port = RdmaVerbusTest.controlPort(verbus.countersReader());
            final Subscription subscription =
                verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm|commit=auto", 3001);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
            while (!publication.isConnected() || 0 == subscription.imageCount())
            {
                assertTrue(System.nanoTime() < deadlineNs, "connected");
                RdmaRig.sleepMicros(1000);
            }

            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            long sequence = 0;
            int length = MessageStream.encode(message, 0);
            while (checker.received < MESSAGES && null == checker.failure && System.nanoTime() < deadlineNs)
            {
                int work = 0;
                for (int burst = 0; burst < 64 && sequence < MESSAGES; burst++)
                {
                    if (publication.offer(message, 0, length) < 0)
                    {
                        break;
                    }
                    work++;
                    if (++sequence < MESSAGES)
                    {
                        length = MessageStream.encode(message, sequence);
                    }
                }
                work += subscription.poll((buffer, offset, fragmentLength, header) ->
                {
                    view.wrap(buffer, offset, fragmentLength);
                    checker.onMessage(view, 0, fragmentLength);
                }, 256);
                if (0 == work)
                {
                    RdmaRig.sleepMicros(20);
                }
            }
            assertNull(checker.failure);
            assertEquals(MESSAGES, checker.received);

            final CountersReader counters = verbus.countersReader();
            assertEquals(2, sum(counters, RdmaCounters.COMMIT_MODE_TYPE_ID), "both ends of the connection say imm");
            final long[] immediates = { 0 };
            final long deadline2Ns = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (immediates[0] == 0 && System.nanoTime() < deadline2Ns)
            {
                immediates[0] = sum(counters, RdmaCounters.IMMEDIATES_TYPE_ID);
                RdmaRig.sleepMicros(2000); // counters are published on the housekeeping cadence
            }
            assertTrue(immediates[0] > 0, "immediates counted");
        }
    }

    private static long sum(final CountersReader counters, final int type)
    {
        final long[] sum = { 0 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (type == typeId)
            {
                sum[0] += counters.getCounterValue(counterId);
            }
        });
        return sum[0];
    }
}
