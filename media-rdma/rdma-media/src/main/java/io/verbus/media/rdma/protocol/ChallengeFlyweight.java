package io.verbus.media.rdma.protocol;

/**
 * CHALLENGE, publisher to subscriber: the log's shape, the provider, the publisher's nonce and its proof
 * that it knows the shared secret (HMAC over both nonces and every byte before the proof).
 * <pre>
 *  12 sessionId int | 16 streamId int | 20 initialTermId int | 24 termLength int | 28 mtuLength int
 *  32 providerId int | 36 reserved int | 40 serverNonce 32 bytes | 72 proof 32 bytes | 104 end
 * </pre>
 */
public final class ChallengeFlyweight extends HandshakeFlyweight<ChallengeFlyweight>
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

    public ChallengeFlyweight()
    {
        super(HandshakeHeader.CHALLENGE_TYPE, LENGTH, RESERVED_OFFSET);
    }

    public int sessionId()
    {
        return getInt(SESSION_ID_OFFSET);
    }

    public ChallengeFlyweight sessionId(final int value)
    {
        return putInt(SESSION_ID_OFFSET, value);
    }

    public int streamId()
    {
        return getInt(STREAM_ID_OFFSET);
    }

    public ChallengeFlyweight streamId(final int value)
    {
        return putInt(STREAM_ID_OFFSET, value);
    }

    public int initialTermId()
    {
        return getInt(INITIAL_TERM_ID_OFFSET);
    }

    public ChallengeFlyweight initialTermId(final int value)
    {
        return putInt(INITIAL_TERM_ID_OFFSET, value);
    }

    public int termLength()
    {
        return getInt(TERM_LENGTH_OFFSET);
    }

    public ChallengeFlyweight termLength(final int value)
    {
        return putInt(TERM_LENGTH_OFFSET, value);
    }

    public int mtuLength()
    {
        return getInt(MTU_LENGTH_OFFSET);
    }

    public ChallengeFlyweight mtuLength(final int value)
    {
        return putInt(MTU_LENGTH_OFFSET, value);
    }

    public int providerId()
    {
        return getInt(PROVIDER_ID_OFFSET);
    }

    public ChallengeFlyweight providerId(final int value)
    {
        return putInt(PROVIDER_ID_OFFSET, value);
    }

    public void getServerNonce(final byte[] dst)
    {
        getNonce(SERVER_NONCE_OFFSET, dst);
    }

    public ChallengeFlyweight serverNonce(final byte[] src)
    {
        return putNonce(SERVER_NONCE_OFFSET, src);
    }
}
