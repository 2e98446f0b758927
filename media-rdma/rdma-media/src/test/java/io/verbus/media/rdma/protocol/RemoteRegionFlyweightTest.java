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

        assertEquals(0x1000_0000L, connect.ring().address());
        assertEquals(3L * TERM_LENGTH, connect.ring().length());
        assertEquals(-1, connect.ring().rkey());
        assertEquals(0x2000_0000L, connect.counter().address());
        assertEquals(SlotLayout.BLOCK_LENGTH, connect.counter().length());
        assertEquals(-2, connect.counter().rkey());
        assertEquals(ChallengeFlyweight.COMMIT_IMM, connect.commit());
        assertEquals(77, connect.receiveCredits());
        assertEquals(0, connect.reserved());
        assertEquals(-1L, connect.catchUpPosition());
        connect.getQpInfo(scratch);
        assertEquals(11, scratch.qpn);
        assertEquals(208, ConnectFlyweight.LENGTH);
    }

    @Test
    void shouldKeepEveryAcceptFieldApartFromItsRegions()
    {
        final AcceptFlyweight accept = validAccept();
        accept.log().set(0x4000_0000L, 3L * TERM_LENGTH, -3);

        assertEquals(0x3000_0000L, accept.status().address());
        assertEquals(SlotLayout.BLOCK_LENGTH, accept.status().length());
        assertEquals(-4, accept.status().rkey());
        assertEquals(0x4000_0000L, accept.log().address());
        assertEquals(3L * TERM_LENGTH, accept.log().length());
        assertEquals(-3, accept.log().rkey());
        assertEquals(4096L, accept.joinPosition());
        assertEquals(4096L, accept.catchUpPosition());
        assertEquals(-1L, accept.oldestPosition());
        assertEquals(0, accept.reserved());
        accept.getQpInfo(scratch);
        assertEquals(33, scratch.qpn);
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
        assertConnectOutOfRange(connect -> connect.ring().length(3L * TERM_LENGTH + 4096));
        assertConnectOutOfRange(connect -> connect.ring().address(0x1000_0010L)); // not frame aligned
        assertConnectOutOfRange(connect -> connect.counter().length(SlotLayout.BLOCK_LENGTH * 2L));
        assertConnectOutOfRange(connect -> connect.counter().address(0));
        assertConnectOutOfRange(connect -> connect.counter().address(-8L)); // wraps the address space
    }

    @Test
    void shouldRejectEveryAcceptRegionOfTheWrongLengthOrAddress()
    {
        assertDoesNotThrow(() -> HandshakeValidator.validateAccept(validAccept(), TERM_LENGTH, scratch));
        assertAcceptOutOfRange(accept -> accept.status().address(0x3000_0004L));
        assertAcceptOutOfRange(accept -> accept.status().length(8));
        assertAcceptOutOfRange(accept -> accept.log().rkey(6)); // no catch-up granted: the log must be all 0

        final AcceptFlyweight granted = validAccept().catchUpPosition(0);
        granted.log().set(0x4000_0000L, 3L * TERM_LENGTH, 6);
        assertDoesNotThrow(() -> HandshakeValidator.validateAccept(granted, TERM_LENGTH, scratch));
        granted.log().length(2L * TERM_LENGTH);
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
