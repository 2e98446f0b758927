package io.verbus.media.rdma.protocol;

/**
 * ACCEPT, publisher to subscriber: the status slot the subscriber WRITEs its consumed position into
 * (registered REMOTE_WRITE only, this subscriber's slot only), the join position, the publisher's QP block
 * and a proof binding all of it to this handshake. For a subscriber that asked to catch up: the position its
 * catch-up starts at (the join position when none is granted), the oldest position the log held at admission, and a
 * READ-only registration of the publisher's three term partitions (address, length, rkey; all 0 when not granted).
 * <pre>
 *  12 reserved int | 16 statusAddress long | 24 statusLength int | 28 statusRkey int | 32 joinPosition long
 *  40 qpInfo 104 bytes | 144 catchUpPosition long | 152 oldestPosition long | 160 logAddress long
 * 168 logLength long | 176 logRkey int | 180 reserved int | 184 proof 32 bytes | 216 end
 * </pre>
 */
public final class AcceptFlyweight extends QpOfferFlyweight<AcceptFlyweight>
{
    public static final int RESERVED_OFFSET = 12;
    public static final int STATUS_ADDRESS_OFFSET = 16;
    public static final int STATUS_LENGTH_OFFSET = 24;
    public static final int STATUS_RKEY_OFFSET = 28;
    public static final int JOIN_POSITION_OFFSET = 32;
    public static final int QP_INFO_OFFSET = 40;
    public static final int CATCH_UP_POSITION_OFFSET = catchUpPositionOffset(QP_INFO_OFFSET);
    public static final int OLDEST_POSITION_OFFSET = CATCH_UP_POSITION_OFFSET + 8;
    public static final int LOG_ADDRESS_OFFSET = OLDEST_POSITION_OFFSET + 8;
    public static final int LOG_LENGTH_OFFSET = LOG_ADDRESS_OFFSET + 8;
    public static final int LOG_RKEY_OFFSET = LOG_LENGTH_OFFSET + 8;
    public static final int RESERVED2_OFFSET = LOG_RKEY_OFFSET + 4;
    public static final int PROOF_OFFSET = RESERVED2_OFFSET + 4;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    public AcceptFlyweight()
    {
        super(HandshakeHeader.ACCEPT_TYPE, LENGTH, QP_INFO_OFFSET, RESERVED_OFFSET, RESERVED2_OFFSET);
    }

    public long statusAddress()
    {
        return getLong(STATUS_ADDRESS_OFFSET);
    }

    public AcceptFlyweight statusAddress(final long value)
    {
        return putLong(STATUS_ADDRESS_OFFSET, value);
    }

    public int statusLength()
    {
        return getInt(STATUS_LENGTH_OFFSET);
    }

    public AcceptFlyweight statusLength(final int value)
    {
        return putInt(STATUS_LENGTH_OFFSET, value);
    }

    public int statusRkey()
    {
        return getInt(STATUS_RKEY_OFFSET);
    }

    public AcceptFlyweight statusRkey(final int value)
    {
        return putInt(STATUS_RKEY_OFFSET, value);
    }

    public long joinPosition()
    {
        return getLong(JOIN_POSITION_OFFSET);
    }

    public AcceptFlyweight joinPosition(final long value)
    {
        return putLong(JOIN_POSITION_OFFSET, value);
    }

    public long oldestPosition()
    {
        return getLong(OLDEST_POSITION_OFFSET);
    }

    public AcceptFlyweight oldestPosition(final long value)
    {
        return putLong(OLDEST_POSITION_OFFSET, value);
    }

    public long logAddress()
    {
        return getLong(LOG_ADDRESS_OFFSET);
    }

    public AcceptFlyweight logAddress(final long value)
    {
        return putLong(LOG_ADDRESS_OFFSET, value);
    }

    public long logLength()
    {
        return getLong(LOG_LENGTH_OFFSET);
    }

    public AcceptFlyweight logLength(final long value)
    {
        return putLong(LOG_LENGTH_OFFSET, value);
    }

    public int logRkey()
    {
        return getInt(LOG_RKEY_OFFSET);
    }

    public AcceptFlyweight logRkey(final int value)
    {
        return putInt(LOG_RKEY_OFFSET, value);
    }
}
