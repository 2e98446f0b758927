package io.verbus.media.rdma;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application thread whose interrupt flag is set (an executor shutting down, a cancelled task) publishes and
 * polls as any other: the bus's data path must not treat the interrupt as its own. Found by a check of the default
 * threading mode: an exclusive publication on {@code provider=shm} sends from the writer's thread, and the first WRITE
 * to a subscriber maps its ring file there; the interrupted thread's {@code FileChannel} closed itself, the WRITE
 * failed with a remote access error and the subscriber was dropped at every reconnect, so 0 of 20,000 messages
 * arrived. Both ends run in the default {@code SHARED} mode; the thread that adds the publication and subscription
 * and then polls, and the publishing thread, are interrupted before their first call (the adds read the secret
 * file, open the shm device and create its files), and each must find its flag still set at the end.
 */
@ExtendWith(RdmaTestProperties.class)
class RdmaInterruptedThreadTest
{
    private static final int MESSAGES = 2_000;
    private static final int STREAM_ID = 3021;
    private static final long DEADLINE_NS = TimeUnit.SECONDS.toNanos(20);
    private static final int CLOSE_ROUNDS = 6;

    @TempDir
    Path dir;

    @AfterEach
    void clearInterrupt()
    {
        Thread.interrupted(); // JUnit runs the next test on this thread
    }

