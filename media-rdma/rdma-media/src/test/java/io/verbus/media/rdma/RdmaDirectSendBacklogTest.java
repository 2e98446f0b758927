package io.verbus.media.rdma;

import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
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
 * The publisher's clock stands still after the burst, so the only other way the data could leave, the agent's
 * takeover from a writer idle for {@code DirectSendHandOff.WRITER_IDLE_BEFORE_AGENT_NS}, never comes: before the
 * fix this test waited for that and failed; on a running clock it cost the burst's last messages 1-10 ms on tcp.
 */
@ExtendWith(RdmaTestProperties.class)
class RdmaDirectSendBacklogTest
{
    private static final int BURST_MESSAGES = 2_000;
    private static final int STREAM_ID = 3011;

    @TempDir
    Path dir;

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
    @ValueSource(strings = { "provider=tcp|queue-depth=16", "provider=shm|commit=imm|queue-depth=16" })
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

            // The burst, offered back to back without polling: the subscriber is behind and so is the NIC.
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(256);
            long sequence = 0;
            while (sequence < BURST_MESSAGES)
            {
                assertTrue(System.nanoTime() < deadlineNs, "the burst was offered");
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
            publisherClock.stop();

            // From here on the writer offers nothing: the application polls and runs its duty cycle only.
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            while (checker.received < BURST_MESSAGES && null == checker.failure)
            {
                assertTrue(System.nanoTime() < deadlineNs,
                    "the end of the burst never left: " + checker.received + " of " + BURST_MESSAGES + " arrived");
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

            assertNull(checker.failure);
            assertEquals(BURST_MESSAGES, checker.received);
        }
    }
}
