package io.verbus.media.rdma.protocol;

/**
 * CONNECT, subscriber to publisher, sent only after the publisher's proof checked out: the subscriber's
 * ring (the three term partitions) and its position-counter block, both registered REMOTE_WRITE only and each a
 * {@link RemoteRegionFlyweight} descriptor (address long, length long, rkey int), its QP block, the catch-up it asks
 * for (a position to READ the publisher's log from, {@link #CATCH_UP_NONE} or {@link #CATCH_UP_TERM_START}), and its
 * own proof.
 * <pre>
 *  12 commit int | 16 ring region 20 bytes (16 address, 24 length, 32 rkey) | 36 receiveCredits int
 *  40 counter region 20 bytes (40 address, 48 length, 56 rkey) | 60 reserved int | 64 qpInfo 104 bytes
 * 168 catchUpPosition long | 176 proof 32 bytes | 208 end
 * </pre>
 * {@code commit}: the mode the subscriber agreed to ({@link ChallengeFlyweight#COMMIT_COUNTER} or
 * {@link ChallengeFlyweight#COMMIT_IMM}); {@code receiveCredits}: with imm, how many WRITE_WITH_IMMs the publisher may
 * have in flight beyond what the subscriber reported consumed (the RECVs it keeps posted), else 0. A fresh message
 * has both at zero, which is counter mode.
 */
public final class ConnectFlyweight extends QpOfferFlyweight<ConnectFlyweight>
{
    public static final int COMMIT_OFFSET = 12;
    public static final int RING_REGION_OFFSET = 16;
    public static final int RECEIVE_CREDITS_OFFSET = RING_REGION_OFFSET + RemoteRegionFlyweight.LENGTH;
    public static final int COUNTER_REGION_OFFSET = RECEIVE_CREDITS_OFFSET + 4;
    public static final int RESERVED_OFFSET = COUNTER_REGION_OFFSET + RemoteRegionFlyweight.LENGTH;
    public static final int QP_INFO_OFFSET = RESERVED_OFFSET + 4;
    public static final int CATCH_UP_POSITION_OFFSET = catchUpPositionOffset(QP_INFO_OFFSET);
    public static final int PROOF_OFFSET = CATCH_UP_POSITION_OFFSET + 8;
    /** No catch-up: join at the live position. */
    public static final long CATCH_UP_NONE = -1;
    /** Catch up from the start of the live position's term, if the publisher's log still holds it. */
    public static final long CATCH_UP_TERM_START = -2;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    private final RemoteRegionFlyweight ring = new RemoteRegionFlyweight();
    private final RemoteRegionFlyweight counter = new RemoteRegionFlyweight();

    public ConnectFlyweight()
    {
        // writeHeader zeroes the commit words too (counter mode, no credits); they are validated on their own.
        super(HandshakeHeader.CONNECT_TYPE, LENGTH, QP_INFO_OFFSET, new int[]{ COMMIT_OFFSET, RECEIVE_CREDITS_OFFSET },
            RESERVED_OFFSET);
    }

    /** @return the ring the publisher WRITEs the log into: three term partitions. */
    public RemoteRegionFlyweight ring()
    {
        return region(ring, RING_REGION_OFFSET);
    }

    /** @return the position block the publisher WRITEs its positions into: {@link SlotLayout#BLOCK_LENGTH} bytes. */
    public RemoteRegionFlyweight counter()
    {
        return region(counter, COUNTER_REGION_OFFSET);
    }

    /** @return the commit mode the subscriber agreed to: {@link ChallengeFlyweight#COMMIT_COUNTER} or IMM. */
    public int commit()
    {
        return getInt(COMMIT_OFFSET);
    }

    public ConnectFlyweight commit(final int value)
    {
        return putInt(COMMIT_OFFSET, value);
    }

    /** @return with commit=imm, the WRITE_WITH_IMMs the publisher may have beyond the consumed position, else 0. */
    public int receiveCredits()
    {
        return getInt(RECEIVE_CREDITS_OFFSET);
    }

    public ConnectFlyweight receiveCredits(final int value)
    {
        return putInt(RECEIVE_CREDITS_OFFSET, value);
    }
}
