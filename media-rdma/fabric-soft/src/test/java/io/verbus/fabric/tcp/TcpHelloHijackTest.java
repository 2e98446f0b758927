package io.verbus.fabric.tcp;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.fabric.WorkRequestOpcode;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.management.BufferPoolMXBean;
import java.lang.management.ManagementFactory;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Someone who can reach a tcp NIC's port but never took part in the authenticated handshake: QPNs are sequential
 * and guessable, PSNs are not. A raw socket sends hellos to the NIC that holds a connected, working QP pair's
 * responder; every hello short of both QPNs and both PSNs is refused (its socket closed, no answer), the QP's own
 * connection stays, and a WRITE after the attack lands. A hello with all four right is the only one answered. And
 * one who has all four (a peer that took part) is still checked request by request.
 */
class TcpHelloHijackTest
{
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);
    private static final int PSN_MASK = 0xFF_FFFF;
    private static final int REGION_LENGTH = 4096;
    private static final String FLOOD_TAG = "hello-flood";

    private final WorkRequestBatch batch = new WorkRequestBatch(2);
    private final WorkCompletion[] completions = WorkCompletion.newArray(4);
    private final List<LogRecord> warnings = new CopyOnWriteArrayList<>();
    private final Logger nicLogger = Logger.getLogger(TcpNic.class.getName());
    private final Handler capture = new Handler()
    {
        @Override
        public void publish(final LogRecord record)
        {
            if (record.getLevel().intValue() >= Level.WARNING.intValue())
            {
                warnings.add(record);
            }
        }

        @Override
        public void flush()
        {
        }

        @Override
        public void close()
        {
        }
    };

    private Fabric initiatorFabric;
    private Fabric responderFabric;
    private ProtectionDomain initiatorPd;
    private ProtectionDomain responderPd;
    private Device responderDevice;
    private TcpNic responderNic;
    private CompletionQueue initiatorCq;
    private CompletionQueue responderCq;
    private QueuePair requester;
    private QueuePair target;
    private MemoryRegion source;
    private MemoryRegion sink;
    private InetSocketAddress responderPort;
    private int writes;

    @BeforeEach
    void connect(final TestInfo test)
    {
        nicLogger.addHandler(capture);
        // The flood test must tell the NIC's cap from its connect timeout: there the timeout is far away.
        final long connectTimeoutNs = test.getTags().contains(FLOOD_TAG) ? TimeUnit.MINUTES.toNanos(5) :
            TimeUnit.SECONDS.toNanos(2);
        initiatorFabric = Fabrics.open("tcp", context(connectTimeoutNs));
        responderFabric = Fabrics.open("tcp", context(connectTimeoutNs));
        final Device initiator = initiatorFabric.openDevice();
        final Device responder = responderFabric.openDevice();
        responderDevice = responder;
        responderNic = ((TcpDevice)responder).nic();
        initiatorPd = initiator.allocateProtectionDomain();
        responderPd = responder.allocateProtectionDomain();
        initiatorCq = initiator.createCompletionQueue(64);
        responderCq = responder.createCompletionQueue(64);
        requester = initiatorPd.createQueuePair(new QueuePairConfig().completionQueue(initiatorCq));
        target = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        requester.connect(target.localConnectionInfo());
        target.connect(requester.localConnectionInfo());
        source = initiatorPd.registerMemory(initiator.allocateMemory(REGION_LENGTH), AccessFlags.LOCAL_WRITE);
        sink = responderPd.registerMemory(responder.allocateMemory(REGION_LENGTH),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        responderPort = new InetSocketAddress("127.0.0.1", target.localConnectionInfo().lid());
        assertWriteLands(requester); // the QP pair is connected and carrying traffic before anyone attacks
    }

    @AfterEach
    void close()
    {
        nicLogger.removeHandler(capture);
        initiatorFabric.close();
        responderFabric.close();
    }

    private static FabricContext context(final long connectTimeoutNs)
    {
        return new FabricContext().tcpAddress("127.0.0.1").tcpConnectTimeoutNs(connectTimeoutNs);
    }

    /**
     * Connections that never send a hello: each would hold two 256 KiB buffers until the connect timeout (here five
     * minutes), so a flood of them could exhaust direct memory. The NIC holds at most
     * {@link TcpNic#MAX_CONNECTIONS_AWAITING_HELLO}, closing the oldest, and a QP pair connected during the flood still
     * gets in (its dialer writes its hello at once) and carries a WRITE, as does the pair connected before it.
     */
    @Test
    @Tag(FLOOD_TAG)
    void shouldHoldOnlyABoundedNumberOfConnectionsThatSendNoHello() throws IOException
    {
        final int flood = 3 * TcpNic.MAX_CONNECTIONS_AWAITING_HELLO;
        final List<SocketChannel> silent = new ArrayList<>();
        final long directBytesBefore = directBufferBytes();
        try
        {
            for (int i = 0; i < flood; i++)
            {
                final SocketChannel attacker = SocketChannel.open(responderPort);
                attacker.configureBlocking(false);
                silent.add(attacker);
            }
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            int closed = 0;
            final ByteBuffer sink = ByteBuffer.allocate(16);
            final boolean[] seenClosed = new boolean[flood];
            while (closed < flood - TcpNic.MAX_CONNECTIONS_AWAITING_HELLO && System.nanoTime() < deadlineNs)
            {
                for (int i = 0; i < flood; i++)
                {
                    if (!seenClosed[i] && isClosedByPeer(silent.get(i), sink.clear()))
                    {
                        seenClosed[i] = true;
                        closed++;
                    }
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            assertTrue(closed >= flood - TcpNic.MAX_CONNECTIONS_AWAITING_HELLO,
                "the NIC closed " + closed + " of " + flood + " silent connections");
            // Every one of them was accepted (the NIC closes the oldest only as it accepts a newer one), and the ones
            // it holds are anybody's: they may cost a socket, not the streaming buffers (2 x 256 KiB each of direct
            // memory, which only a GC gives back: a flood of bare connects churned through the JDK's direct memory
            // limit and a full System.gc() pause every few hundred connections).
            final long heldBytes = directBufferBytes() - directBytesBefore;
            assertTrue(heldBytes < 1024L * 1024,
                "direct buffer bytes held for " + flood + " connections that sent no hello: " + heldBytes);

            final QueuePair lateRequester = initiatorPd.createQueuePair(
                new QueuePairConfig().completionQueue(initiatorCq));
            final QueuePair lateTarget = responderPd.createQueuePair(
                new QueuePairConfig().completionQueue(responderCq));
            lateRequester.connect(lateTarget.localConnectionInfo());
            lateTarget.connect(lateRequester.localConnectionInfo());
            assertWriteLands(lateRequester);
            assertWriteLands(requester);
        }
        finally
        {
            for (final SocketChannel channel : silent)
            {
                channel.close();
            }
        }
    }

    private static long directBufferBytes()
    {
        for (final BufferPoolMXBean pool : ManagementFactory.getPlatformMXBeans(BufferPoolMXBean.class))
        {
            if ("direct".equals(pool.getName()))
            {
                return pool.getTotalCapacity();
            }
        }
        throw new IllegalStateException("no direct buffer pool");
    }

    private static boolean isClosedByPeer(final SocketChannel channel, final ByteBuffer buffer)
    {
        try
        {
            return channel.read(buffer) < 0;
        }
        catch (final IOException reset)
        {
            return true;
        }
    }

    @Test
    void shouldRefuseAHelloWithTheWrongMagic() throws IOException
    {
        final ByteBuffer hello = helloFromRequester();
        hello.putInt(TcpWire.HELLO_MAGIC_OFFSET, TcpWire.MAGIC + 1);
        assertRefusedAndPairStillWorks(hello);
    }

    @Test
    void shouldRefuseAHelloOfThePreviousWireVersionCleanly() throws IOException
    {
        // A version-4 NIC sent 16 bytes (magic, version, target and source QPN) and waited for the answer.
        final ByteBuffer hello = helloFromRequester();
        hello.putInt(TcpWire.HELLO_VERSION_OFFSET, TcpWire.VERSION - 1).limit(TcpWire.HELLO_TARGET_PSN_OFFSET);
        assertRefusedAndPairStillWorks(hello);
    }

    @Test
    void shouldRefuseAHelloWithBothQueuePairNumbersRightButTheWrongTargetPsn() throws IOException
    {
        final ByteBuffer hello = helloFromRequester();
        hello.putInt(TcpWire.HELLO_TARGET_PSN_OFFSET, (target.localConnectionInfo().psn() + 1) & PSN_MASK);
        assertRefusedAndPairStillWorks(hello);
    }

    @Test
    void shouldRefuseAHelloWithTheTargetRightButTheWrongSourceQueuePairNumber() throws IOException
    {
        final ByteBuffer hello = helloFromRequester();
        hello.putInt(TcpWire.HELLO_SOURCE_QPN_OFFSET, requester.qpNumber() + 1);
        assertRefusedAndPairStillWorks(hello);
    }

    @Test
    void shouldRefuseAHelloWithTheTargetRightButTheWrongSourcePsn() throws IOException
    {
        final ByteBuffer hello = helloFromRequester();
        hello.putInt(TcpWire.HELLO_SOURCE_PSN_OFFSET, (requester.localConnectionInfo().psn() + 1) & PSN_MASK);
        assertRefusedAndPairStillWorks(hello);
    }

    @Test
    void shouldRefuseAHelloToAQueuePairNotYetReadyToReceiveOnceItLearnsItsPeer() throws IOException
    {
        // The attacker knows the target's QPN and PSN (say it guessed them) and dials before the QP knows its peer:
        // the NIC holds the hello until the QP reaches RTR (or the connect timeout passes), then checks the source.
        final QueuePair lateTarget = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        lateTarget.modifyToInit();
        final QueuePair lateRequester = initiatorPd.createQueuePair(
            new QueuePairConfig().completionQueue(initiatorCq));
        final ByteBuffer hello = hello(lateTarget.localConnectionInfo(), lateRequester.qpNumber() + 1,
            lateRequester.localConnectionInfo().psn());
        final long refusedBefore = responderNic.refusedHelloCount();
        try (SocketChannel attacker = SocketChannel.open(responderPort))
        {
            writeFully(attacker, hello);
            assertNoAnswerFor(attacker, TimeUnit.MILLISECONDS.toNanos(200)); // held, neither accepted nor answered
            lateTarget.modifyToReadyToReceive(lateRequester.localConnectionInfo());
            lateTarget.modifyToReadyToSend();
            lateRequester.connect(lateTarget.localConnectionInfo());
            assertEquals(-1, awaitAnswerOrClose(attacker), "the NIC closed the attacker's socket without answering");
        }
        assertEquals(refusedBefore + 1, responderNic.refusedHelloCount());
        assertWriteLands(lateRequester);
        assertWriteLands(requester);
    }

    @Test
    void shouldAcceptALegitimateHelloThatArrivesBeforeTheTargetIsReadyToReceive()
    {
        // The rdma media's order: the publisher's QP reaches RTS and dials before the subscriber's ACCEPT arrives
        // and moves the subscriber's QP to RTR. The hello waits for RTR instead of being refused.
        final QueuePair lateTarget = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        lateTarget.modifyToInit();
        final QueuePair lateRequester = initiatorPd.createQueuePair(
            new QueuePairConfig().completionQueue(initiatorCq));
        lateRequester.connect(lateTarget.localConnectionInfo());
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // let the dial and the hello arrive first
        lateTarget.modifyToReadyToReceive(lateRequester.localConnectionInfo());
        lateTarget.modifyToReadyToSend();
        assertWriteLands(lateRequester);
        assertEquals(0, responderNic.refusedHelloCount());
    }

    /**
     * The same early hello, waiting for its QP, while a stranger opens three times the cap of bare connections: the
     * NIC closes the stranger's, never the one whose hello names the QP and its PSN (before, it was the oldest waiting
     * connection, so the first connects of the flood pushed it out and the QP pair never connected).
     */
    @Test
    @Tag(FLOOD_TAG)
    void shouldKeepAnEarlyLegitimateHelloWhileAStrangerFloodsTheCap() throws IOException
    {
        final QueuePair lateTarget = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        lateTarget.modifyToInit();
        final QueuePair lateRequester = initiatorPd.createQueuePair(
            new QueuePairConfig().completionQueue(initiatorCq));
        lateRequester.connect(lateTarget.localConnectionInfo());
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(100)); // the dial and the hello arrive first
        final int flood = 3 * TcpNic.MAX_CONNECTIONS_AWAITING_HELLO;
        final List<SocketChannel> silent = new ArrayList<>();
        try
        {
            for (int i = 0; i < flood; i++)
            {
                silent.add(SocketChannel.open(responderPort));
            }
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (responderNic.refusedHelloCount() < flood - TcpNic.MAX_CONNECTIONS_AWAITING_HELLO + 1 &&
                System.nanoTime() < deadlineNs)
            {
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            assertTrue(responderNic.refusedHelloCount() >= flood - TcpNic.MAX_CONNECTIONS_AWAITING_HELLO + 1,
                "the NIC closed " + responderNic.refusedHelloCount() + " connections of the flood");
            lateTarget.modifyToReadyToReceive(lateRequester.localConnectionInfo());
            lateTarget.modifyToReadyToSend();
            assertEquals(io.verbus.fabric.QueuePairState.RTS, lateRequester.state());
            assertWriteLands(lateRequester);
        }
        finally
        {
            for (final SocketChannel channel : silent)
            {
                channel.close();
            }
        }
    }

    @Test
    void shouldAnswerOnlyAHelloThatKnowsBothQueuePairNumbersAndBothPsns() throws IOException
    {
        // The control for the refusals above: the same frame with nothing altered is a valid re-dial of the
        // requester (which may replace the QP's inbound connection) and is answered, mirrored.
        try (SocketChannel attacker = SocketChannel.open(responderPort))
        {
            writeFully(attacker, helloFromRequester());
            final ByteBuffer answer = ByteBuffer.allocate(TcpWire.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            readFully(attacker, answer); // fails if the NIC closes a hello that knew all four values, or is silent
            final ByteBuffer expected = hello(requester.localConnectionInfo(), target.qpNumber(),
                target.localConnectionInfo().psn());
            assertArrayEquals(expected.array(), answer.array());
        }
        assertEquals(0, responderNic.refusedHelloCount());
    }

    @Test
    void shouldCountEveryRefusalButLogAFloodOfThemInAFewLines() throws IOException
    {
        final int floods = 50;
        final long startNs = System.nanoTime();
        for (int i = 0; i < floods; i++)
        {
            final ByteBuffer hello = helloFromRequester();
            hello.putInt(TcpWire.HELLO_TARGET_PSN_OFFSET, (target.localConnectionInfo().psn() + 1 + i) & PSN_MASK);
            try (SocketChannel attacker = SocketChannel.open(responderPort))
            {
                writeFully(attacker, hello);
                assertEquals(-1, awaitAnswerOrClose(attacker));
            }
        }
        final long elapsedNs = System.nanoTime() - startNs;
        assertEquals(floods, responderNic.refusedHelloCount());
        final long allowedLines = 1 + elapsedNs / TcpNic.REFUSAL_LOG_INTERVAL_NS + 1;
        assertTrue(!warnings.isEmpty() && warnings.size() <= allowedLines,
            warnings.size() + " WARNING lines for " + floods + " refusals in " +
            TimeUnit.NANOSECONDS.toMillis(elapsedNs) + " ms");
        assertTrue(warnings.getFirst().getMessage().contains("refused a connection from"),
            warnings.getFirst().getMessage());
        assertWriteLands(requester);
    }

    /**
     * A peer that did take part in the handshake (it knows both QPNs and PSNs) is still a peer: what it sends is
     * checked. A READ may not ask for more than the NIC's largest message, however large the readable region is:
     * the response is one frame, and a length the requester could never accept once had the responder size a
     * buffer for it (a 1 GiB term log asked for whole made the buffer size overflow and threw on the NIC's thread).
     * The responder NAKs it (and enters ERR, as an RC responder does after a NAK), and the NIC still serves other
     * QP pairs.
     */
    @Test
    void shouldNakAReadLongerThanTheLargestMessageWithoutSizingABufferForIt() throws IOException
    {
        final long readableLength = TcpDevice.MAX_MESSAGE_LENGTH + 2L * REGION_LENGTH;
        final MemoryRegion readable = responderPd.registerMemory(
            responderDevice.allocateMemory(readableLength), AccessFlags.REMOTE_READ);
        final long directBytesBefore = directBufferBytes();
        try (SocketChannel peer = SocketChannel.open(responderPort))
        {
            writeFully(peer, helloFromRequester());
            final ByteBuffer answer = ByteBuffer.allocate(TcpWire.HELLO_LENGTH);
            readFully(peer, answer);

            final ByteBuffer read = ByteBuffer.allocate(TcpWire.REQUEST_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            read.putInt(TcpWire.FRAME_LENGTH_OFFSET, TcpWire.REQUEST_HEADER_LENGTH)
                .put(TcpWire.FRAME_TYPE_OFFSET, TcpWire.TYPE_REQUEST)
                .put(TcpWire.REQUEST_OPCODE_OFFSET, (byte)WorkRequestOpcode.RDMA_READ.ordinal())
                .putShort(TcpWire.REQUEST_FLAGS_OFFSET, (short)SendFlags.SIGNALED)
                .putLong(TcpWire.REQUEST_SEQUENCE_OFFSET, writes) // one request per WRITE so far
                .putLong(TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET, readable.address())
                .putInt(TcpWire.REQUEST_RKEY_OFFSET, readable.rkey())
                .putInt(TcpWire.REQUEST_LENGTH_OFFSET, TcpDevice.MAX_MESSAGE_LENGTH + REGION_LENGTH);
            writeFully(peer, read);

            final ByteBuffer response =
                ByteBuffer.allocate(TcpWire.RESPONSE_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
            readFully(peer, response);
            assertEquals(TcpWire.RESPONSE_HEADER_LENGTH, response.getInt(TcpWire.FRAME_LENGTH_OFFSET),
                "a NAK with no payload");
            assertEquals(TcpWire.TYPE_RESPONSE, response.get(TcpWire.FRAME_TYPE_OFFSET));
            assertEquals(WorkCompletionStatus.REM_INV_REQ_ERR.ordinal(), response.get(TcpWire.RESPONSE_STATUS_OFFSET));
            assertEquals(writes, response.getLong(TcpWire.RESPONSE_SEQUENCE_OFFSET));
        }
        assertEquals(QueuePairState.ERR, target.state());
        assertTrue(directBufferBytes() - directBytesBefore < TcpDevice.MAX_MESSAGE_LENGTH,
            "no buffer sized for the READ: " + (directBufferBytes() - directBytesBefore) + " direct bytes more");

        final QueuePair lateRequester = initiatorPd.createQueuePair(new QueuePairConfig().completionQueue(initiatorCq));
        final QueuePair lateTarget = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        lateRequester.connect(lateTarget.localConnectionInfo());
        lateTarget.connect(lateRequester.localConnectionInfo());
        assertWriteLands(lateRequester);
    }

    /**
     * A peer that sends a header announcing a large SEND and withholds its payload: the read buffer grows with what
     * arrived, not to the announced length (it used to take the whole 16 MiB at once, for as long as the peer waited).
     */
    @Test
    void shouldNotSizeTheReadBufferForAPayloadThePeerWithholds() throws IOException
    {
        final int announced = TcpDevice.MAX_MESSAGE_LENGTH;
        final int sent = 64 * 1024;
        try (SocketChannel peer = SocketChannel.open(responderPort))
        {
            writeFully(peer, helloFromRequester());
            final ByteBuffer answer = ByteBuffer.allocate(TcpWire.HELLO_LENGTH);
            readFully(peer, answer);
            final TcpConnection attacked = ((TcpQueuePair)target).inbound;

            final ByteBuffer send = ByteBuffer.allocate(TcpWire.REQUEST_HEADER_LENGTH + sent)
                .order(ByteOrder.LITTLE_ENDIAN);
            send.putInt(TcpWire.FRAME_LENGTH_OFFSET, TcpWire.REQUEST_HEADER_LENGTH + announced)
                .put(TcpWire.FRAME_TYPE_OFFSET, TcpWire.TYPE_REQUEST)
                .put(TcpWire.REQUEST_OPCODE_OFFSET, (byte)WorkRequestOpcode.SEND.ordinal())
                .putShort(TcpWire.REQUEST_FLAGS_OFFSET, (short)SendFlags.SIGNALED)
                .putLong(TcpWire.REQUEST_SEQUENCE_OFFSET, writes)
                .putInt(TcpWire.REQUEST_LENGTH_OFFSET, announced);
            writeFully(peer, send);

            // Let the responder read all that was sent, several times over.
            final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(300);
            while (System.nanoTime() < deadlineNs)
            {
                target.progress();
                responderCq.poll(completions, completions.length);
            }
            assertTrue(attacked.readBufferCapacity() <= TcpConnection.INITIAL_BUFFER_BYTES,
                "a read buffer of " + attacked.readBufferCapacity() + " bytes for the " + sent +
                " bytes that came of an announced " + announced);
        }
    }

    /** Read until {@code into} is full; fails if the NIC closes the connection first or stays silent. */
    private static void readFully(final SocketChannel channel, final ByteBuffer into) throws IOException
    {
        channel.configureBlocking(false);
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (into.hasRemaining())
        {
            if (channel.read(into) < 0)
            {
                fail("the NIC closed the connection after " + into.position() + " bytes");
            }
            if (System.nanoTime() > deadlineNs)
            {
                fail("only " + into.position() + " of " + into.capacity() + " bytes in time");
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
    }

    private void assertRefusedAndPairStillWorks(final ByteBuffer hello) throws IOException
    {
        final long refusedBefore = responderNic.refusedHelloCount();
        try (SocketChannel attacker = SocketChannel.open(responderPort))
        {
            writeFully(attacker, hello);
            assertEquals(-1, awaitAnswerOrClose(attacker), "the NIC closed the attacker's socket without answering");
        }
        assertEquals(refusedBefore + 1, responderNic.refusedHelloCount());
        assertWriteLands(requester);
        assertEquals(QueuePairState.RTS, target.state());
    }

    /**
     * @return -1 once the NIC closed the socket with nothing sent back (reset counts as closed), else the first
     * bytes' count it answered with; fails if neither happens in time.
     */
    private static int awaitAnswerOrClose(final SocketChannel attacker) throws IOException
    {
        attacker.configureBlocking(false);
        final ByteBuffer answer = ByteBuffer.allocate(TcpWire.HELLO_LENGTH);
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (System.nanoTime() < deadlineNs)
        {
            final int read;
            try
            {
                read = attacker.read(answer);
            }
            catch (final IOException reset)
            {
                return -1;
            }
            if (read != 0)
            {
                return read;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        return fail("the NIC neither answered nor closed the connection in time");
    }

    private static void assertNoAnswerFor(final SocketChannel attacker, final long durationNs) throws IOException
    {
        attacker.configureBlocking(false);
        final ByteBuffer answer = ByteBuffer.allocate(TcpWire.HELLO_LENGTH);
        final long endNs = System.nanoTime() + durationNs;
        while (System.nanoTime() < endNs)
        {
            try
            {
                if (attacker.read(answer) != 0)
                {
                    break;
                }
            }
            catch (final IOException reset)
            {
                break;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
        assertEquals(0, answer.position(), "the NIC answered a hello to a QP that did not know its peer yet");
    }

    private static void writeFully(final SocketChannel channel, final ByteBuffer frame) throws IOException
    {
        while (frame.hasRemaining())
        {
            channel.write(frame);
        }
    }

    /** The hello the requester's NIC sends when it dials the target: all four values right. */
    private ByteBuffer helloFromRequester()
    {
        return hello(target.localConnectionInfo(), requester.qpNumber(), requester.localConnectionInfo().psn());
    }

    private static ByteBuffer hello(final QueuePairConnectionInfo to, final int sourceQpn, final int sourcePsn)
    {
        final ByteBuffer hello = ByteBuffer.allocate(TcpWire.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        hello.putInt(TcpWire.HELLO_MAGIC_OFFSET, TcpWire.MAGIC)
            .putInt(TcpWire.HELLO_VERSION_OFFSET, TcpWire.VERSION)
            .putInt(TcpWire.HELLO_TARGET_QPN_OFFSET, to.qpNumber())
            .putInt(TcpWire.HELLO_SOURCE_QPN_OFFSET, sourceQpn)
            .putInt(TcpWire.HELLO_TARGET_PSN_OFFSET, to.psn())
            .putInt(TcpWire.HELLO_SOURCE_PSN_OFFSET, sourcePsn);
        return hello;
    }

    /** A signaled WRITE of a fresh pattern completes successfully, the bytes are in the sink, no QP erred. */
    private void assertWriteLands(final QueuePair from)
    {
        final byte pattern = (byte)(++writes);
        source.segment().fill(pattern);
        final MemorySegment data = source.segment();
        batch.clear().add().write(writes, data.address(), REGION_LENGTH, source.lkey(), sink.address(), sink.rkey(),
            SendFlags.SIGNALED);
        assertEquals(PostResult.OK, from.postSend(batch));
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (0 == initiatorCq.poll(completions, 1))
        {
            if (System.nanoTime() > deadlineNs)
            {
                fail("the WRITE did not complete in time");
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(100));
        }
        assertEquals(WorkCompletionStatus.SUCCESS, completions[0].status(), completions[0].toString());
        assertEquals(writes, completions[0].wrId());
        final MemorySegment landed = sink.segment();
        for (int i = 0; i < REGION_LENGTH; i += 512)
        {
            assertEquals(pattern, landed.get(ValueLayout.JAVA_BYTE, i), "byte " + i + " of WRITE " + writes);
        }
        assertEquals(QueuePairState.RTS, from.state());
    }
}
