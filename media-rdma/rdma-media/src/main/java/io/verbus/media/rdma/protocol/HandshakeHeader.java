package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The 12-byte header in front of every control-connection message.
 * <pre>
 *   0  magic    int   'VRBS'
 *   4  version  short protocol version of the sender of this message
 *   6  type     short {@link #HELLO_TYPE} .. {@link #REJECT_TYPE}
 *   8  length   int   whole message length, header included
 * </pre>
 * All fields little-endian. Accessors are static over a buffer and offset, as Aeron's descriptors.
 */
public final class HandshakeHeader
{
    public static final int MAGIC = 0x53425256; // "VRBS" read as little-endian bytes
    /**
     * 2: every registered region in CONNECT and ACCEPT is one {@link RemoteRegionFlyweight} (address, length, rkey);
     * version 1 laid each out differently, so the two do not interoperate.
     */
    /** 3 (2026-12-04): every proof also covers the HELLO, so its flags and group tag cannot be altered in flight. */
    public static final short VERSION = 3;
    public static final short MIN_SUPPORTED_VERSION = 3;
    public static final short MAX_SUPPORTED_VERSION = 3;

    public static final short HELLO_TYPE = 1;
    public static final short CHALLENGE_TYPE = 2;
    public static final short CONNECT_TYPE = 3;
    public static final short ACCEPT_TYPE = 4;
    public static final short READY_TYPE = 5;
    public static final short REJECT_TYPE = 6;

    public static final int MAGIC_OFFSET = 0;
    public static final int VERSION_OFFSET = 4;
    public static final int TYPE_OFFSET = 6;
    public static final int LENGTH_OFFSET = 8;
    public static final int LENGTH = 12;

    /** No message is longer; a reader refuses a header announcing more before reading the body. */
    public static final int MAX_MESSAGE_LENGTH = 512;

    public static final int NONCE_LENGTH = 32;
    public static final int PROOF_LENGTH = 32;

    private HandshakeHeader()
    {
    }

    public static void write(final MutableDirectBuffer buffer, final int offset, final short type, final int length)
    {
        buffer.putInt(offset + MAGIC_OFFSET, MAGIC, LITTLE_ENDIAN);
        buffer.putShort(offset + VERSION_OFFSET, VERSION, LITTLE_ENDIAN);
        buffer.putShort(offset + TYPE_OFFSET, type, LITTLE_ENDIAN);
        buffer.putInt(offset + LENGTH_OFFSET, length, LITTLE_ENDIAN);
    }

    public static int magic(final DirectBuffer buffer, final int offset)
    {
        return buffer.getInt(offset + MAGIC_OFFSET, LITTLE_ENDIAN);
    }

    public static short version(final DirectBuffer buffer, final int offset)
    {
        return buffer.getShort(offset + VERSION_OFFSET, LITTLE_ENDIAN);
    }

    public static short type(final DirectBuffer buffer, final int offset)
    {
        return buffer.getShort(offset + TYPE_OFFSET, LITTLE_ENDIAN);
    }

    public static int length(final DirectBuffer buffer, final int offset)
    {
        return buffer.getInt(offset + LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    /** The exact length of a message of the given type, or -1 for a variable length (REJECT) or unknown type. */
    public static int expectedLength(final short type)
    {
        return switch (type)
        {
            case HELLO_TYPE -> HelloFlyweight.LENGTH;
            case CHALLENGE_TYPE -> ChallengeFlyweight.LENGTH;
            case CONNECT_TYPE -> ConnectFlyweight.LENGTH;
            case ACCEPT_TYPE -> AcceptFlyweight.LENGTH;
            case READY_TYPE -> LENGTH;
            default -> -1;
        };
    }

    public static String typeName(final short type)
    {
        return switch (type)
        {
            case HELLO_TYPE -> "HELLO";
            case CHALLENGE_TYPE -> "CHALLENGE";
            case CONNECT_TYPE -> "CONNECT";
            case ACCEPT_TYPE -> "ACCEPT";
            case READY_TYPE -> "READY";
            case REJECT_TYPE -> "REJECT";
            default -> "UNKNOWN(" + type + ")";
        };
    }
}
