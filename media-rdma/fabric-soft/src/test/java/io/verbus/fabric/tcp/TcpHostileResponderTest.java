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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A requester QP whose responder is a hostile peer: a plain socket that answers the hello as a NIC would and then
 * sends response frames no honest responder sends. Each must end in an error completion and a QP in ERR, never in a
 * send queue held for good or a READ completed with data that never came. The honest form of the same wait (an RNR
 * NAK repeated while the responder has no receive) must still wait.
 */
class TcpHostileResponderTest
{
    private static final int FAKE_QPN = 0x4242;
    private static final int FAKE_PSN = 0x1234;
    private static final long RETRY_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(10);

    private final List<Throwable> reported = new CopyOnWriteArrayList<>();
    private final WorkRequestBatch batch = new WorkRequestBatch(2);
    private final WorkCompletion[] completions = WorkCompletion.newArray(8);

    private Fabric fabric;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private MemoryRegion local;
    private ServerSocketChannel fakeResponder;

    @BeforeEach
    void open() throws IOException
    {
        fabric = Fabrics.open("tcp", new FabricContext().tcpAddress("127.0.0.1")
            .tcpConnectTimeoutNs(TimeUnit.SECONDS.toNanos(2)).errorHandler(reported::add));
        final Device device = fabric.openDevice();
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(64);
        local = pd.registerMemory(device.allocateMemory(4096), AccessFlags.LOCAL_WRITE);
        fakeResponder = ServerSocketChannel.open().bind(new InetSocketAddress("127.0.0.1", 0));
        fakeResponder.configureBlocking(false);
    }

    @AfterEach
    void close() throws IOException
    {
        fakeResponder.close();
        fabric.close();
    }

    @Test
    void shouldErrAtOnceWhenTheResponderNaksAWriteForWantOfAReceive() throws IOException
    {
        final QueuePair qp = connectToFake();
        batch.clear();
        batch.add().write(7, local.address(), 64, local.lkey(), 0x1000, 99, SendFlags.SIGNALED);
        assertEquals(PostResult.OK, qp.postSend(batch));
        try (SocketChannel peer = acceptAndAnswerHello(qp))
        {
            // A WRITE takes no receive, so it cannot be RNR'd: before the fix one such NAK held it (and everything
            // behind it) for good, with the default infinite RNR count and the peer silent.
            writeResponse(peer, TcpWire.TYPE_RNR_NAK, 0);
            awaitFailure(qp, 7, "the WRITE was still outstanding after 10 s");
        }
    }

    @Test
    void shouldFailASendWhoseResponderNakedItOnceAndThenFellSilent() throws IOException
    {
        final QueuePair qp = connectToFake();
        postSend(qp, 8);
        try (SocketChannel peer = acceptAndAnswerHello(qp))
        {
            writeResponse(peer, TcpWire.TYPE_RNR_NAK, 0);
            final WorkCompletion completion =
                awaitFailure(qp, 8, "a SEND RNR-NAKed once, then silence: still waiting after 10 s");
            assertEquals(WorkCompletionStatus.RETRY_EXC_ERR, completion.status());
        }
    }

    @Test
    void shouldKeepWaitingWhileTheResponderRepeatsItsRnrNakAndCompleteWhenItAcknowledges() throws IOException
    {
        final QueuePair qp = connectToFake();
        postSend(qp, 9);
        try (SocketChannel peer = acceptAndAnswerHello(qp))
        {
            // Honest: no receive for 1 s (ten retry timeouts), the NAK repeated every 20 ms as TcpResponder does.
            final long untilNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(1);
            while (System.nanoTime() < untilNs)
            {
                writeResponse(peer, TcpWire.TYPE_RNR_NAK, 0);
                assertNull(awaitCompletion(qp, TimeUnit.MILLISECONDS.toNanos(20)), "a SEND in an RNR wait failed");
            }
            assertEquals(QueuePairState.RTS, qp.state());
            writeResponse(peer, TcpWire.TYPE_ACK, 0);
            final WorkCompletion completion = awaitCompletion(qp, WAIT_NS);
            assertNotNull(completion, "the acknowledged SEND did not complete");
            assertEquals(WorkCompletionStatus.SUCCESS, completion.status());
        }
    }

    @Test
    void shouldNotCompleteAReadThatAnAcknowledgementOfALaterRequestPassedOver() throws IOException
    {
        final QueuePair qp = connectToFake();
        local.segment().fill((byte)0x11);
        batch.clear();
        batch.add().read(10, local.address(), 64, local.lkey(), 0x1000, 99, SendFlags.SIGNALED);
        batch.add().write(11, local.address() + 1024, 64, local.lkey(), 0x2000, 99, SendFlags.SIGNALED);
        assertEquals(PostResult.OK, qp.postSend(batch));
        try (SocketChannel peer = acceptAndAnswerHello(qp))
        {
            // No READ response at all, only an acknowledgement of the WRITE behind it: before the fix the READ
            // completed SUCCESS with its buffer as it was (0x11s) standing in for the remote data.
            writeResponse(peer, TcpWire.TYPE_ACK, 1);
            awaitFailure(qp, 10, "nothing completed");
        }
    }