    @ParameterizedTest
    @CsvSource({
        "shm, exclusive-offer", "shm, exclusive-claim", "shm, concurrent-offer",
        "tcp, exclusive-offer", "tcp, exclusive-claim", "tcp, concurrent-offer" })
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldDeliverEveryMessageFromAndToInterruptedThreads(final String provider, final String kind)
        throws InterruptedException, IOException
    {
        try (Verbus publisherSide = Verbus.launch(new Verbus.Context().dir(dir.resolve("p").toString())
                .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff"));
            Verbus subscriberSide = Verbus.launch(new Verbus.Context().dir(dir.resolve("s").toString())
                .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff")))
        {
            // A secret file of this test's own: read as the channels are added, on the interrupted thread.
            final Path secretFile = Files.createFile(dir.resolve("secret"),
                PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
            Files.writeString(secretFile, "interrupted-thread-secret-" + provider + "-" + kind);
            final String keys = "|provider=" + provider + "|secret=required|secret-file=" + secretFile;
            final String channel = "rdma:endpoint=127.0.0.1:0|term-length=64k" + keys;
            Thread.currentThread().interrupt(); // the adds too: the secret, the shm device and the rings are files
            final Publication publication = kind.startsWith("exclusive") ?
                publisherSide.addExclusivePublication(channel, STREAM_ID) :
                publisherSide.addPublication(channel, STREAM_ID);
            final int port = RdmaVerbusTest.controlPort(publisherSide.countersReader());
            final Subscription subscription = subscriberSide.addSubscription(
                "rdma:endpoint=127.0.0.1:" + port + keys, STREAM_ID);
            final long deadlineNs = System.nanoTime() + DEADLINE_NS;
            while (!publication.isConnected() || 0 == subscription.imageCount())
            {
                assertTrue(System.nanoTime() < deadlineNs, "connected");
                Thread.onSpinWait(); // a park would return at once on this interrupted thread
            }

            final AtomicReference<Throwable> publisherFailure = new AtomicReference<>();
            final AtomicBoolean publisherStillInterrupted = new AtomicBoolean();
            final Thread publisher = new Thread(() ->
            {
                Thread.currentThread().interrupt();
                try
                {
                    publish(publication, kind.endsWith("claim"), deadlineNs);
                }
                catch (final Throwable ex)
                {
                    publisherFailure.set(ex);
                }
                publisherStillInterrupted.set(Thread.currentThread().isInterrupted());
            }, "interrupted-publisher");
            publisher.start();

            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            try
            {
                while (checker.received < MESSAGES && null == checker.failure && System.nanoTime() < deadlineNs)
                {
                    if (0 == subscription.poll((buffer, offset, length, header) ->
                    {
                        view.wrap(buffer, offset, length);
                        checker.onMessage(view, 0, length);
                    }, 64))
                    {
                        Thread.onSpinWait();
                    }
                }
                assertTrue(Thread.currentThread().isInterrupted(), "the polling thread's interrupt is kept");
            }
            finally
            {
                Thread.interrupted();
            }
            publisher.join(TimeUnit.NANOSECONDS.toMillis(DEADLINE_NS));

            assertNull(publisherFailure.get());
            assertTrue(publisherStillInterrupted.get(), "the publishing thread's interrupt is kept");
            assertNull(checker.failure);
            assertEquals(MESSAGES, checker.received, "every message, in order, intact");
            assertEquals(1, subscription.imageCount(), "the subscriber was never dropped");
            assertEquals(0, subscription.imageAtIndex(0).joinPosition(), "the image it has is the first one");
        }
    }

    private static void publish(final Publication publication, final boolean claim, final long deadlineNs)
    {
        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_LENGTH);
        final BufferClaim bufferClaim = new BufferClaim();
        long sequence = 0;
        while (sequence < MESSAGES)
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("offered " + sequence + " of " + MESSAGES);
            }
            final int length = MessageStream.encode(message, sequence);
            if (claim)
            {
                if (publication.tryClaim(length, bufferClaim) > 0)
                {
                    bufferClaim.buffer().putBytes(bufferClaim.offset(), message, 0, length);
                    bufferClaim.commit();
                    sequence++;
                }
            }
            else if (publication.offer(message, 0, length) > 0)
            {
                sequence++;
            }
        }
    }

    /**
     * A close on an interrupted thread waited for nothing: the control threads' joins returned at once, and the close
     * freed the shm device while a control thread still released its peers ({@code IllegalStateException: Already
     * closed} in that thread, 6 of 20 rounds). Each round closes both Verbus (every other round the subscription and
     * the publication first) on an interrupted thread; no thread may die of an uncaught exception.
     */
    @ParameterizedTest
    @CsvSource({ "shm", "tcp" })
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldCloseOnAnInterruptedThreadAfterTheControlThreadsAreDone(final String provider)
    {
        final List<Throwable> uncaught = new CopyOnWriteArrayList<>();
        final Thread.UncaughtExceptionHandler previous = Thread.getDefaultUncaughtExceptionHandler();
        Thread.setDefaultUncaughtExceptionHandler((thread, ex) -> uncaught.add(ex));
        try
        {
            for (int round = 0; round < CLOSE_ROUNDS; round++)
            {
                closeOnAnInterruptedThread(provider, round);
                assertTrue(Thread.interrupted(), "the closing thread's interrupt is kept");
            }
        }
        finally
        {
            Thread.setDefaultUncaughtExceptionHandler(previous);
        }
        assertEquals(List.of(), uncaught);
    }

    private void closeOnAnInterruptedThread(final String provider, final int round)
    {
        final Verbus publisherSide = Verbus.launch(new Verbus.Context().dir(dir.resolve("p" + round).toString())
            .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff"));
        final Verbus subscriberSide = Verbus.launch(new Verbus.Context().dir(dir.resolve("s" + round).toString())
            .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff"));
        final Publication publication = publisherSide.addExclusivePublication(
            "rdma:endpoint=127.0.0.1:0|term-length=64k|provider=" + provider, STREAM_ID);
        final Subscription subscription = subscriberSide.addSubscription("rdma:endpoint=127.0.0.1:" +
            RdmaVerbusTest.controlPort(publisherSide.countersReader()) + "|provider=" + provider, STREAM_ID);
        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_LENGTH);
        final long deadlineNs = System.nanoTime() + DEADLINE_NS;
        long received = 0;
        long sequence = 0;
        while (received < MESSAGES && System.nanoTime() < deadlineNs)
        {
            if (sequence < MESSAGES && publication.offer(message, 0, MessageStream.encode(message, sequence)) > 0)
            {
                sequence++;
            }
            received += subscription.poll((buffer, offset, length, header) -> {}, 64);
        }
        assertEquals(MESSAGES, received, "round " + round);

        Thread.currentThread().interrupt();
        if (0 == (round & 1))
        {
            subscription.close();
            publication.close();
        }
        subscriberSide.close();
        publisherSide.close();
    }
}
