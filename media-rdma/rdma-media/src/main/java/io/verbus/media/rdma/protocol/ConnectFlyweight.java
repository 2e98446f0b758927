package io.verbus.media.rdma.protocol;

/**
 * CONNECT, subscriber to publisher, sent only after the publisher's proof checked out: the subscriber's
 * ring (the three term partitions) and its position-counter block, both registered REMOTE_WRITE only,
 * its QP block, the catch-up it asks for (a position to READ the publisher's log from, {@link #CATCH_UP_NONE}
 * or {@link #CATCH_UP_TERM_START}), and its own proof.
 * <pre>
 *  12 commit int | 16 ringAddress long | 24 ringLength long | 32 ringRkey int | 36 counterRkey int
 *  40 counterAddress long | 48 counterLength int | 52 receiveCredits int | 56 qpInfo 104 bytes
 * 160 catchUpPosition long | 168 proof 32 bytes | 200 end
 * </pre>
 * {@code commit}: the mode the subscriber agreed to ({@link ChallengeFlyweight#COMMIT_COUNTER} or
 * {@link ChallengeFlyweight#COMMIT_IMM}); {@code receiveCredits}: with imm, how many WRITE_WITH_IMMs the publisher may
 * have in flight beyond what the subscriber reported consumed (the RECVs it keeps posted), else 0. Both words were
 * reserved (zero) before commit modes, which reads as today's counter mode.
 */
public final class ConnectFlyweight extends QpOfferFlyweight<ConnectFlyweight>
{
    public static final int COMMIT_OFFSET = 12;
    public static final int RING_ADDRESS_OFFSET = 16;
    public static final int RING_LENGTH_OFFSET = 24;
    public static final int RING_RKEY_OFFSET = 32;
    public static final int COUNTER_RKEY_OFFSET = 36;
    public static final int COUNTER_ADDRESS_OFFSET = 40;
    public static final int COUNTER_LENGTH_OFFSET = 48;
    public static final int RECEIVE_CREDITS_OFFSET = 52;
    public static final int QP_INFO_OFFSET = 56;
    public static final int CATCH_UP_POSITION_OFFSET = catchUpPositionOffset(QP_INFO_OFFSET);
    public static final int PROOF_OFFSET = CATCH_UP_POSITION_OFFSET + 8;
    /** No catch-up: join at the live position. */
    public static final long CATCH_UP_NONE = -1;
    /** Catch up from the start of the live position's term, if the publisher's log still holds it. */
    public static final long CATCH_UP_TERM_START = -2;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    public ConnectFlyweight()
    {
        // writeHeader zeroes the commit words (counter mode, no credits) like reserved words; they are validated on
        // their own.
        super(HandshakeHeader.CONNECT_TYPE, LENGTH, QP_INFO_OFFSET, COMMIT_OFFSET, RECEIVE_CREDITS_OFFSET);
    }

    public long ringAddress()
    {
        return getLong(RING_ADDRESS_OFFSET);
    }

    public ConnectFlyweight ringAddress(final long value)
    {
        return putLong(RING_ADDRESS_OFFSET, value);
    }

    public long ringLength()
    {
        return getLong(RING_LENGTH_OFFSET);
    }

    public ConnectFlyweight ringLength(final long value)
    {
        return putLong(RING_LENGTH_OFFSET, value);
    }

    public int ringRkey()
    {
        return getInt(RING_RKEY_OFFSET);
    }

    public ConnectFlyweight ringRkey(final int value)
    {
        return putInt(RING_RKEY_OFFSET, value);
    }

    public int counterRkey()
    {
        return getInt(COUNTER_RKEY_OFFSET);
    }

    public ConnectFlyweight counterRkey(final int value)
    {
        return putInt(COUNTER_RKEY_OFFSET, value);
    }

    public long counterAddress()
    {
        return getLong(COUNTER_ADDRESS_OFFSET);
    }

    public ConnectFlyweight counterAddress(final long value)
    {
        return putLong(COUNTER_ADDRESS_OFFSET, value);
    }

    public int counterLength()
    {
        return getInt(COUNTER_LENGTH_OFFSET);
    }

    public ConnectFlyweight counterLength(final int value)
    {
        return putInt(COUNTER_LENGTH_OFFSET, value);
    }

    public int commit()
    {
        return getInt(COMMIT_OFFSET);
    }

    public ConnectFlyweight commit(final int value)
    {
        return putInt(COMMIT_OFFSET, value);
    }

    public int receiveCredits()
    {
        return getInt(RECEIVE_CREDITS_OFFSET);
    }

    public ConnectFlyweight receiveCredits(final int value)
    {
        return putInt(RECEIVE_CREDITS_OFFSET, value);
    }

}
