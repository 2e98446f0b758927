package io.verbus.media.rdma.protocol;

/**
 * HELLO, subscriber to publisher: the versions it speaks, the stream it wants, its group tag and its nonce.
 * <pre>
 *  12 minVersion short | 14 maxVersion short | 16 streamId int | 20 flags int | 24 groupTag long
 *  32 clientNonce 32 bytes | 64 end
 * </pre>
 */
public final class HelloFlyweight extends HandshakeFlyweight<HelloFlyweight>
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

    public HelloFlyweight()
    {
        super(HandshakeHeader.HELLO_TYPE, LENGTH);
    }

    public short minVersion()
    {
        return getShort(MIN_VERSION_OFFSET);
    }

    public HelloFlyweight minVersion(final short value)
    {
        return putShort(MIN_VERSION_OFFSET, value);
    }

    public short maxVersion()
    {
        return getShort(MAX_VERSION_OFFSET);
    }

    public HelloFlyweight maxVersion(final short value)
    {
        return putShort(MAX_VERSION_OFFSET, value);
    }

    public int streamId()
    {
        return getInt(STREAM_ID_OFFSET);
    }

    public HelloFlyweight streamId(final int value)
    {
        return putInt(STREAM_ID_OFFSET, value);
    }

    public int flags()
    {
        return getInt(FLAGS_OFFSET);
    }

    public HelloFlyweight flags(final int value)
    {
        return putInt(FLAGS_OFFSET, value);
    }

    public long groupTag()
    {
        return getLong(GROUP_TAG_OFFSET);
    }

    public HelloFlyweight groupTag(final long value)
    {
        return putLong(GROUP_TAG_OFFSET, value);
    }

    public void getClientNonce(final byte[] dst)
    {
        getNonce(CLIENT_NONCE_OFFSET, dst);
    }

    public HelloFlyweight clientNonce(final byte[] src)
    {
        return putNonce(CLIENT_NONCE_OFFSET, src);
    }
}
