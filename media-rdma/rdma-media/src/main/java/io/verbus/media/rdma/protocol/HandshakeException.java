package io.verbus.media.rdma.protocol;

/**
 * A handshake that cannot proceed: a malformed or out-of-range field, a failed proof, a peer that went away.
 * The reason travels to the peer in a REJECT and into the log line; the message names the field.
 */
public final class HandshakeException extends Exception
{
    /** Why a handshake failed; the code is what a REJECT carries. */
    public enum Reason
    {
        MALFORMED(1),
        UNSUPPORTED_VERSION(2),
        OUT_OF_RANGE(3),
        AUTHENTICATION_FAILED(4),
        STREAM_MISMATCH(5),
        PROVIDER_MISMATCH(6),
        RESOURCES(7),
        TIMEOUT(8),
        PEER_REJECTED(9),
        CLOSED(10),
        SESSION_MISMATCH(11),
        COMMIT_MISMATCH(12);

        private final int code;

        Reason(final int code)
        {
            this.code = code;
        }

        public int code()
        {
            return code;
        }

        public static Reason fromCode(final int code)
        {
            for (final Reason r : values())
            {
                if (r.code == code)
                {
                    return r;
                }
            }
            return MALFORMED;
        }
    }

    private final Reason reason;
    private final Reason peerReason;

    public HandshakeException(final Reason reason, final String message)
    {
        this(reason, null, message);
    }

    public HandshakeException(final Reason reason, final String message, final Throwable cause)
    {
        super(message, cause);
        this.reason = reason;
        this.peerReason = null;
    }

    /**
     * A REJECT the peer sent: reason {@link Reason#PEER_REJECTED}, with the peer's own reason.
     *
     * @param peerReason the reason code the REJECT carried (a code no reason has reads as MALFORMED).
     * @param message    the message, naming the peer's reason and text.
     */
    public static HandshakeException rejectedByPeer(final Reason peerReason, final String message)
    {
        return new HandshakeException(Reason.PEER_REJECTED, peerReason, message);
    }

    private HandshakeException(final Reason reason, final Reason peerReason, final String message)
    {
        super(message);
        this.reason = reason;
        this.peerReason = peerReason;
    }

    public Reason reason()
    {
        return reason;
    }

    /** @return the reason the peer's REJECT gave when {@link #reason()} is PEER_REJECTED, else null. */
    public Reason peerReason()
    {
        return peerReason;
    }

    /** @return the message without the reason prefix (what a REJECT carries next to its reason code). */
    public String detail()
    {
        return super.getMessage();
    }

    public String getMessage()
    {
        return reason + ": " + super.getMessage();
    }
}
