package io.verbus.media.rdma.protocol;

/**
 * CHALLENGE, publisher to subscriber: the log's shape, the provider, the publisher's nonce and its proof
 * that it knows the shared secret (HMAC over both nonces and every byte before the proof).
 * <pre>
 *  12 sessionId int | 16 streamId int | 20 initialTermId int | 24 termLength int | 28 mtuLength int
 *  32 providerId int | 36 commit int | 40 serverNonce 32 bytes | 72 proof 32 bytes | 104 end
 * </pre>
 * {@code commit}: the publisher's configured commit mode ({@link #COMMIT_COUNTER}, {@link #COMMIT_IMM},
 * {@link #COMMIT_AUTO}) in the low byte, plus {@link #COMMIT_AUTO_PREFERS_IMM_FLAG} when it is auto and its own device
 * asks for imm. The word was reserved (zero) before commit modes: a zero is today's counter mode.
 */
public final class ChallengeFlyweight extends HandshakeFlyweight<ChallengeFlyweight>
{
    public static final int SESSION_ID_OFFSET = 12;
    public static final int STREAM_ID_OFFSET = 16;
    public static final int INITIAL_TERM_ID_OFFSET = 20;
    public static final int TERM_LENGTH_OFFSET = 24;
    public static final int MTU_LENGTH_OFFSET = 28;
    public static final int PROVIDER_ID_OFFSET = 32;
    public static final int COMMIT_OFFSET = 36;
    public static final int SERVER_NONCE_OFFSET = 40;
    public static final int PROOF_OFFSET = SERVER_NONCE_OFFSET + HandshakeHeader.NONCE_LENGTH;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;
    public static final int COMMIT_COUNTER = 0;
    public static final int COMMIT_IMM = 1;
    public static final int COMMIT_AUTO = 2;
    public static final int COMMIT_AUTO_PREFERS_IMM_FLAG = 0x100;

    public ChallengeFlyweight()
    {
        // writeHeader zeroes the commit word (counter mode) like a reserved word; it is validated on its own.
        super(HandshakeHeader.CHALLENGE_TYPE, LENGTH, COMMIT_OFFSET);
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

    public int commit()
    {
        return getInt(COMMIT_OFFSET);
    }

    public ChallengeFlyweight commit(final int value)
    {
        return putInt(COMMIT_OFFSET, value);
    }

    /**
     * @param code a commit mode's wire code.
     * @return its channel-key name ({@code counter}, {@code imm}, {@code auto}) or the number.
     */
    public static String commitName(final int code)
    {
        return switch (code)
        {
            case COMMIT_COUNTER -> "counter";
            case COMMIT_IMM -> "imm";
            case COMMIT_AUTO -> "auto";
            default -> Integer.toString(code);
        };
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
