package io.verbus.media.rdma.protocol;

import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.util.function.Consumer;

import static io.verbus.media.rdma.protocol.HandshakeFixtures.TERM_LENGTH;
import static java.nio.ByteOrder.LITTLE_ENDIAN;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The one region descriptor CONNECT and ACCEPT carry (protocol version 2): where each message puts it, that it
 * overlaps no other field, and that the validator judges every region and reserved word the message holds.
 */
class RemoteRegionFlyweightTest
{
    private final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HandshakeHeader.MAX_MESSAGE_LENGTH]);
    private final QpInfoCodec.QpInfo scratch = new QpInfoCodec.QpInfo();

    @Test
    void shouldLayOutAddressLengthAndRkeyLittleEndianAtTheRegionsOffset()
    {
        final ConnectFlyweight connect = new ConnectFlyweight().wrap(buffer, 0).writeHeader();
        connect.counter().set(0x1122_3344_5566_7788L, 64, 0x0A0B_0C0D);

        final int base = ConnectFlyweight.COUNTER_REGION_OFFSET;
        assertEquals(0x1122_3344_5566_7788L,
            buffer.getLong(base + RemoteRegionFlyweight.ADDRESS_OFFSET, LITTLE_ENDIAN));
        assertEquals(64L, buffer.getLong(base + RemoteRegionFlyweight.LENGTH_OFFSET, LITTLE_ENDIAN));
        assertEquals(0x0A0B_0C0D, buffer.getInt(base + RemoteRegionFlyweight.RKEY_OFFSET, LITTLE_ENDIAN));
        assertEquals(20, RemoteRegionFlyweight.LENGTH);
    }

    @Test
    void shouldKeepEveryConnectFieldApartFromItsRegions()
    {
        final ConnectFlyweight connect = validConnect();
        connect.commit(ChallengeFlyweight.COMMIT_IMM).receiveCredits(77);

        assertRegion(connect.ring(), 0x1000_0000L, 3L * TERM_LENGTH, -1);
        assertRegion(connect.counter(), 0x2000_0000L, SlotLayout.BLOCK_LENGTH, -2);
        assertEquals(ChallengeFlyweight.COMMIT_IMM, connect.commit());
        assertEquals(77, connect.receiveCredits());
        assertOffer(connect, 11, ConnectFlyweight.CATCH_UP_NONE);
        assertEquals(208, ConnectFlyweight.LENGTH);
    }

    @Test
    void shouldKeepEveryAcceptFieldApartFromItsRegions()
    {
        final AcceptFlyweight accept = validAccept();
        accept.log().set(0x4000_0000L, 3L * TERM_LENGTH, -3);

        assertRegion(accept.status(), 0x3000_0000L, SlotLayout.BLOCK_LENGTH, -4);
        assertRegion(accept.log(), 0x4000_0000L, 3L * TERM_LENGTH, -3);
        assertEquals(4096L, accept.joinPosition());
        assertEquals(-1L, accept.oldestPosition());
        assertOffer(accept, 33, 4096L);
        assertEquals(224, AcceptFlyweight.LENGTH);
    }

    @Test
    void shouldRejectConnectWithNonZeroReservedWord()
    {
        final ConnectFlyweight connect = validConnect();
        assertDoesNotThrow(() -> HandshakeValidator.validateConnect(connect, TERM_LENGTH, scratch));

        buffer.putInt(ConnectFlyweight.RESERVED_OFFSET, 1, LITTLE_ENDIAN);

        assertReason(HandshakeException.Reason.MALFORMED,
            () -> HandshakeValidator.validateConnect(connect, TERM_LENGTH, scratch));
    }

    @Test
    void shouldRejectEveryConnectRegionOfTheWrongLengthOrAddress()
    {
        assertConnectOutOfRange(connect -> connect.ring().set(0x1000_0000L, 3L * TERM_LENGTH + 4096, -1));
        assertConnectOutOfRange(connect -> connect.ring().set(0x1000_0010L, 3L * TERM_LENGTH, -1)); // unaligned
        assertConnectOutOfRange(connect -> connect.counter().set(0x2000_0000L, SlotLayout.BLOCK_LENGTH * 2L, -2));
        assertConnectOutOfRange(connect -> connect.counter().set(0, SlotLayout.BLOCK_LENGTH, -2));
        assertConnectOutOfRange(connect -> connect.counter().set(-8L, SlotLayout.BLOCK_LENGTH, -2)); // wraps
    }

    @Test
    void shouldRejectEveryAcceptRegionOfTheWrongLengthOrAddress()
    {
        assertDoesNotThrow(() -> HandshakeValidator.validateAccept(validAccept(), TERM_LENGTH, scratch));
        assertAcceptOutOfRange(accept -> accept.status().set(0x3000_0004L, SlotLayout.BLOCK_LENGTH, -4));
        assertAcceptOutOfRange(accept -> accept.status().set(0x3000_0000L, 8, -4));
        assertAcceptOutOfRange(accept -> accept.log().set(0, 0, 6)); // no catch-up granted: the log must be all 0

        final AcceptFlyweight granted = validAccept().catchUpPosition(0);
        granted.log().set(0x4000_0000L, 3L * TERM_LENGTH, 6);
        assertDoesNotThrow(() -> HandshakeValidator.validateAccept(granted, TERM_LENGTH, scratch));
        granted.log().set(0x4000_0000L, 2L * TERM_LENGTH, 6);
        assertReason(HandshakeException.Reason.OUT_OF_RANGE,
            () -> HandshakeValidator.validateAccept(granted, TERM_LENGTH, scratch));
    }

    @Test
    void shouldRejectAMessageOfProtocolVersionOne()
    {
        final ConnectFlyweight connect = validConnect();
        assertDoesNotThrow(() -> HandshakeValidator.validateHeader(
            buffer, 0, ConnectFlyweight.LENGTH, HandshakeHeader.CONNECT_TYPE));
        buffer.putShort(HandshakeHeader.VERSION_OFFSET, (short)1, LITTLE_ENDIAN);

        assertReason(HandshakeException.Reason.UNSUPPORTED_VERSION, () -> HandshakeValidator.validateHeader(
            connect.buffer(), 0, ConnectFlyweight.LENGTH, HandshakeHeader.CONNECT_TYPE));
    }

    private ConnectFlyweight validConnect()
    {
        buffer.setMemory(0, buffer.capacity(), (byte)0x5A); // garbage that writeHeader and the setters must cover
        final ConnectFlyweight connect = new ConnectFlyweight().wrap(buffer, 0).writeHeader()
            .qpInfo(HandshakeFixtures.qpInfo(11)).catchUpPosition(ConnectFlyweight.CATCH_UP_NONE);
        connect.ring().set(0x1000_0000L, 3L * TERM_LENGTH, -1);
        connect.counter().set(0x2000_0000L, SlotLayout.BLOCK_LENGTH, -2);
        return connect;
    }

    private AcceptFlyweight validAccept()
    {
        buffer.setMemory(0, buffer.capacity(), (byte)0x5A);
        final AcceptFlyweight accept = new AcceptFlyweight().wrap(buffer, 0).writeHeader()
            .joinPosition(4096).qpInfo(HandshakeFixtures.qpInfo(33)).catchUpPosition(4096).oldestPosition(-1);
        accept.status().set(0x3000_0000L, SlotLayout.BLOCK_LENGTH, -4);
        accept.log().set(0, 0, 0);
        return accept;
    }

    private void assertConnectOutOfRange(final Consumer<ConnectFlyweight> corruption)
    {
        final ConnectFlyweight connect = validConnect();
        corruption.accept(connect);
        assertReason(HandshakeException.Reason.OUT_OF_RANGE,
            () -> HandshakeValidator.validateConnect(connect, TERM_LENGTH, scratch));
    }

    private void assertAcceptOutOfRange(final Consumer<AcceptFlyweight> corruption)
    {
        final AcceptFlyweight accept = validAccept();
        corruption.accept(accept);
        assertReason(HandshakeException.Reason.OUT_OF_RANGE,
            () -> HandshakeValidator.validateAccept(accept, TERM_LENGTH, scratch));
    }

    /** What both offers carry besides their regions: zero reserved words, the QP block and the catch-up. */
    private void assertOffer(final QpOfferFlyweight<?> offer, final int qpn, final long catchUpPosition)
    {
        assertEquals(0, offer.reserved());
        assertEquals(catchUpPosition, offer.catchUpPosition());
        offer.getQpInfo(scratch);
        assertEquals(qpn, scratch.qpn);
    }

    private static void assertRegion(
        final RemoteRegionFlyweight region, final long address, final long length, final int rkey)
    {
        assertEquals(address, region.address());
        assertEquals(length, region.length());
        assertEquals(rkey, region.rkey());
    }

    private static void assertReason(final HandshakeException.Reason reason, final Validation validation)
    {
        assertEquals(reason, assertThrows(HandshakeException.class, validation::run).reason());
    }

    @FunctionalInterface
    private interface Validation
    {
        void run() throws HandshakeException;
    }
}
