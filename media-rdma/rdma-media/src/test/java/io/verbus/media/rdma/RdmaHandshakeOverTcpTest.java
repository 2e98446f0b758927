package io.verbus.media.rdma;

import io.verbus.media.rdma.protocol.ConnectFlyweight;
import io.verbus.media.rdma.protocol.HandshakeAuthenticator;
import io.verbus.media.rdma.protocol.HandshakeHeader;
import io.verbus.media.rdma.protocol.HelloFlyweight;
import io.verbus.media.rdma.protocol.QpInfoCodec;
import io.verbus.media.rdma.protocol.SlotLayout;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.nio.file.Path;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Hostile clients against a live publication's control endpoint over real TCP: garbage, oversized lengths,
 * wrong secrets, authenticated out-of-range fields, silence. Each is rejected with a WARNING log line that says
 * why, nothing is registered for any of them, and a legitimate subscriber still connects afterwards.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaHandshakeOverTcpTest
{
    private static final int CLIENTS = 400;
    private static final byte[] WRONG_SECRET = "a-wrong-secret-of-enough-length!".getBytes();

    @TempDir
    Path dir;

    @Test
    void shouldRejectHostileClientsWithALogLineAndRegisterNothing() throws Exception
    {
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        final Logger logger = Logger.getLogger("io.verbus.media.rdma");
        final Handler handler = new Handler()
        {
            public void publish(final LogRecord record)
            {
                records.add(record);
            }

            public void flush()
            {
            }

            public void close()
            {
            }
        };
        logger.addHandler(handler);
        final boolean parentHandlers = logger.getUseParentHandlers();
        logger.setUseParentHandlers(false);
        final long rejectedAtEnd;
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "10ms", "timeout", "300ms"))
        {
            final Random random = new Random(42);
            final InetSocketAddress address = new InetSocketAddress("127.0.0.1", rig.sender.controlPort());
            for (int client = 0; client < CLIENTS; client++)
            {
                attack(address, random, 19 == client % 20 ? 5 : client % 5);
                assertEquals(0, rig.sender.registeredRegionCount(), "client " + client + " got a region");
                assertEquals(0, rig.sender.protectionDomainCount(), "client " + client + " got a PD");
                assertEquals(0, rig.sender.queuePairCount(), "client " + client + " got a QP");
            }
            rig.awaitCondition("every client rejected", 30_000, () -> rig.sender.rejectedHandshakes() == CLIENTS);
            assertEquals(CLIENTS, rejectedCounter(rig),
                "the rdma handshakes rejected counter counts every rejection, the endpoint's included");

            final long rejectionLines = records.stream().filter(r -> r.getLevel() == Level.WARNING &&
                r.getMessage().contains("rejected handshake") && r.getMessage().contains("nothing registered"))
                .count();
            assertTrue(rejectionLines >= 4 && rejectionLines < CLIENTS / 4,
                "clear lines, rate-limited per kind of rejection: " + rejectionLines);
            assertTrue(records.stream().anyMatch(r -> r.getMessage().contains("AUTHENTICATION_FAILED")));
            assertTrue(records.stream().anyMatch(r -> r.getMessage().contains("OUT_OF_RANGE: CONNECT.")));
            assertTrue(records.stream().anyMatch(r -> r.getMessage().contains("MALFORMED")));
            assertEquals(0, rig.sender.subscriberCount());

            final RdmaRig.Subscriber legit = rig.addSubscriber();
            rig.awaitCondition("a legitimate subscriber still connects", 20_000,
                () -> legit.image() != null && rig.sender.subscriberCount() == 1);
            // On a loaded host the legitimate subscriber's first attempt may miss this rig's 300 ms step timeout and
            // be rejected (and logged) like the rest before its retry connects; it is connected now, so no more come.
            rejectedAtEnd = rig.sender.rejectedHandshakes();
            assertTrue(rejectedAtEnd - CLIENTS <= 2, "the legitimate subscriber was rejected " +
                (rejectedAtEnd - CLIENTS) + " times");
        }
        finally
        {
            logger.removeHandler(handler);
            logger.setUseParentHandlers(parentHandlers);
        }
        // Closed: the rate-limited lines were flushed. Lines plus the counts they give of lines left out agree with
        // the counter: every rejection is in the log.
        assertEquals(rejectedAtEnd, loggedRejections(records), "the log accounts for every rejection");
    }

    /** @return rejections the log accounts for: one per line, plus the "and N more" / "N more" it reports. */
    static long loggedRejections(final List<LogRecord> records)
    {
        final java.util.regex.Pattern more = java.util.regex.Pattern.compile("(?:and )?(\\d+) more like");
        long total = 0;
        for (final LogRecord record : records)
        {
            final String message = record.getMessage();
            if (record.getLevel() != Level.WARNING)
            {
                continue;
            }
            final boolean line = (message.contains("rejected handshake") || message.contains("refused connection")) &&
                message.contains("nothing registered");
            final boolean flushed = message.contains("rejections (");
            if (line || flushed)
            {
                total += line ? 1 : 0;
                final java.util.regex.Matcher matcher = more.matcher(message);
                if (matcher.find())
                {
                    total += Long.parseLong(matcher.group(1));
                }
            }
        }
        return total;
    }

    static long rejectedCounter(final RdmaRig rig)
    {
        final org.agrona.concurrent.status.CountersManager counters = rig.support.countersManager;
        final long[] value = {-1};
        counters.forEach((id, typeId, key, label) ->
        {
            if (RdmaCounters.HANDSHAKES_REJECTED_TYPE_ID == typeId &&
                label.startsWith("rdma handshakes rejected: stream=") &&
                label.contains(" session="))
            {
                value[0] = counters.getCounterValue(id);
            }
        });
        return value[0];
    }

    private static void attack(final InetSocketAddress address, final Random random, final int kind) throws Exception
    {
        try (Socket socket = new Socket())
        {
            socket.connect(address, 2000);
            socket.setSoTimeout(5000);
            final OutputStream out = socket.getOutputStream();
            final InputStream in = socket.getInputStream();
            final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(1024);
            final byte[] clientNonce = new byte[32];
            random.nextBytes(clientNonce);
            switch (kind)
            {
                case 0 ->
                {
                    final byte[] garbage = new byte[1 + random.nextInt(600)];
                    random.nextBytes(garbage);
                    out.write(garbage);
                }
                case 1 ->
                {
                    HandshakeHeader.write(buffer, 0, HandshakeHeader.HELLO_TYPE, 1 << 20 + random.nextInt(10));
                    out.write(bytes(buffer, HandshakeHeader.LENGTH));
                }
                case 2, 3, 4 ->
                {
                    new HelloFlyweight().wrap(buffer, 0).writeHeader()
                        .minVersion(HandshakeHeader.VERSION).maxVersion(HandshakeHeader.VERSION)
                        .streamId(RdmaRig.STREAM_ID).flags(0).groupTag(0).clientNonce(clientNonce);
                    final byte[] hello = bytes(buffer, HelloFlyweight.LENGTH);
                    out.write(hello);
                    final byte[] challenge = readMessage(in);
                    final byte[] serverNonce = new byte[32];
                    System.arraycopy(challenge, 40, serverNonce, 0, 32);
                    final QpInfoCodec.QpInfo qp = new QpInfoCodec.QpInfo();
                    qp.qpn = 1 + random.nextInt(1000);
                    qp.pathMtu = 4096;
                    final ConnectFlyweight connect = new ConnectFlyweight().wrap(buffer, 0).writeHeader().qpInfo(qp);
                    connect.ring().set(0x1000_0000L, 3L * 64 * 1024, 1);
                    connect.counter().set(0x2000_0000L, SlotLayout.BLOCK_LENGTH, 2);
                    if (3 == kind)
                    {
                        connect.ring().set(0x1000_0000L, 3L * 64 * 1024 + 4096, 1);
                    }
                    if (4 == kind)
                    {
                        buffer.putInt(ConnectFlyweight.QP_INFO_OFFSET, 1 << 25, LITTLE_ENDIAN);
                    }
                    new HandshakeAuthenticator(2 == kind ? WRONG_SECRET : RdmaRig.SECRET).sign(
                        HandshakeAuthenticator.CONNECT_LABEL, clientNonce, serverNonce, hello, buffer, 0,
                        ConnectFlyweight.PROOF_OFFSET);
                    out.write(bytes(buffer, ConnectFlyweight.LENGTH));
                }
                default ->
                {
                    // connect and say nothing: the step timeout rejects it
                }
            }
            out.flush();
            // Read until the publisher hangs up (after its REJECT).
            final byte[] sink = new byte[1024];
            while (in.read(sink) >= 0)
            {
                // drain
            }
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