    private QueuePair connectToFake()
    {
        final QueuePair qp = pd.createQueuePair(
            new QueuePairConfig().completionQueue(cq).retryTimeoutNs(RETRY_TIMEOUT_NS));
        final byte[] gid = new byte[16];
        gid[10] = (byte)0xFF;
        gid[11] = (byte)0xFF;
        gid[12] = 127;
        gid[15] = 1;
        final int port = fakeResponder.socket().getLocalPort();
        qp.connect(new QueuePairConnectionInfo(FAKE_QPN, FAKE_PSN, port, gid, qp.localConnectionInfo().mtuBytes()));
        return qp;
    }

    private void postSend(final QueuePair qp, final long wrId)
    {
        batch.clear();
        batch.add().send(wrId, local.address(), 64, local.lkey(), SendFlags.SIGNALED);
        assertEquals(PostResult.OK, qp.postSend(batch));
    }

    /** Accept the QP's dial, check its hello and answer it (targets and sources swapped), then take its requests. */
    private SocketChannel acceptAndAnswerHello(final QueuePair qp) throws IOException
    {
        final long deadlineNs = System.nanoTime() + WAIT_NS;
        SocketChannel peer;
        while (null == (peer = fakeResponder.accept()))
        {
            qp.progress();
            assertTrue(System.nanoTime() < deadlineNs, "the QP never dialed");
        }
        peer.configureBlocking(false);
        final ByteBuffer hello = ByteBuffer.allocate(TcpWire.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        while (hello.hasRemaining())
        {
            qp.progress();
            assertTrue(peer.read(hello) >= 0 && System.nanoTime() < deadlineNs, "no hello");
        }
        assertEquals(TcpWire.MAGIC, hello.getInt(TcpWire.HELLO_MAGIC_OFFSET));
        assertEquals(FAKE_QPN, hello.getInt(TcpWire.HELLO_TARGET_QPN_OFFSET));
        final ByteBuffer answer = ByteBuffer.allocate(TcpWire.HELLO_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        answer.putInt(TcpWire.HELLO_MAGIC_OFFSET, TcpWire.MAGIC)
            .putInt(TcpWire.HELLO_VERSION_OFFSET, hello.getInt(TcpWire.HELLO_VERSION_OFFSET))
            .putInt(TcpWire.HELLO_TARGET_QPN_OFFSET, hello.getInt(TcpWire.HELLO_SOURCE_QPN_OFFSET))
            .putInt(TcpWire.HELLO_SOURCE_QPN_OFFSET, hello.getInt(TcpWire.HELLO_TARGET_QPN_OFFSET))
            .putInt(TcpWire.HELLO_TARGET_PSN_OFFSET, hello.getInt(TcpWire.HELLO_SOURCE_PSN_OFFSET))
            .putInt(TcpWire.HELLO_SOURCE_PSN_OFFSET, hello.getInt(TcpWire.HELLO_TARGET_PSN_OFFSET));
        writeFully(peer, answer);
        // The requests follow the answer: read them (and drop them) so that they are on the wire before any response.
        final ByteBuffer requests = ByteBuffer.allocate(64 * 1024);
        int read = 0;
        while (read < TcpWire.RESPONSE_HEADER_LENGTH)
        {
            qp.progress();
            final int n = peer.read(requests);
            assertTrue(n >= 0 && System.nanoTime() < deadlineNs, "no request after the hello");
            read += n;
        }
        return peer;
    }

    private static void writeResponse(final SocketChannel peer, final byte type, final long sequence)
        throws IOException
    {
        final ByteBuffer frame = ByteBuffer.allocate(TcpWire.RESPONSE_HEADER_LENGTH).order(ByteOrder.LITTLE_ENDIAN);
        frame.putInt(TcpWire.FRAME_LENGTH_OFFSET, TcpWire.RESPONSE_HEADER_LENGTH)
            .put(TcpWire.FRAME_TYPE_OFFSET, type)
            .put(TcpWire.RESPONSE_STATUS_OFFSET, (byte)WorkCompletionStatus.SUCCESS.ordinal())
            .putLong(TcpWire.RESPONSE_SEQUENCE_OFFSET, sequence);
        writeFully(peer, frame);
    }

    private static void writeFully(final SocketChannel peer, final ByteBuffer buffer) throws IOException
    {
        final long deadlineNs = System.nanoTime() + WAIT_NS;
        while (buffer.hasRemaining())
        {
            peer.write(buffer);
            assertTrue(System.nanoTime() < deadlineNs, "the QP's socket never took the frame");
        }
    }

    /**
     * The QP's head WR fails: a completion within {@link #WAIT_NS}, for {@code wrId}, not SUCCESS (a READ must never
     * complete without its data), and the QP in ERR.
     */
    private WorkCompletion awaitFailure(final QueuePair qp, final long wrId, final String whenNone)
    {
        final WorkCompletion completion = awaitCompletion(qp, WAIT_NS);
        assertNotNull(completion, whenNone);
        assertEquals(wrId, completion.wrId());
        assertNotEquals(WorkCompletionStatus.SUCCESS, completion.status(), "WR " + wrId + " completed SUCCESS");
        assertEquals(QueuePairState.ERR, qp.state());
        return completion;
    }

    /** @return the first completion polled within {@code timeoutNs}, or null. */
    private WorkCompletion awaitCompletion(final QueuePair qp, final long timeoutNs)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        do
        {
            if (cq.poll(completions, 1) > 0)
            {
                return completions[0];
            }
            Thread.onSpinWait();
        }
        while (System.nanoTime() < deadlineNs);
        return null;
    }
}
