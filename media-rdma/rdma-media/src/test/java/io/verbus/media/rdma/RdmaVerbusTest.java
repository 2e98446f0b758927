package io.verbus.media.rdma;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.counters.CounterTypes;
import io.verbus.log.FrameWriter;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Publications and subscriptions on {@code rdma:} channels through the public Verbus API. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaVerbusTest
{
    @TempDir
    static Path fabricDir;

    @TempDir
    Path dir;

    private static String previousSecret;
    private static String previousShmDir;

    @BeforeAll
    static void configure()
    {
        previousSecret = System.setProperty(RdmaSecret.SECRET_PROP_NAME, "verbus-api-test-secret-0123456789");
        previousShmDir = System.setProperty(io.verbus.fabric.FabricContext.SHM_DIR_PROP_NAME, fabricDir.toString());
    }

    @AfterAll
    static void restore()
    {
        restore(RdmaSecret.SECRET_PROP_NAME, previousSecret);
        restore(io.verbus.fabric.FabricContext.SHM_DIR_PROP_NAME, previousShmDir);
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

    private Verbus launch()
    {
        return Verbus.launch(new Verbus.Context()
            .dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping"));
    }

    static int controlPort(final CountersReader counters)
    {
        final int[] port = { -1 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (RdmaCounters.CONTROL_PORT_TYPE_ID == typeId)
            {
                port[0] = (int)counters.getCounterValue(counterId);
            }
        });
        return port[0];
    }

    @Test
    void shouldDeliverThroughTheVerbusApiAndShowRdmaCounters()
    {
        try (Verbus verbus = launch())
        {
            final Publication publication =
                verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", 2001);
            final int port = controlPort(verbus.countersReader());
            assertTrue(port > 0, "the control port is visible as a counter");
            final Subscription subscription =
                verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 2001);

            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long sequence = 0;
            final long total = 20_000;
            while (checker.received < total)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("stuck at " + sequence + " / received " + checker.received);
                }
                int work = 0;
                if (sequence < total)
                {
                    final int length = MessageStream.encode(message, sequence);
                    if (publication.offer(message, 0, length) > 0)
                    {
                        sequence++;
                        work++;
                    }
                }
                work += subscription.poll((buffer, offset, length, header) ->
                {
                    view.wrap(buffer, offset, length);
                    checker.onMessage(view, 0, length);
                }, 100);
                if (0 == work)
                {
                    RdmaRig.sleepMicros(100);
                }
            }
            assertNull(checker.failure);
            assertTrue(publication.isConnected());

            final List<Integer> types = new ArrayList<>();
            verbus.countersReader().forEach((counterId, typeId, keyBuffer, label) -> types.add(typeId));
            for (final int type : new int[]{ RdmaCounters.BYTES_POSTED_TYPE_ID, RdmaCounters.WRS_POSTED_TYPE_ID,
                RdmaCounters.INLINE_WRS_TYPE_ID, RdmaCounters.SIGNALED_WRS_TYPE_ID,
                RdmaCounters.COMPLETION_ERRORS_TYPE_ID, RdmaCounters.QP_STATE_TYPE_ID,
                RdmaCounters.SUBSCRIBER_LAG_TYPE_ID, RdmaCounters.COMMIT_MODE_TYPE_ID, RdmaCounters.IMMEDIATES_TYPE_ID,
                RdmaCounters.RECEIVE_CREDIT_STALLS_TYPE_ID })
            {
                assertTrue(types.contains(type), "counter type " + type + " (" + CounterTypes.typeName(type) +
                    ") is allocated");
            }

            // And ./verbus stat shows them.
            final java.io.ByteArrayOutputStream out = new java.io.ByteArrayOutputStream();
            final int status = io.verbus.tools.VerbusStat.run(
                new String[]{ "--dir", dir.resolve("verbus").toString(), "--once" },
                new java.io.PrintStream(out, true), new java.io.PrintStream(new java.io.ByteArrayOutputStream()));
            final String stat = out.toString();
            assertEquals(0, status, stat);
            for (final String label : new String[]{ "rdma bytes posted", "rdma WRs posted", "rdma inline WRs",
                "rdma signaled WRs", "rdma completion errors", "rdma QP state", "rdma subscriber lag",
                "rdma control port", "rdma commit mode (0 counter, 1 imm)", "rdma immediate completions",
                "rdma receive credit stalls" })
            {
                assertTrue(stat.contains(label), label + " missing from:\n" + stat);
            }
        }
    }

    /** Offers then polls until {@code checker} has seen {@code upTo}, recording where each message's offer began. */
    private static void pump(final Publication publication, final Subscription subscription,
        final MessageStream.Checker checker, final long from, final long upTo, final long[] startPositions)
    {
        pump(publication, new Subscription[]{ subscription }, new MessageStream.Checker[]{ checker }, from, upTo,
            startPositions);
    }

    private static void pump(final Publication publication, final Subscription[] subscriptions,
        final MessageStream.Checker[] checkers, final long from, final long upTo, final long[] startPositions)
    {
        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
        final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long sequence = from;
        while (java.util.Arrays.stream(checkers).anyMatch(c -> c.expected < upTo && null == c.failure))
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("stuck at " + sequence);
            }
            int work = 0;
            if (sequence < upTo)
            {
                final int length = MessageStream.encode(message, sequence);
                final long before = publication.position();
                if (publication.offer(message, 0, length) > 0)
                {
                    startPositions[(int)sequence++] = before;
                    work++;
                }
            }
            for (int i = 0; i < subscriptions.length; i++)
            {
                final MessageStream.Checker checker = checkers[i];
                work += subscriptions[i].poll((buffer, offset, length, header) ->
                {
                    view.wrap(buffer, offset, length);
                    checker.onMessage(view, 0, length);
                }, 100);
            }
            if (0 == work)
            {
                RdmaRig.sleepMicros(100);
            }
        }
    }

    @Test
    void shouldCatchUpARecentJoinerByReadOverTcpThroughTheVerbusApi()
    {
        try (Verbus verbus = launch())
        {
            final int messages = 5_000;
            final long[] startPositions = new long[2 * messages];
            final Publication publication =
                verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=tcp|term-length=64k", 2301);
            final String endpoint = "rdma:endpoint=127.0.0.1:" + controlPort(verbus.countersReader()) + "|provider=tcp";
            final Subscription live = verbus.addSubscription(endpoint, 2301);
            final MessageStream.Checker liveChecker = new MessageStream.Checker(0);
            pump(publication, live, liveChecker, 0, messages, startPositions);

            int first = messages - 1;
            while (startPositions[first - 1] >= publication.position() - 16 * 1024)
            {
                first--;
            }
            final Subscription late = verbus.addSubscription(
                endpoint + "|join=recent|join-position=" + startPositions[first], 2301);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (late.hasNoImages())
            {
                assertTrue(System.nanoTime() < deadlineNs, "the late joiner never got an image");
                RdmaRig.sleepMicros(1000);
            }
            assertEquals(startPositions[first], late.imageAtIndex(0).joinPosition(), "the image starts in the past");

            final MessageStream.Checker lateChecker = new MessageStream.Checker(first);
            pump(publication, new Subscription[]{ live, late },
                new MessageStream.Checker[]{ liveChecker, lateChecker }, messages, 2 * messages, startPositions);
            assertNull(lateChecker.failure);
            assertNull(liveChecker.failure);
            assertEquals(2L * messages - first, lateChecker.received, "every message from the requested one, once");
            final CountersReader counters = verbus.countersReader();
            final long[] caughtUp = { -1 };
            counters.forEach((counterId, typeId, keyBuffer, label) ->
            {
                if (RdmaCounters.CATCH_UP_BYTES_TYPE_ID == typeId)
                {
                    caughtUp[0] = counters.getCounterValue(counterId);
                }
            });
            assertTrue(caughtUp[0] > 0 && caughtUp[0] <= 64 * 1024, "rdma catch-up bytes counter: " + caughtUp[0]);
        }
    }

    @Test
    void shouldGiveAHandshakeTheTimeoutOfThePublicationItIsForOnASharedEndpoint() throws Exception
    {
        try (Verbus verbus = launch())
        {
            // The endpoint is opened by a publication with a 200 ms timeout (a handshake budget of 800 ms); the second
            // stream's channel gives 3 s per step. A subscriber of the second stream that takes over a second to send
            // its CONNECT is within its publication's timeout and must not be cut off by the first's.
            verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm|timeout=200ms", 2111);
            final int port = controlPort(verbus.countersReader());
            verbus.addPublication("rdma:endpoint=127.0.0.1:" + port + "|provider=shm|timeout=3s", 2112);

            try (java.net.Socket socket = new java.net.Socket("127.0.0.1", port))
            {
                final org.agrona.ExpandableArrayBuffer buffer = new org.agrona.ExpandableArrayBuffer(128);
                new io.verbus.media.rdma.protocol.HelloFlyweight().wrap(buffer, 0).writeHeader()
                    .minVersion(io.verbus.media.rdma.protocol.HandshakeHeader.VERSION)
                    .maxVersion(io.verbus.media.rdma.protocol.HandshakeHeader.VERSION)
                    .streamId(2112).flags(0).groupTag(0).clientNonce(new byte[32]);
                final byte[] hello = new byte[io.verbus.media.rdma.protocol.HelloFlyweight.LENGTH];
                buffer.getBytes(0, hello);
                socket.getOutputStream().write(hello);
                socket.setSoTimeout(5_000);
                final java.io.InputStream in = socket.getInputStream();
                final byte[] header = in.readNBytes(io.verbus.media.rdma.protocol.HandshakeHeader.LENGTH);
                assertEquals(io.verbus.media.rdma.protocol.HandshakeHeader.CHALLENGE_TYPE,
                    io.verbus.media.rdma.protocol.HandshakeHeader.type(new UnsafeBuffer(header), 0));
                final int length = new UnsafeBuffer(header).getInt(
                    io.verbus.media.rdma.protocol.HandshakeHeader.LENGTH_OFFSET, java.nio.ByteOrder.LITTLE_ENDIAN);
                in.readNBytes(length - header.length);

                socket.setSoTimeout(1_500);
                assertThrows(java.net.SocketTimeoutException.class, in::read,
                    "the connection is still open 1.5 s into its 3 s step (the endpoint's 800 ms did not apply)");
            }
        }
    }

    @Test
    void shouldCarrySeveralStreamsOnOneEndpoint()
    {
        try (Verbus verbus = launch())
        {
            final Publication first = verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm", 2101);
            final int port = controlPort(verbus.countersReader());
            final String endpoint = "rdma:endpoint=127.0.0.1:" + port + "|provider=shm";
            final Publication second = verbus.addPublication(endpoint, 2102);
            // As in Aeron, a concurrent publication of the same channel and stream shares the first's log; another
            // log on the endpoint's stream (an exclusive publication, or a channel written otherwise) is refused.
            final Publication sharing = verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm", 2101);
            assertEquals(first.sessionId(), sharing.sessionId(), "one log for both concurrent publications");
            assertEquals(first.registrationId(), sharing.originalRegistrationId());
            sharing.close();
            assertTrue(!first.isClosed(), "the log stays with the first");
            final IllegalArgumentException duplicate =
                assertThrows(IllegalArgumentException.class, () -> verbus.addExclusivePublication(endpoint, 2101));
            assertTrue(duplicate.getMessage().contains("already carries a publication on stream 2101"),
                duplicate.getMessage());

            final Subscription firstSubscription = verbus.addSubscription(endpoint, 2101);
            final Subscription secondSubscription = verbus.addSubscription(endpoint, 2102);
            final UnsafeBuffer payload = new UnsafeBuffer(new byte[8]);
            final long[] received = new long[2];
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            final long[] sent = new long[2];
            while (received[0] < 1_000 || received[1] < 1_000)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("received " + received[0] + " / " + received[1]);
                }
                int work = 0;
                if (sent[0] < 1_000)
                {
                    payload.putLong(0, 2101);
                    if (first.offer(payload, 0, 8) > 0)
                    {
                        sent[0]++;
                        work++;
                    }
                }
                if (sent[1] < 1_000)
                {
                    payload.putLong(0, 2102);
                    if (second.offer(payload, 0, 8) > 0)
                    {
                        sent[1]++;
                        work++;
                    }
                }
                work += firstSubscription.poll((buffer, offset, length, header) ->
                {
                    assertEquals(2101, buffer.getLong(offset), "stream 2101 gets only its own messages");
                    received[0]++;
                }, 100);
                work += secondSubscription.poll((buffer, offset, length, header) ->
                {
                    assertEquals(2102, buffer.getLong(offset), "stream 2102 gets only its own messages");
                    received[1]++;
                }, 100);
                if (0 == work)
                {
                    RdmaRig.sleepMicros(100);
                }
            }
            assertEquals(1_000, received[0]);
            assertEquals(1_000, received[1]);
        }
    }

    @Test
    void shouldFailClearlyWhenTheEndpointIsTakenAndLeaveNoCounters() throws Exception
    {
        try (Verbus verbus = launch();
            java.net.ServerSocket squatter = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress()))
        {
            final RuntimeException ex = assertThrows(RuntimeException.class, () -> verbus.addPublication(
                "rdma:endpoint=127.0.0.1:" + squatter.getLocalPort() + "|provider=shm", 2201));
            assertTrue(ex.getMessage().contains("cannot listen on endpoint 127.0.0.1:" + squatter.getLocalPort()),
                ex.getMessage());
            final List<Integer> types = new ArrayList<>();
            verbus.countersReader().forEach((counterId, typeId, keyBuffer, label) -> types.add(typeId));
            assertTrue(types.stream().noneMatch(t -> t >= RdmaCounters.BYTES_POSTED_TYPE_ID &&
                t <= RdmaCounters.LAST_TYPE_ID), "no rdma counter left behind: " + types);
        }
    }

    @Test
    void shouldRejectBadRdmaChannelsNamingTheParameter()
    {
        try (Verbus verbus = launch())
        {
            final IllegalArgumentException fc = assertThrows(IllegalArgumentException.class,
                () -> verbus.addPublication("rdma:endpoint=127.0.0.1:0|fc=fastest", 1));
            assertTrue(fc.getMessage().contains("'fc'"), fc.getMessage());
            final IllegalArgumentException unknown = assertThrows(IllegalArgumentException.class,
                () -> verbus.addSubscription("rdma:endpoint=127.0.0.1:1|colour=blue", 1));
            assertTrue(unknown.getMessage().contains("colour"), unknown.getMessage());
            final IllegalArgumentException endpoint = assertThrows(IllegalArgumentException.class,
                () -> verbus.addSubscription("rdma:provider=shm", 1));
            assertTrue(endpoint.getMessage().contains("'endpoint'"), endpoint.getMessage());
        }
    }

    @Test
    void shouldSendFromTheWriterThreadForAnExclusivePublication()
    {
        try (Verbus verbus = launch())
        {
            final var publication =
                verbus.addExclusivePublication("rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", 2002);
            final int port = controlPort(verbus.countersReader());
            final Subscription subscription =
                verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 2002);
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            long sequence = 0;
            while (checker.received < 5_000)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("stuck at " + sequence + " / received " + checker.received);
                }
                int work = 0;
                if (sequence < 5_000)
                {
                    final int length = MessageStream.encode(message, sequence);
                    if (publication.offer(message, 0, length) > 0)
                    {
                        sequence++;
                        work++;
                    }
                }
                work += subscription.poll((buffer, offset, length, header) ->
                {
                    view.wrap(buffer, offset, length);
                    checker.onMessage(view, 0, length);
                }, 100);
                if (0 == work)
                {
                    RdmaRig.sleepMicros(100);
                }
            }
            assertNull(checker.failure);
            assertEquals(5_000, checker.received);
        }
    }

    @Test
    void shouldKeepAnIdleDirectModePublicationConnectedWithoutAnyCallFromTheWriter()
    {
        try (Verbus verbus = launch())
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|heartbeat=20ms|timeout=200ms", 2003);
            final int port = controlPort(verbus.countersReader());
            final AtomicInteger available = new AtomicInteger();
            final AtomicInteger unavailable = new AtomicInteger();
            final Subscription[] subscriptions = new Subscription[2];
            final MessageStream.Checker[] checkers = new MessageStream.Checker[2];
            for (int i = 0; i < 2; i++)
            {
                subscriptions[i] = verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm",
                    2003, image -> available.incrementAndGet(), image -> unavailable.incrementAndGet());
                checkers[i] = new MessageStream.Checker(0);
            }

            // Subscribers are admitted with no offer at all: the sender agent drives the idle writer's media.
            final long connectDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!publication.isConnected() || available.get() < 2)
            {
                assertTrue(System.nanoTime() < connectDeadlineNs, "subscribers not admitted while the writer is idle");
                RdmaRig.sleepMicros(1000);
            }
            final Set<String> connectionsBefore = publisherConnections(verbus.countersReader(), 2003);
            assertEquals(2, connectionsBefore.size(), connectionsBefore.toString());

            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            offerAndReceive(publication, message, 0, 1_000, subscriptions, checkers);

            // Idle for five timeouts with no call on the publication (no offer, no flush): only subscribers poll.
            final long idleUntilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1_000);
            while (System.nanoTime() < idleUntilNs)
            {
                pollAll(subscriptions, checkers);
                RdmaRig.sleepMicros(2000);
            }
            assertTrue(publication.isConnected(), "the idle publication kept its subscribers");
            assertEquals(0, unavailable.get(), "no image went unavailable while the writer was idle");

            offerAndReceive(publication, message, 1_000, 2_000, subscriptions, checkers);

            // A committed claim with no flush is sent by its commit (or, without the commit signal, by the agent).
            final BufferClaim claim = new BufferClaim();
            final int length = MessageStream.encode(message, 2_000);
            final long claimDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (publication.tryClaim(length, claim) <= 0)
            {
                assertTrue(System.nanoTime() < claimDeadlineNs, "tryClaim never succeeded");
                RdmaRig.sleepMicros(100);
            }
            claim.buffer().putBytes(claim.offset(), message, 0, length);
            claim.commit();
            final long deliverDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (checkers[0].received < 2_001 || checkers[1].received < 2_001)
            {
                assertTrue(System.nanoTime() < deliverDeadlineNs, "the committed claim was never sent");
                if (0 == pollAll(subscriptions, checkers))
                {
                    RdmaRig.sleepMicros(500);
                }
            }

            for (final MessageStream.Checker checker : checkers)
            {
                assertNull(checker.failure);
                assertEquals(2_001, checker.received);
            }
            assertEquals(2, available.get(), "no reconnect: each subscriber saw its one image only");
            assertEquals(0, unavailable.get());
            assertEquals(connectionsBefore, publisherConnections(verbus.countersReader(), 2003),
                "the publisher still serves the two original connections, with their original QPs and rkeys");
            assertTrue(publication.isConnected());
        }
    }

    @Test
    void shouldSendAClaimCommittedJustAfterCloseBeforeTheEndOfStream() throws Exception
    {
        for (final boolean exclusive : new boolean[]{ true, false })
        {
            try (Verbus verbus = launch())
            {
                final int streamId = exclusive ? 2011 : 2012;
                final String channel = "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k";
                final Publication publication = exclusive ? verbus.addExclusivePublication(channel, streamId) :
                    verbus.addPublication(channel, streamId);
                final int port = controlPort(verbus.countersReader());
                final Subscription subscription =
                    verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", streamId);
                awaitTrue("connected", () -> publication.isConnected() && 1 == subscription.imageCount());

                final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
                final MessageStream.Checker checker = new MessageStream.Checker(0);
                final UnsafeBuffer view = new UnsafeBuffer(0, 0);
                final io.aeron.logbuffer.FragmentHandler handler = (buffer, offset, length, header) ->
                {
                    view.wrap(buffer, offset, length);
                    checker.onMessage(view, 0, length);
                };
                for (int i = 0; i < 10; i++)
                {
                    final int length = MessageStream.encode(message, i);
                    awaitTrue("offered", () -> publication.offer(message, 0, length) > 0);
                }
                awaitTrue("ten received", () ->
                {
                    subscription.poll(handler, 10);
                    return 10 == checker.received;
                });

                final BufferClaim claim = new BufferClaim();
                final int length = MessageStream.encode(message, 10);
                awaitTrue("claimed", () -> publication.tryClaim(length, claim) > 0);
                claim.buffer().putBytes(claim.offset(), message, 0, length);
                final io.verbus.Image image = subscription.imageAtIndex(0);
                publication.close();
                // The driver's thread takes the close meanwhile; the claim is committed well after it did.
                Thread.sleep(100);
                claim.commit();

                awaitTrue("the claim and then the end of stream arrive", () ->
                {
                    subscription.poll(handler, 10);
                    return image.isEndOfStream();
                });
                assertNull(checker.failure);
                assertEquals(11, checker.received, (exclusive ? "exclusive" : "concurrent") +
                    ": the claim committed after close() was delivered before the end of stream");
                subscription.close();
            }
        }
    }

    @Test
    void shouldDropTheConnectionOfAnImageThatFoundACorruptFrameSoThePublisherMovesOnAndTheSubscriberRejoins()
    {
        try (Verbus verbus = launch())
        {
            final int termLength = 64 * 1024;
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", 2004);
            final int port = controlPort(verbus.countersReader());
            final AtomicInteger available = new AtomicInteger();
            final AtomicInteger unavailable = new AtomicInteger();
            final Subscription subscription = verbus.addSubscription(
                "rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 2004,
                image -> available.incrementAndGet(), image -> unavailable.incrementAndGet());
            awaitTrue("connected", () -> publication.isConnected() && 1 == available.get());

            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            for (int i = 0; i < 10; i++)
            {
                final int length = MessageStream.encode(message, i);
                awaitTrue("offered", () -> publication.offer(message, 0, length) > 0);
            }
            // The bound covers all ten frames (the receiver's lag counter shows it) before the image reads one.
            awaitTrue("all ten below the bound",
                () -> publication.position() == receiverLag(verbus.countersReader(), 2004));

            // Reading the first frame, a faulty remote writer's damage appears in the second, below the bound.
            assertEquals(1, subscription.poll((buffer, offset, length, header) ->
                ((UnsafeBuffer)buffer).putIntRelease(header.offset() + FrameWriter.align(header.frameLength()), 0),
                1));
            awaitTrue("image unavailable", () -> 1 == unavailable.get(),
                () -> subscription.poll((buffer, offset, length, header) -> {}, 10));
            assertEquals(0, subscription.imageCount());

            // The connection was let go: the publisher does not stay back pressured on the dead image, and the
            // subscriber rejoins with a new image that gets everything published from then on.
            awaitTrue("rejoined with a new image", () -> 2 == available.get() && 1 == subscription.imageCount());
            final MessageStream.Checker checker = new MessageStream.Checker(-1);
            final UnsafeBuffer view = new UnsafeBuffer(0, 0);
            final long firstAfter = 1_000;
            long sequence = firstAfter;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (publication.position() < 3L * termLength || checker.expected < sequence)
            {
                assertTrue(System.nanoTime() < deadlineNs, "stuck at " + sequence + ", position " +
                    publication.position() + ", limit " + publication.positionLimit() + ", received " +
                    checker.received + " " + checker.failure);
                final int length = MessageStream.encode(message, sequence);
                if (publication.offer(message, 0, length) > 0)
                {
                    sequence++;
                }
                if (0 == subscription.poll((buffer, offset, length2, header) ->
                {
                    view.wrap(buffer, offset, length2);
                    checker.onMessage(view, 0, length2);
                }, 100))
                {
                    RdmaRig.sleepMicros(50);
                }
            }
            assertNull(checker.failure);
            assertTrue(checker.expected - checker.received >= firstAfter, "the new image joined after the damage");
            assertEquals(1, unavailable.get());
        }
    }

    /** @return the receiver's "subscriber lag" for a stream: its bound minus its image's position. */
    private static long receiverLag(final CountersReader counters, final int streamId)
    {
        final long[] lag = { -1 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (RdmaCounters.SUBSCRIBER_LAG_TYPE_ID == typeId && label.contains("stream=" + streamId + " publisher=") &&
                label.contains(" image="))
            {
                lag[0] = counters.getCounterValue(counterId);
            }
        });
        return lag[0];
    }

    private static void awaitTrue(final String what, final java.util.function.BooleanSupplier condition)
    {
        awaitTrue(what, condition, () -> {});
    }

    private static void awaitTrue(
        final String what, final java.util.function.BooleanSupplier condition, final Runnable step)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!condition.getAsBoolean())
        {
            assertTrue(System.nanoTime() < deadlineNs, "timed out waiting for: " + what);
            step.run();
            RdmaRig.sleepMicros(200);
        }
    }

    /** Labels of the publisher's per-connection counters for a stream: one per admitted connection. */
    private static Set<String> publisherConnections(final CountersReader counters, final int streamId)
    {
        final Set<String> labels = new TreeSet<>();
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (RdmaCounters.BYTES_POSTED_TYPE_ID == typeId && label.contains("stream=" + streamId + " session=") &&
                label.contains(" subscriber="))
            {
                labels.add(label);
            }
        });
        return labels;
    }

    private static int pollAll(final Subscription[] subscriptions, final MessageStream.Checker[] checkers)
    {
        final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        int fragments = 0;
        for (int i = 0; i < subscriptions.length; i++)
        {
            final MessageStream.Checker checker = checkers[i];
            fragments += subscriptions[i].poll((buffer, offset, length, header) ->
            {
                view.wrap(buffer, offset, length);
                checker.onMessage(view, 0, length);
            }, 100);
        }
        return fragments;
    }

    /** Offers messages {@code from} until {@code to} and polls until every subscription received them, checked. */
    static void offerAndReceive(
        final Publication publication,
        final ExpandableArrayBuffer message,
        final long from,
        final long to,
        final Subscription[] subscriptions,
        final MessageStream.Checker[] checkers)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        long sequence = from;
        while (!allReceived(checkers, to))
        {
            if (System.nanoTime() > deadlineNs)
            {
                final StringBuilder received = new StringBuilder();
                for (final MessageStream.Checker checker : checkers)
                {
                    received.append(checker.received).append(' ').append(checker.failure).append("; ");
                }
                throw new AssertionError("stuck at " + sequence + " connected=" + publication.isConnected() +
                    " / received " + received);
            }
            int work = 0;
            if (sequence < to)
            {
                final int length = MessageStream.encode(message, sequence);
                if (publication.offer(message, 0, length) > 0)
                {
                    sequence++;
                    work++;
                }
            }
            work += pollAll(subscriptions, checkers);
            if (0 == work)
            {
                RdmaRig.sleepMicros(100);
            }
        }
        for (final MessageStream.Checker checker : checkers)
        {
            assertNull(checker.failure);
        }
    }

    private static boolean allReceived(final MessageStream.Checker[] checkers, final long to)
    {
        for (final MessageStream.Checker checker : checkers)
        {
            if (checker.received < to)
            {
                return false;
            }
        }
        return true;
    }
}
