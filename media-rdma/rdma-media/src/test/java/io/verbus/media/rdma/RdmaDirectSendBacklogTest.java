package io.verbus.media.rdma;

import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.fabric.FabricContext;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The end of a burst in direct mode when the writer's own send could not post all of it: the send queue was full
 * (tcp with a 16-WR queue, the software NIC behind the writer) or the subscriber had no receive posted
 * ({@code commit=imm} on shm while the subscriber did not poll). The writer then stops offering and the application
 * only runs its duty cycle ({@code invoke()}), as a gateway between bursts does. Everything must arrive without
 * another offer: the sender agent takes over at once from a send that left data behind.
 * <p>
 * The publisher's clock stands still once connected, so the only other way the data could leave, the agent's
 * takeover from a writer idle for {@code DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS}, never comes: before the
 * fix this test waited for that and failed; on a running clock it cost the burst's last messages 1-10 ms on tcp.
 * On tcp the provider also holds a streaming poster's last frames back to coalesce them, until the QP is progressed:
 * the NIC thread's fallback for a QP nobody progresses is set to 10 s here, longer than the tail may take, so the
 * agent must progress it (it did not before {@code QueuePair.hasHeldSends()}: 1 ms later, when the writer counted as
 * idle).
 */
@ExtendWith(RdmaTestProperties.class)
class RdmaDirectSendBacklogTest
{
    private static final int BURST_MESSAGES = 2_000;
    /** Whether tcp holds a burst's last frames back depends on timing: several bursts make it near certain. */
    private static final int BURSTS = 6;
    private static final int STREAM_ID = 3011;
    private static final long TAIL_DEADLINE_NS = TimeUnit.SECONDS.toNanos(5);
    private static String previousFallbackGrace;

    @TempDir
    Path dir;

    @BeforeAll
    static void slowNicFallback()
    {
        previousFallbackGrace = System.setProperty(FabricContext.TCP_FALLBACK_GRACE_PROP_NAME,
            Long.toString(FabricContext.TCP_FALLBACK_GRACE_MAX_NS));
    }

    @AfterAll
    static void restoreNicFallback()
    {
        if (null == previousFallbackGrace)
        {
            System.clearProperty(FabricContext.TCP_FALLBACK_GRACE_PROP_NAME);
        }
        else
        {
            System.setProperty(FabricContext.TCP_FALLBACK_GRACE_PROP_NAME, previousFallbackGrace);
        }
    }

    /** The system clock until {@link #stop()}, then the instant it stopped at. */
    private static final class StoppableClock implements NanoClock
    {
        private volatile long stoppedAtNs = Long.MIN_VALUE;

        public long nanoTime()
        {
            final long stoppedAtNs = this.stoppedAtNs;
            return Long.MIN_VALUE == stoppedAtNs ? System.nanoTime() : stoppedAtNs;
        }

        void stop()
        {
            stoppedAtNs = System.nanoTime();
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {
        "provider=tcp", "provider=tcp|queue-depth=16", "provider=shm|commit=imm|queue-depth=16" })
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldSendTheEndOfABurstWithNoFurtherOfferWhileTheWriterIsStillActive(final String params)
    {
        final StoppableClock publisherClock = new StoppableClock();
        try (Verbus publisherSide = Verbus.launch(new Verbus.Context().dir(dir.resolve("p").toString())
                .threadingMode(ThreadingMode.INVOKER).idleStrategy("noop").nanoClock(publisherClock));
            Verbus subscriberSide = Verbus.launch(new Verbus.Context().dir(dir.resolve("s").toString())
                .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff")))
        {
            final ExclusivePublication publication = publisherSide.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|term-length=1m|" + params, STREAM_ID);
            final int port = RdmaVerbusTest.controlPort(publisherSide.countersReader());
            final Subscription subscription = subscriberSide.addSubscription(
                "rdma:endpoint=127.0.0.1:" + port + "|" + params, STREAM_ID);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!publication.isConnected() || 0 == subscription.imageCount())
            {
                assertTrue(System.nanoTime() < deadlineNs, "connected");
                publisherSide.invoke();
                RdmaRig.sleepMicros(200);
            }

            publisherClock.stop();
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(256);
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            long sequence = 0;
            for (int burst = 1; burst <= BURSTS; burst++)
            {
                // The burst, offered back to back without polling: the subscriber is behind and so is the NIC.
                final long burstEnd = (long)burst * BURST_MESSAGES;
                while (sequence < burstEnd)
                {
                    assertTrue(System.nanoTime() < deadlineNs, "burst " + burst + " was offered");
                    final int length = MessageStream.encode(message, sequence);
                    if (publication.offer(message, 0, length) > 0)
                    {
                        sequence++;
                    }
                    else
                    {
                        publisherSide.invoke();
                    }
                }
                awaitTail(publisherSide, subscription, checker, view, burst, burstEnd);
            }

            assertNull(checker.failure);
            assertEquals((long)BURSTS * BURST_MESSAGES, checker.received);
        }
    }

    /** From here on the writer offers nothing: the application polls and runs its duty cycle only. */
    private static void awaitTail(
        final Verbus publisherSide,
        final Subscription subscription,
        final MessageStream.Checker checker,
        final UnsafeBuffer view,
        final int burst,
        final long burstEnd)
    {
        final long tailDeadlineNs = System.nanoTime() + TAIL_DEADLINE_NS;
        while (checker.received < burstEnd && null == checker.failure)
        {
            assertTrue(System.nanoTime() < tailDeadlineNs, "the end of burst " + burst + " never left: " +
                checker.received + " of " + burstEnd + " arrived");
            final int fragments = subscription.poll((buffer, offset, fragmentLength, header) ->
            {
                view.wrap(buffer, offset, fragmentLength);
                checker.onMessage(view, 0, fragmentLength);
            }, 256);
            if (0 == publisherSide.invoke() + fragments)
            {
                Thread.onSpinWait();
            }
        }
    }
}
