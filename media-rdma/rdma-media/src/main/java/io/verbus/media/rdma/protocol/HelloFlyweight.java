package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * HELLO, subscriber to publisher: the versions it speaks, the stream it wants, its group tag and its nonce.
 * <pre>
 *  12 minVersion short | 14 maxVersion short | 16 streamId int | 20 flags int | 24 groupTag long
 *  32 clientNonce 32 bytes | 64 end
 * </pre>
 */
public final class HelloFlyweight
{
    public static final int MIN_VERSION_OFFSET = 12;
    public static final int MAX_VERSION_OFFSET = 14;
    public static final int STREAM_ID_OFFSET = 16;
    public static final int FLAGS_OFFSET = 20;
    public static final int GROUP_TAG_OFFSET = 24;
    public static final int CLIENT_NONCE_OFFSET = 32;
    public static final int LENGTH = CLIENT_NONCE_OFFSET + HandshakeHeader.NONCE_LENGTH;

    /** The subscriber carries a group tag (for tagged flow control). */
    public static final int GROUP_TAG_FLAG = 1;
    public static final int KNOWN_FLAGS = GROUP_TAG_FLAG;

    private MutableDirectBuffer buffer;
    private int offset;

    public HelloFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public HelloFlyweight writeHeader()
    {
        HandshakeHeader.write(buffer, offset, HandshakeHeader.HELLO_TYPE, LENGTH);
        return this;
    }

    public DirectBuffer buffer()
    {
        return buffer;
    }

    public int offset()
    {
        return offset;
    }

    public short minVersion()
    {
        return buffer.getShort(offset + MIN_VERSION_OFFSET, LITTLE_ENDIAN);
    }

    public HelloFlyweight minVersion(final short value)
    {
        buffer.putShort(offset + MIN_VERSION_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public short maxVersion()
    {
        return buffer.getShort(offset + MAX_VERSION_OFFSET, LITTLE_ENDIAN);
    }

    public HelloFlyweight maxVersion(final short value)
    {
        buffer.putShort(offset + MAX_VERSION_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int streamId()
    {
        return buffer.getInt(offset + STREAM_ID_OFFSET, LITTLE_ENDIAN);
    }

    public HelloFlyweight streamId(final int value)
    {
        buffer.putInt(offset + STREAM_ID_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int flags()
    {
        return buffer.getInt(offset + FLAGS_OFFSET, LITTLE_ENDIAN);
    }

    public HelloFlyweight flags(final int value)
    {
        buffer.putInt(offset + FLAGS_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public long groupTag()
    {
        return buffer.getLong(offset + GROUP_TAG_OFFSET, LITTLE_ENDIAN);
    }

    public HelloFlyweight groupTag(final long value)
    {
        buffer.putLong(offset + GROUP_TAG_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public void getClientNonce(final byte[] dst)
    {
        buffer.getBytes(offset + CLIENT_NONCE_OFFSET, dst, 0, HandshakeHeader.NONCE_LENGTH);
    }

    public HelloFlyweight clientNonce(final byte[] src)
    {
        buffer.putBytes(offset + CLIENT_NONCE_OFFSET, src, 0, HandshakeHeader.NONCE_LENGTH);
        return this;
    }
}
