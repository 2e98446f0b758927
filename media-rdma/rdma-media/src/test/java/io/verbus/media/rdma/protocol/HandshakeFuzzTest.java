package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

import java.util.ArrayDeque;
import java.util.Random;

import static io.verbus.media.rdma.protocol.HandshakeFixtures.SECRET;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.SHAPE;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.STREAM_ID;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.TERM_LENGTH;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.WRONG_SECRET;
import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Many thousand handshakes from a hostile peer: random bytes, bit flips, wrong secrets, out-of-order and
 * resized messages, and authenticated messages carrying out-of-range fields. Whatever arrives, the handshake
 * must fail with a {@link HandshakeException} that names the problem, never any other exception, and register
 * nothing unless every field passed an independent oracle; what it registered is released on failure.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class HandshakeFuzzTest
{
    private static final int PUBLISHER_RUNS = 12_000;
    private static final int SUBSCRIBER_RUNS = 8_000;

    enum Kind
    {
        VALID, RANDOM_BYTES, FLIP_BYTES, WRONG_SECRET, RESIGNED_FIELD, RESIZED, WRONG_ORDER
    }

    // ---------------------------------------------------------------- publisher side under attack

    @Test
    void shouldRejectHostileSubscribersAndRegisterNothingForThem()
    {
        final Random random = new Random(0x5eed);
        final PublisherHandshake handshake = new PublisherHandshake(new HandshakeAuthenticator(SECRET), SHAPE, 10);
        final HandshakeAuthenticator goodSigner = new HandshakeAuthenticator(SECRET);
        final HandshakeAuthenticator badSigner = new HandshakeAuthenticator(WRONG_SECRET);
        final int[] outcomes = new int[Kind.values().length];
        int rejections = 0;

        for (int run = 0; run < PUBLISHER_RUNS; run++)
        {
            final Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
            final int target = random.nextInt(3); // 0 HELLO, 1 CONNECT, 2 READY
            final HostileSubscriber peer = new HostileSubscriber(random, kind, target,
                Kind.WRONG_SECRET == kind ? badSigner : goodSigner);
            final var resources = new OracleCheckingPublisherResources();
            boolean succeeded = false;
            try
            {
                handshake.run(peer, resources);
                succeeded = true;
            }
            catch (final HandshakeException ex)
            {
                rejections++;
                assertTrue(ex.getMessage().length() > 10, "a rejection says why: " + ex.getMessage());
                if (Kind.RESIGNED_FIELD == kind && 1 == target && peer.outOfRange)
                {
                    assertTrue(ex.getMessage().contains("CONNECT."), "names the field: " + ex.getMessage());
                }
            }
            catch (final RuntimeException ex)
            {
                fail("run " + run + " kind " + kind + " target " + target + " escaped with " + ex, ex);
            }

            assertEquals(succeeded ? 1 : 0, resources.live(), "run " + run + " " + kind + " leaked or lost");
            if (Kind.WRONG_SECRET == kind || (Kind.RESIGNED_FIELD == kind && 1 == target && peer.outOfRange))
            {
                assertEquals(0, resources.admitted, "run " + run + " " + kind + " registered for a bad peer");
                assertFalse(succeeded);
            }
            if (Kind.VALID == kind)
            {
                assertTrue(succeeded, "run " + run + ": a valid handshake must succeed");
            }
            outcomes[kind.ordinal()] += succeeded ? 1 : 0;
        }
        assertTrue(rejections > PUBLISHER_RUNS / 2, "most hostile handshakes are rejected: " + rejections);
        assertTrue(outcomes[Kind.VALID.ordinal()] > 0);
    }

    /** Independent re-statement of what an admitted offer must look like. */
    static final class OracleCheckingPublisherResources implements PublisherHandshake.Resources
    {
        int admitted;
        int released;

        public PublisherHandshake.Admission admit(final PublisherHandshake.SubscriberOffer offer)
        {
            assertEquals(3L * TERM_LENGTH, offer.ringLength());
            assertTrue(offer.ringAddress() != 0 && (offer.ringAddress() & 31) == 0);
            assertTrue(Long.compareUnsigned(offer.ringAddress() + offer.ringLength(), offer.ringAddress()) > 0);
            assertTrue(offer.counterAddress() != 0 && (offer.counterAddress() & 7) == 0);
            assertTrue(
                Long.compareUnsigned(offer.counterAddress() + SlotLayout.BLOCK_LENGTH, offer.counterAddress()) > 0);
            final QpInfoCodec.QpInfo qp = offer.qp();
            assertTrue(qp.qpn > 0 && qp.qpn < (1 << 24), "qpn " + qp.qpn);
            assertTrue(qp.psn >= 0 && qp.psn < (1 << 24));
            assertTrue(qp.lid >= 0 && qp.lid <= 0xFFFF);
            assertTrue(qp.pathMtu >= 256 && qp.pathMtu <= 4096 && Integer.bitCount(qp.pathMtu) == 1);
            assertTrue(qp.maxInline >= 0 && qp.maxInline <= 1024);
            assertTrue(qp.addressLength >= 0 && qp.addressLength <= 64);
            assertTrue(offer.commit() == 0 && offer.receiveCredits() == 0 ||
                offer.commit() == 1 && offer.receiveCredits() >= 1 && offer.receiveCredits() <= 16384,
                "commit " + offer.commit() + " credits " + offer.receiveCredits());
            final long catchUp = offer.catchUpRequest();
            assertTrue(ConnectFlyweight.CATCH_UP_NONE == catchUp || ConnectFlyweight.CATCH_UP_TERM_START == catchUp ||
                (catchUp >= 0 && (catchUp & 31) == 0), "catch-up request " + catchUp);
            admitted++;
            return new PublisherHandshake.Admission(0x7000_0000L, 99, 0, HandshakeFixtures.qpInfo(22), null);
        }

        public void release(final PublisherHandshake.Admission admission)
        {
            released++;
        }

        int live()
        {
            return admitted - released;
        }
    }

    /** Plays a subscriber that breaks one of its messages in one way. */
    static final class HostileSubscriber implements MessageTransport
    {
        private final Random random;
        private final Kind kind;
        private final int target;
        private final HandshakeAuthenticator signer;
        private final ArrayDeque<byte[]> toPublisher = new ArrayDeque<>();
        private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(1024);
        /** The HELLO this subscriber sent: its proofs cover it. */
        private final byte[] helloBytes = new byte[HelloFlyweight.LENGTH];
        private final byte[] clientNonce = new byte[32];
        private final byte[] serverNonce = new byte[32];
        boolean outOfRange;

        HostileSubscriber(final Random random, final Kind kind, final int target, final HandshakeAuthenticator signer)
        {
            this.random = random;
            this.kind = kind;
            this.target = target;
            this.signer = signer;
            random.nextBytes(clientNonce);
            new HelloFlyweight().wrap(buffer, 0).writeHeader()
                .minVersion(HandshakeHeader.VERSION).maxVersion(HandshakeHeader.VERSION).streamId(STREAM_ID)
                .flags(random.nextInt(4) == 0 ? 1 : 0).groupTag(0).clientNonce(clientNonce);
            buffer.getBytes(0, helloBytes);
            if (0 == target && Kind.WRONG_ORDER == kind)
            {
                emitReady();
                return;
            }
            emit(0, HelloFlyweight.LENGTH, -1, null);
        }

        public void send(final DirectBuffer message, final int offset, final int length)
        {
            final short type = HandshakeHeader.type(message, offset);
            if (HandshakeHeader.CHALLENGE_TYPE == type)
            {
                message.getBytes(offset + ChallengeFlyweight.SERVER_NONCE_OFFSET, serverNonce);
                if (1 == target && Kind.WRONG_ORDER == kind)
                {
                    emit(0, HelloFlyweight.LENGTH, -1, null); // a second HELLO instead of CONNECT
                    return;
                }
                final ConnectFlyweight connect = new ConnectFlyweight().wrap(buffer, 0).writeHeader()
                    .qpInfo(HandshakeFixtures.qpInfo(11))
                    .catchUpPosition(switch (random.nextInt(3))
                    {
                        case 0 -> ConnectFlyweight.CATCH_UP_NONE;
                        case 1 -> ConnectFlyweight.CATCH_UP_TERM_START;
                        default -> 32L * random.nextInt(1 << 20);
                    });
                connect.ring().set(0x1000_0000L, 3L * TERM_LENGTH, 1);
                connect.counter().set(0x2000_0000L, SlotLayout.BLOCK_LENGTH, 2);
                if (1 == target && Kind.RESIGNED_FIELD == kind)
                {
                    corruptConnectField(connect);
                }
                emit(0, ConnectFlyweight.LENGTH, ConnectFlyweight.PROOF_OFFSET, HandshakeAuthenticator.CONNECT_LABEL);
            }
            else if (HandshakeHeader.ACCEPT_TYPE == type)
            {
                if (2 == target && Kind.WRONG_ORDER == kind)
                {
                    emit(0, HelloFlyweight.LENGTH, -1, null);
                    return;
                }
                emitReady();
            }
        }

        private void emitReady()
        {
            HandshakeHeader.write(buffer, 0, HandshakeHeader.READY_TYPE, HandshakeHeader.LENGTH);
            emit(0, HandshakeHeader.LENGTH, -1, null);
        }

        private void corruptConnectField(final ConnectFlyweight connect)
        {
            outOfRange = true;
            final QpInfoCodec.QpInfo qp = HandshakeFixtures.qpInfo(11);
            switch (random.nextInt(15))
            {
                case 13 -> connect.catchUpPosition(random.nextBoolean() ? -3 - random.nextInt(1000) :
                    32L * random.nextInt(1000) + 1 + random.nextInt(31));
                case 0 -> connect.ring().set(0, 3L * TERM_LENGTH, 1);
                case 1 -> connect.ring().set(0x1000_0001L, 3L * TERM_LENGTH, 1);
                case 2 -> connect.ring().set(-64L, 3L * TERM_LENGTH, 1);
                case 3 -> connect.ring().set(0x1000_0000L, 3L * TERM_LENGTH + 32 * (1 + random.nextInt(100)), 1);
                case 4 -> connect.ring().set(0x1000_0000L, random.nextLong(), 1);
                case 5 -> connect.counter().set(0x2000_0000L, random.nextInt(64), 2);
                case 6 -> connect.counter().set(0x2000_0004L, SlotLayout.BLOCK_LENGTH, 2);
                case 7 -> connect.qpInfo(withQpn(qp, random.nextBoolean() ? 0 : (1 << 24) + random.nextInt(1000)));
                case 8 ->
                {
                    qp.psn = -1 - random.nextInt(1000);
                    connect.qpInfo(qp);
                }
                case 9 ->
                {
                    qp.pathMtu = 100 + random.nextInt(5000);
                    if (Integer.bitCount(qp.pathMtu) == 1 && qp.pathMtu >= 256 && qp.pathMtu <= 4096)
                    {
                        qp.pathMtu = 3000;
                    }
                    connect.qpInfo(qp);
                }
                case 10 ->
                {
                    qp.maxInline = 1025 + random.nextInt(100_000);
                    connect.qpInfo(qp);
                }
                case 11 ->
                {
                    connect.qpInfo(qp);
                    buffer.putInt(ConnectFlyweight.QP_INFO_OFFSET + QpInfoCodec.ADDRESS_LENGTH_OFFSET,
                        random.nextBoolean() ? -1 : 65 + random.nextInt(1000), LITTLE_ENDIAN);
                }
                case 12 ->
                {
                    // commit modes: an unknown mode, credits with counter, or imm with no or too many credits
                    switch (random.nextInt(3))
                    {
                        case 0 -> connect.commit(2 + random.nextInt(100));
                        case 1 -> connect.commit(0).receiveCredits(1 + random.nextInt(100));
                        default -> connect.commit(1)
                            .receiveCredits(random.nextBoolean() ? 0 : 16385 + random.nextInt(9));
                    }
                }
                default ->
                {
                    qp.lid = 0x10000 + random.nextInt(1000);
                    connect.qpInfo(qp);
                }
            }
        }

        private static QpInfoCodec.QpInfo withQpn(final QpInfoCodec.QpInfo qp, final int qpn)
        {
            qp.qpn = qpn;
            return qp;
        }

        /** Sign (for CONNECT), then break the message as the plan says, then queue it. */
        private void emit(final int offset, final int length, final int proofOffset, final byte[] label)
        {
            final int messageTarget = HandshakeHeader.type(buffer, 0) == HandshakeHeader.HELLO_TYPE ? 0 :
                HandshakeHeader.type(buffer, 0) == HandshakeHeader.CONNECT_TYPE ? 1 : 2;
            if (proofOffset > 0)
            {
                signer.sign(label, clientNonce, serverNonce, helloBytes, buffer, offset, proofOffset);
            }
            byte[] bytes = new byte[length];
            buffer.getBytes(offset, bytes);
            if (messageTarget == target)
            {
                switch (kind)
                {
                    case RANDOM_BYTES ->
                    {
                        bytes = new byte[random.nextInt(HandshakeHeader.MAX_MESSAGE_LENGTH + 1)];
                        random.nextBytes(bytes);
                        if (bytes.length >= 4 && random.nextBoolean())
                        {
                            new UnsafeBuffer(bytes).putInt(0, HandshakeHeader.MAGIC, LITTLE_ENDIAN);
                        }
                    }
                    case FLIP_BYTES ->
                    {
                        final int flips = 1 + random.nextInt(4);
                        for (int i = 0; i < flips; i++)
                        {
                            bytes[random.nextInt(bytes.length)] ^= (byte)(1 + random.nextInt(255));
                        }
                    }
                    case RESIZED ->
                    {
                        final int newLength = Math.max(0, Math.min(HandshakeHeader.MAX_MESSAGE_LENGTH,
                            length + (random.nextBoolean() ? -1 - random.nextInt(length) : 1 + random.nextInt(64))));
                        bytes = java.util.Arrays.copyOf(bytes, newLength);
                        if (newLength >= HandshakeHeader.LENGTH && random.nextBoolean())
                        {
                            new UnsafeBuffer(bytes).putInt(HandshakeHeader.LENGTH_OFFSET, newLength, LITTLE_ENDIAN);
                        }
                    }
                    default ->
                    {
                    }
                }
            }
            toPublisher.add(bytes);
        }

        public int receive(final MutableDirectBuffer into, final long timeoutMs) throws HandshakeException
        {
            final byte[] bytes = toPublisher.poll();
            if (null == bytes)
            {
                throw new HandshakeException(HandshakeException.Reason.TIMEOUT, "hostile subscriber went quiet");
            }
            into.putBytes(0, bytes);
            return bytes.length;
        }

        public String peer()
        {
            return "hostile-subscriber";
        }

        public void close()
        {
        }
    }

    // ---------------------------------------------------------------- subscriber side under attack

    @Test
    void shouldRejectHostilePublishersAndReleaseWhatWasRegistered()
    {
        final Random random = new Random(0xfeed);
        final HandshakeAuthenticator goodSigner = new HandshakeAuthenticator(SECRET);
        final HandshakeAuthenticator badSigner = new HandshakeAuthenticator(WRONG_SECRET);
        int rejections = 0;
        for (int run = 0; run < SUBSCRIBER_RUNS; run++)
        {
            final Kind kind = Kind.values()[random.nextInt(Kind.values().length)];
            final int target = 1 + random.nextInt(2); // 1 CHALLENGE, 2 ACCEPT
            final HostilePublisher peer = new HostilePublisher(random, kind, target,
                Kind.WRONG_SECRET == kind ? badSigner : goodSigner);
            final var resources = new HandshakeFixtures.CountingSubscriberResources();
            final SubscriberHandshake handshake =
                new SubscriberHandshake(new HandshakeAuthenticator(SECRET), STREAM_ID, 0, false, 0, 10,
                    ConnectFlyweight.CATCH_UP_NONE);
            boolean succeeded = false;
            try
            {
                handshake.run(peer, resources);
                succeeded = true;
            }
            catch (final HandshakeException ex)
            {
                rejections++;
                if (Kind.RESIGNED_FIELD == kind)
                {
                    assertTrue(ex.getMessage().contains(1 == target ? "CHALLENGE." : "ACCEPT."), ex.getMessage());
                }
            }
            catch (final RuntimeException ex)
            {
                fail("run " + run + " kind " + kind + " escaped with " + ex, ex);
            }
            assertEquals(succeeded ? 1 : 0, resources.live(), "run " + run + " " + kind);
            if (Kind.WRONG_SECRET == kind || (Kind.RESIGNED_FIELD == kind && 1 == target))
            {
                assertEquals(0, resources.prepared.get(), "run " + run + ": registered for a bad publisher");
            }
            if (Kind.RESIGNED_FIELD == kind || Kind.WRONG_SECRET == kind)
            {
                assertEquals(0, resources.connected.get());
                assertFalse(succeeded);
            }
            if (Kind.VALID == kind)
            {
                assertTrue(succeeded);
            }
        }
        assertTrue(rejections > SUBSCRIBER_RUNS / 2);
    }

    /** Plays a publisher that breaks its CHALLENGE or ACCEPT. */
    static final class HostilePublisher implements MessageTransport
    {
        private final Random random;
        private final Kind kind;
        private final int target;
        private final HandshakeAuthenticator signer;
        private final ArrayDeque<byte[]> toSubscriber = new ArrayDeque<>();
        private final ExpandableArrayBuffer buffer = new ExpandableArrayBuffer(1024);
        /** The HELLO received: the proofs cover it. */
        private final byte[] helloBytes = new byte[HelloFlyweight.LENGTH];
        private final byte[] clientNonce = new byte[32];
        private final byte[] serverNonce = new byte[32];

        HostilePublisher(final Random random, final Kind kind, final int target, final HandshakeAuthenticator signer)
        {
            this.random = random;
            this.kind = kind;
            this.target = target;
            this.signer = signer;
            random.nextBytes(serverNonce);
        }

        public void send(final DirectBuffer message, final int offset, final int length)
        {
            final short type = HandshakeHeader.type(message, offset);
            if (HandshakeHeader.HELLO_TYPE == type)
            {
                message.getBytes(offset + HelloFlyweight.CLIENT_NONCE_OFFSET, clientNonce);
                message.getBytes(offset, helloBytes);
                final ChallengeFlyweight challenge = new ChallengeFlyweight().wrap(buffer, 0).writeHeader()
                    .sessionId(1).streamId(STREAM_ID).initialTermId(random.nextInt()).termLength(TERM_LENGTH)
                    .mtuLength(1408).providerId(1 + random.nextInt(3)).serverNonce(serverNonce);
                if (1 == target && Kind.RESIGNED_FIELD == kind)
                {
                    switch (random.nextInt(6))
                    {
                        case 0 -> challenge.termLength(TERM_LENGTH + 32);
                        case 1 -> challenge.termLength(random.nextBoolean() ? 32 * 1024 : Integer.MIN_VALUE);
                        case 2 -> challenge.mtuLength(random.nextInt(64));
                        case 3 -> challenge.mtuLength(1409);
                        case 4 -> challenge.providerId(random.nextBoolean() ? 0 : 4 + random.nextInt(100));
                        default -> challenge.streamId(STREAM_ID + 1 + random.nextInt(100));
                    }
                }
                signer.sign(HandshakeAuthenticator.CHALLENGE_LABEL, clientNonce, serverNonce, helloBytes, buffer, 0,
                    ChallengeFlyweight.PROOF_OFFSET);
                queue(1, ChallengeFlyweight.LENGTH);
            }
            else if (HandshakeHeader.CONNECT_TYPE == type)
            {
                final long join = 32L * random.nextInt(1000);
                final AcceptFlyweight accept = new AcceptFlyweight().wrap(buffer, 0).writeHeader()
                    .joinPosition(join).qpInfo(HandshakeFixtures.qpInfo(33));
                accept.status().set(0x3000_0000L, SlotLayout.BLOCK_LENGTH, 5);
                if (join > 0 && random.nextBoolean())
                {
                    // a granted catch-up: from below the join, with the READ-only log region
                    accept.catchUpPosition(32L * random.nextInt((int)(join / 32))).oldestPosition(0)
                        .log().set(0x4000_0000L, 3L * TERM_LENGTH, 6);
                }
                else
                {
                    accept.catchUpPosition(join).oldestPosition(-1).log().set(0, 0, 0);
                }
                if (2 == target && Kind.RESIGNED_FIELD == kind)
                {
                    switch (random.nextInt(10))
                    {
                        case 0 -> accept.status().set(0, SlotLayout.BLOCK_LENGTH, 5);
                        case 1 -> accept.status().set(0x3000_0003L, SlotLayout.BLOCK_LENGTH, 5);
                        case 2 -> accept.status().set(0x3000_0000L, 8, 5);
                        case 3 -> accept.joinPosition(-32L * (1 + random.nextInt(100)));
                        case 4 -> accept.joinPosition(33);
                        case 5 -> accept.catchUpPosition(join + 32L * (1 + random.nextInt(100)));
                        case 6 -> accept.catchUpPosition(join - TERM_LENGTH - 32).joinPosition(join + TERM_LENGTH)
                            .log().set(0x4000_0000L, 3L * TERM_LENGTH, 6);
                        case 7 -> accept.catchUpPosition(join).log().set(0x4000_0000L, 0, 6);
                        case 8 -> accept.catchUpPosition(join - 32).joinPosition(join + 32)
                            .log().set(0x4000_0000L, 3L * TERM_LENGTH + 4096, 6);
                        default -> accept.qpInfo(withPsn(HandshakeFixtures.qpInfo(33), 1 << 24));
                    }
                }
                signer.sign(HandshakeAuthenticator.ACCEPT_LABEL, clientNonce, serverNonce, helloBytes, buffer, 0,
                    AcceptFlyweight.PROOF_OFFSET);
                queue(2, AcceptFlyweight.LENGTH);
            }
        }

        private static QpInfoCodec.QpInfo withPsn(final QpInfoCodec.QpInfo qp, final int psn)
        {
            qp.psn = psn;
            return qp;
        }

        private void queue(final int messageTarget, final int length)
        {
            byte[] bytes = new byte[length];
            buffer.getBytes(0, bytes);
            if (messageTarget == target)
            {
                switch (kind)
                {
                    case RANDOM_BYTES ->
                    {
                        bytes = new byte[random.nextInt(HandshakeHeader.MAX_MESSAGE_LENGTH + 1)];
                        random.nextBytes(bytes);
                    }
                    case FLIP_BYTES -> bytes[random.nextInt(bytes.length)] ^= (byte)(1 + random.nextInt(255));
                    case RESIZED -> bytes = java.util.Arrays.copyOf(bytes, random.nextInt(length));
                    case WRONG_ORDER ->
                    {
                        HandshakeHeader.write(buffer, 0, HandshakeHeader.READY_TYPE, HandshakeHeader.LENGTH);
                        bytes = new byte[HandshakeHeader.LENGTH];
                        buffer.getBytes(0, bytes);
                    }
                    default ->
                    {
                    }
                }
            }
            toSubscriber.add(bytes);
        }

        public int receive(final MutableDirectBuffer into, final long timeoutMs) throws HandshakeException
        {
            final byte[] bytes = toSubscriber.poll();
            if (null == bytes)
            {
                throw new HandshakeException(HandshakeException.Reason.TIMEOUT, "hostile publisher went quiet");
            }
            into.putBytes(0, bytes);
            return bytes.length;
        }

        public String peer()
        {
            return "hostile-publisher";
        }

        public void close()
        {
        }
    }
}
