package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * CONNECT, subscriber to publisher, sent only after the publisher's proof checked out: the subscriber's
 * ring (the three term partitions) and its position-counter block, both registered REMOTE_WRITE only,
 * its QP block, and its own proof.
 * <pre>
 *  12 reserved int | 16 ringAddress long | 24 ringLength long | 32 ringRkey int | 36 counterRkey int
 *  40 counterAddress long | 48 counterLength int | 52 reserved int | 56 qpInfo 104 bytes
 * 160 proof 32 bytes | 192 end
 * </pre>
 */
public final class ConnectFlyweight
{
    public static final int RESERVED_OFFSET = 12;
    public static final int RING_ADDRESS_OFFSET = 16;
    public static final int RING_LENGTH_OFFSET = 24;
    public static final int RING_RKEY_OFFSET = 32;
    public static final int COUNTER_RKEY_OFFSET = 36;
    public static final int COUNTER_ADDRESS_OFFSET = 40;
    public static final int COUNTER_LENGTH_OFFSET = 48;
    public static final int RESERVED2_OFFSET = 52;
    public static final int QP_INFO_OFFSET = 56;
    public static final int PROOF_OFFSET = QP_INFO_OFFSET + QpInfoCodec.LENGTH;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    private MutableDirectBuffer buffer;
    private int offset;

    public ConnectFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public ConnectFlyweight writeHeader()
    {
        HandshakeHeader.write(buffer, offset, HandshakeHeader.CONNECT_TYPE, LENGTH);
        buffer.putInt(offset + RESERVED_OFFSET, 0, LITTLE_ENDIAN);
        buffer.putInt(offset + RESERVED2_OFFSET, 0, LITTLE_ENDIAN);
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
        return buffer.getInt(offset + RESERVED_OFFSET, LITTLE_ENDIAN) | buffer.getInt(offset + RESERVED2_OFFSET,
            LITTLE_ENDIAN);
    }

    public long ringAddress()
    {
        return buffer.getLong(offset + RING_ADDRESS_OFFSET, LITTLE_ENDIAN);
    }

    public ConnectFlyweight ringAddress(final long value)
    {
        buffer.putLong(offset + RING_ADDRESS_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public long ringLength()
    {
        return buffer.getLong(offset + RING_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    public ConnectFlyweight ringLength(final long value)
    {
        buffer.putLong(offset + RING_LENGTH_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int ringRkey()
    {
        return buffer.getInt(offset + RING_RKEY_OFFSET, LITTLE_ENDIAN);
    }

    public ConnectFlyweight ringRkey(final int value)
    {
        buffer.putInt(offset + RING_RKEY_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int counterRkey()
    {
        return buffer.getInt(offset + COUNTER_RKEY_OFFSET, LITTLE_ENDIAN);
    }

    public ConnectFlyweight counterRkey(final int value)
    {
        buffer.putInt(offset + COUNTER_RKEY_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public long counterAddress()
    {
        return buffer.getLong(offset + COUNTER_ADDRESS_OFFSET, LITTLE_ENDIAN);
    }

    public ConnectFlyweight counterAddress(final long value)
    {
        buffer.putLong(offset + COUNTER_ADDRESS_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int counterLength()
    {
        return buffer.getInt(offset + COUNTER_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    public ConnectFlyweight counterLength(final int value)
    {
        buffer.putInt(offset + COUNTER_LENGTH_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public void getQpInfo(final QpInfoCodec.QpInfo info)
    {
        QpInfoCodec.decode(buffer, offset + QP_INFO_OFFSET, info);
    }

    public ConnectFlyweight qpInfo(final QpInfoCodec.QpInfo info)
    {
        QpInfoCodec.encode(buffer, offset + QP_INFO_OFFSET, info);
        return this;
    }

    public DirectBuffer directBuffer()
    {
        return buffer;
    }
}
