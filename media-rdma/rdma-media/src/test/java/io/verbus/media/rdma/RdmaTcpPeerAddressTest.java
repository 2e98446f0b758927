package io.verbus.media.rdma;

import io.verbus.media.rdma.protocol.ConnectFlyweight;
import io.verbus.media.rdma.protocol.HandshakeAuthenticator;
import io.verbus.media.rdma.protocol.HandshakeHeader;
import io.verbus.media.rdma.protocol.HelloFlyweight;
import io.verbus.media.rdma.protocol.QpInfoCodec;
import io.verbus.media.rdma.protocol.RejectFlyweight;
import io.verbus.media.rdma.protocol.SlotLayout;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An authenticated subscriber on {@code provider=tcp} cannot point the publisher's software NIC at another host:
 * a CONNECT whose QP GID is not the address the control connection came from is rejected before anything is
 * registered, and the host and port it named never see a connection.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdmaTcpPeerAddressTest
{
    @TempDir
    Path dir;

    @Test
    void shouldRejectAConnectWhoseNicAddressIsNotTheControlPeer() throws Exception
    {
        try (RdmaRig rig = new RdmaRig(dir, "tcp", 64 * 1024, null, "heartbeat", "20ms", "timeout", "1s");
            ServerSocket victim = new ServerSocket())
        {
            victim.bind(new InetSocketAddress("0.0.0.0", 0));
            victim.setSoTimeout(2000);
            final CompletableFuture<Boolean> dialed = CompletableFuture.supplyAsync(() ->
            {
                try (Socket ignored = victim.accept())
                {
                    return true;
                }
                catch (final SocketTimeoutException quiet)
                {
                    return false;
                }
                catch (final Exception ex)
                {
                    return false;
                }
            });

            final String reject = connectPointingAt(rig.sender.controlPort(), "127.0.0.2", victim.getLocalPort());
            assertTrue(reject.contains("OUT_OF_RANGE") && reject.contains("127.0.0.2") && reject.contains("127.0.0.1"),
                reject);
            assertEquals(false, dialed.get(10, TimeUnit.SECONDS), "the named host and port were never dialed");
            assertEquals(0, rig.sender.registeredRegionCount(), "nothing registered for it");
            assertEquals(0, rig.sender.queuePairCount());
            assertEquals(0, rig.sender.protectionDomainCount());

            final RdmaRig.Subscriber legit = rig.addSubscriber();
            rig.awaitCondition("a legitimate tcp subscriber still connects", 20_000, () -> null != legit.image());
        }
    }

    /** Runs HELLO, CHALLENGE, CONNECT with the rig's secret and a QP at {@code host:port}; returns the REJECT. */
    private static String connectPointingAt(final int controlPort, final String host, final int port) throws Exception
    {
        try (Socket socket = new Socket())
        {
            socket.connect(new InetSocketAddress("127.0.0.1", controlPort), 2000);
            socket.setSoTimeout(5000);
            final OutputStream out = socket.getOutputStream();
            final InputStream in = socket.getInputStream();
            final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(1024);
            final byte[] clientNonce = new byte[32];
            new java.util.Random(7).nextBytes(clientNonce);
            new HelloFlyweight().wrap(buffer, 0).writeHeader()
                .minVersion(HandshakeHeader.VERSION).maxVersion(HandshakeHeader.VERSION)
                .streamId(RdmaRig.STREAM_ID).flags(0).groupTag(0).clientNonce(clientNonce);
            final byte[] hello = bytes(buffer, HelloFlyweight.LENGTH);
            out.write(hello);
            final byte[] challenge = readMessage(in);
            final byte[] serverNonce = new byte[32];
            System.arraycopy(challenge, 40, serverNonce, 0, 32);

            final QpInfoCodec.QpInfo qp = new QpInfoCodec.QpInfo();
            qp.qpn = 42;
            qp.lid = port;
            qp.pathMtu = 4096;
            qp.gid[10] = (byte)0xFF;
            qp.gid[11] = (byte)0xFF;
            System.arraycopy(InetAddress.getByName(host).getAddress(), 0, qp.gid, 12, 4);
            final ConnectFlyweight connect = new ConnectFlyweight().wrap(buffer, 0).writeHeader().qpInfo(qp);
            connect.ring().set(0x1000_0000L, 3L * 64 * 1024, 1);
            connect.counter().set(0x2000_0000L, SlotLayout.BLOCK_LENGTH, 2);
            new HandshakeAuthenticator(RdmaRig.SECRET).sign(HandshakeAuthenticator.CONNECT_LABEL, clientNonce,
                serverNonce, hello, buffer, 0, ConnectFlyweight.PROOF_OFFSET);
            out.write(bytes(buffer, ConnectFlyweight.LENGTH));
            out.flush();

            final byte[] reply = readMessage(in);
            final UnsafeBuffer view = new UnsafeBuffer(reply);
            assertEquals(HandshakeHeader.REJECT_TYPE, HandshakeHeader.type(view, 0));
            final RejectFlyweight reject = new RejectFlyweight().wrap(view, 0);
            return io.verbus.media.rdma.protocol.HandshakeException.Reason.fromCode(reject.reasonCode()) + ": " +
                reject.text(reply.length);
        }
    }

    private static byte[] bytes(final ExpandableArrayBuffer buffer, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return bytes;
    }

    private static byte[] readMessage(final InputStream in) throws Exception
    {
        final byte[] header = in.readNBytes(HandshakeHeader.LENGTH);
        final int length = new UnsafeBuffer(header).getInt(HandshakeHeader.LENGTH_OFFSET, LITTLE_ENDIAN);
        final byte[] message = new byte[length];
        System.arraycopy(header, 0, message, 0, header.length);
        in.readNBytes(message, header.length, length - header.length);
        return message;
    }
}
