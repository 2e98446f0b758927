package io.verbus.media.rdma.protocol;

import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * ACCEPT, publisher to subscriber: the status slot the subscriber WRITEs its consumed position into
 * (registered REMOTE_WRITE only, this subscriber's slot only), the join position, the publisher's QP block
 * and a proof binding all of it to this handshake.
 * <pre>
 *  12 reserved int | 16 statusAddress long | 24 statusLength int | 28 statusRkey int | 32 joinPosition long
 *  40 qpInfo 104 bytes | 144 proof 32 bytes | 176 end
 * </pre>
 */
public final class AcceptFlyweight
{
    public static final int RESERVED_OFFSET = 12;
    public static final int STATUS_ADDRESS_OFFSET = 16;
    public static final int STATUS_LENGTH_OFFSET = 24;
    public static final int STATUS_RKEY_OFFSET = 28;
    public static final int JOIN_POSITION_OFFSET = 32;
    public static final int QP_INFO_OFFSET = 40;
    public static final int PROOF_OFFSET = QP_INFO_OFFSET + QpInfoCodec.LENGTH;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    private MutableDirectBuffer buffer;
    private int offset;

    public AcceptFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public AcceptFlyweight writeHeader()
    {
        HandshakeHeader.write(buffer, offset, HandshakeHeader.ACCEPT_TYPE, LENGTH);
        buffer.putInt(offset + RESERVED_OFFSET, 0, LITTLE_ENDIAN);
        return this;
    }

    public MutableDirectBuffer buffer()
    {
        return buffer;
    }

    public int offset()
    {
        return offset;
    }

    public int reserved()
    {
        return buffer.getInt(offset + RESERVED_OFFSET, LITTLE_ENDIAN);
    }

    public long statusAddress()
    {
        return buffer.getLong(offset + STATUS_ADDRESS_OFFSET, LITTLE_ENDIAN);
    }

    public AcceptFlyweight statusAddress(final long value)
    {
        buffer.putLong(offset + STATUS_ADDRESS_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int statusLength()
    {
        return buffer.getInt(offset + STATUS_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    public AcceptFlyweight statusLength(final int value)
    {
        buffer.putInt(offset + STATUS_LENGTH_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int statusRkey()
    {
        return buffer.getInt(offset + STATUS_RKEY_OFFSET, LITTLE_ENDIAN);
    }

    public AcceptFlyweight statusRkey(final int value)
    {
        buffer.putInt(offset + STATUS_RKEY_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public long joinPosition()
    {
        return buffer.getLong(offset + JOIN_POSITION_OFFSET, LITTLE_ENDIAN);
    }

    public AcceptFlyweight joinPosition(final long value)
    {
        buffer.putLong(offset + JOIN_POSITION_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public void getQpInfo(final QpInfoCodec.QpInfo info)
    {
        QpInfoCodec.decode(buffer, offset + QP_INFO_OFFSET, info);
    }

    public AcceptFlyweight qpInfo(final QpInfoCodec.QpInfo info)
    {
        QpInfoCodec.encode(buffer, offset + QP_INFO_OFFSET, info);
        return this;
    }
}
