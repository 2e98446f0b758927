package io.verbus.media.rdma.protocol;

import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * CHALLENGE, publisher to subscriber: the log's shape, the provider, the publisher's nonce and its proof
 * that it knows the shared secret (HMAC over both nonces and every byte before the proof).
 * <pre>
 *  12 sessionId int | 16 streamId int | 20 initialTermId int | 24 termLength int | 28 mtuLength int
 *  32 providerId int | 36 reserved int | 40 serverNonce 32 bytes | 72 proof 32 bytes | 104 end
 * </pre>
 */
public final class ChallengeFlyweight
{
    public static final int SESSION_ID_OFFSET = 12;
    public static final int STREAM_ID_OFFSET = 16;
    public static final int INITIAL_TERM_ID_OFFSET = 20;
    public static final int TERM_LENGTH_OFFSET = 24;
    public static final int MTU_LENGTH_OFFSET = 28;
    public static final int PROVIDER_ID_OFFSET = 32;
    public static final int RESERVED_OFFSET = 36;
    public static final int SERVER_NONCE_OFFSET = 40;
    public static final int PROOF_OFFSET = SERVER_NONCE_OFFSET + HandshakeHeader.NONCE_LENGTH;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    private MutableDirectBuffer buffer;
    private int offset;

    public ChallengeFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public ChallengeFlyweight writeHeader()
    {
        HandshakeHeader.write(buffer, offset, HandshakeHeader.CHALLENGE_TYPE, LENGTH);
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

    public int sessionId()
    {
        return buffer.getInt(offset + SESSION_ID_OFFSET, LITTLE_ENDIAN);
    }

    public ChallengeFlyweight sessionId(final int value)
    {
        buffer.putInt(offset + SESSION_ID_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int streamId()
    {
        return buffer.getInt(offset + STREAM_ID_OFFSET, LITTLE_ENDIAN);
    }

    public ChallengeFlyweight streamId(final int value)
    {
        buffer.putInt(offset + STREAM_ID_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int initialTermId()
    {
        return buffer.getInt(offset + INITIAL_TERM_ID_OFFSET, LITTLE_ENDIAN);
    }

    public ChallengeFlyweight initialTermId(final int value)
    {
        buffer.putInt(offset + INITIAL_TERM_ID_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int termLength()
    {
        return buffer.getInt(offset + TERM_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    public ChallengeFlyweight termLength(final int value)
    {
        buffer.putInt(offset + TERM_LENGTH_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int mtuLength()
    {
        return buffer.getInt(offset + MTU_LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    public ChallengeFlyweight mtuLength(final int value)
    {
        buffer.putInt(offset + MTU_LENGTH_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int providerId()
    {
        return buffer.getInt(offset + PROVIDER_ID_OFFSET, LITTLE_ENDIAN);
    }

    public ChallengeFlyweight providerId(final int value)
    {
        buffer.putInt(offset + PROVIDER_ID_OFFSET, value, LITTLE_ENDIAN);
        return this;
    }

    public int reserved()
    {
        return buffer.getInt(offset + RESERVED_OFFSET, LITTLE_ENDIAN);
    }

    public void getServerNonce(final byte[] dst)
    {
        buffer.getBytes(offset + SERVER_NONCE_OFFSET, dst, 0, HandshakeHeader.NONCE_LENGTH);
    }

    public ChallengeFlyweight serverNonce(final byte[] src)
    {
        buffer.putBytes(offset + SERVER_NONCE_OFFSET, src, 0, HandshakeHeader.NONCE_LENGTH);
        return this;
    }
}
