package io.verbus.archive;

import io.aeron.FragmentAssembler;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Late join without loss: a subscriber started after half the messages with {@code join=archive} receives every
 * message exactly once, in order, catching up from the archive and merging into the live image while the publisher
 * keeps publishing. CI size by default; {@code -Dverbus.archive.test.messages=1000000} for the million.
 */
@Timeout(value = 900, unit = TimeUnit.SECONDS)
class LateJoinTest
{
    private static final long MESSAGES = Long.getLong(RecordRdmaCrossProcessTest.MESSAGES_PROP_NAME, 100_000);

    @TempDir
    Path dir;

    @Test
    void shouldDeliverEveryMessageOnceInOrderToALateJoinerOfAnRdmaStreamFromAnotherProcess() throws Exception
    {
        // Paced so that the stream is still live when the late joiner has caught up: the merge happens mid-stream.
        final long messagesPerSecond = Math.max(20_000, MESSAGES / 5);
        try (RdmaTestSupport rdma = new RdmaTestSupport(dir.resolve("fabric"));
            ChildProcess publisher = ChildProcess.start(StreamPublisherMain.class, rdma.childProperties(),
                dir.resolve("publisher").toString(), "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=256k",
                Integer.toString(STREAM_ID), Long.toString(MESSAGES), Long.toString(messagesPerSecond)))
        {
            final String[] hello = publisher.awaitLine("PORT", 60_000).split(" ");
            final String channel = "rdma:endpoint=127.0.0.1:" + hello[1] + "|provider=shm";
            final int sessionId = Integer.parseInt(hello[3]);

            try (Verbus verbus = Verbus.launch(TestSupport.context(dir).idleStrategy("backoff"));
                VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
                    .verbus(verbus).channel(channel).streamId(STREAM_ID)
                    .archive(ArchiveTestSupport.embeddedArchive(dir))))
            {
                TestSupport.await("recorder connected", () -> 1 == recorder.subscription().imageCount());
                publisher.send("GO");
                publisher.awaitLine("AT " + MESSAGES / 2, 120_000);

                final long joinedAtNs = System.nanoTime();
                final Subscription subscription = LateJoinSubscription.addSubscription(
                    verbus, recorder.connection(), channel + "|join=archive", STREAM_ID);
                final LateJoinSubscription lateJoiner = assertInstanceOf(LateJoinSubscription.class, subscription);
                assertEquals(sessionId, lateJoiner.sessionId());
                assertEquals(channel, lateJoiner.channel(), "the join keys are not part of the live channel");

                final MessageStream.Checker checker = new MessageStream.Checker(0, RARELY_FRAGMENTED);
                final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
                    checker.onMessage(buffer, offset, length));
                final AtomicLong mergedAtMessage = new AtomicLong(-1);
                final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(600);
                while (checker.received < MESSAGES && null == checker.failure && System.nanoTime() < deadlineNs)
                {
                    if (0 == lateJoiner.poll(assembler, 256))
                    {
                        Thread.yield();
                    }
                    if (lateJoiner.isMerged() && mergedAtMessage.get() < 0)
                    {
                        mergedAtMessage.set(checker.received);
                    }
                }
                final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - joinedAtNs);
                assertNull(checker.failure);
                assertEquals(MESSAGES, checker.received, lateJoiner.toString());
                assertTrue(lateJoiner.isMerged(), lateJoiner.toString());
                assertTrue(lateJoiner.gaps().isEmpty(), lateJoiner.gaps().toString());
                final String[] published = publisher.awaitLine("PUBLISHED", 120_000).split(" ");
                final long endPosition = Long.parseLong(published[3]);
                assertEquals(endPosition, lateJoiner.position());
                assertTrue(lateJoiner.liveJoinPosition() > 0 && lateJoiner.liveJoinPosition() < endPosition,
                    "merged into the live image mid-stream: " + lateJoiner);
                System.out.println("late join: joined after " + MESSAGES / 2 + " of " + MESSAGES + " messages, " +
                    "merged into live at position " + lateJoiner.liveJoinPosition() + " (message " +
                    mergedAtMessage.get() + "), all " + MESSAGES + " received once in order in " + elapsedMs + " ms");
                lateJoiner.close();
            }
            publisher.send("DONE");
        }
    }

    @Test
    void shouldJoinAnIpcStreamLateFromAGivenPositionAndMergeIntoLive()
    {
        final int messages = 20_000;
        try (Verbus verbus = Verbus.launch(TestSupport.context(dir));
            VerbusRecorder recorder = ArchiveTestSupport.ipcRecorder(verbus, dir))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
            TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
            long sequence = 0;
            long positionOfMessage1000 = -1;
            while (sequence < messages / 2)
            {
                final long result =
                    publication.offer(message, 0, MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED));
                if (result > 0)
                {
                    sequence++;
                    if (1000 == sequence)
                    {
                        positionOfMessage1000 = result;
                    }
                }
            }

            final LateJoinSubscription lateJoiner = LateJoinSubscription.join(new LateJoinSubscription.Context()
                .verbus(verbus).connection(recorder.connection()).channel("ipc").streamId(STREAM_ID)
                .fromPosition(positionOfMessage1000));
            final MessageStream.Checker checker = new MessageStream.Checker(1000, RARELY_FRAGMENTED);
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
                checker.onMessage(buffer, offset, length));
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (checker.received < messages - 1000 && null == checker.failure && System.nanoTime() < deadlineNs)
            {
                if (sequence < messages &&
                    publication.offer(message, 0, MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED)) > 0)
                {
                    sequence++;
                }
                lateJoiner.poll(assembler, 64);
            }
            assertNull(checker.failure);
            assertEquals(messages - 1000, checker.received, lateJoiner.toString());
            assertTrue(lateJoiner.isMerged());
            assertEquals(publication.position(), lateJoiner.position());
            assertTrue(lateJoiner.gaps().isEmpty());
            lateJoiner.close();
        }
    }
}
