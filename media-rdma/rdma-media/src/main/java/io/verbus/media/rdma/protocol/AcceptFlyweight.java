package io.verbus.media.rdma.protocol;

/**
 * ACCEPT, publisher to subscriber: the status slot the subscriber WRITEs its consumed position into
 * (registered REMOTE_WRITE only, this subscriber's slot only), the join position, the publisher's QP block
 * and a proof binding all of it to this handshake.
 * <pre>
 *  12 reserved int | 16 statusAddress long | 24 statusLength int | 28 statusRkey int | 32 joinPosition long
 *  40 qpInfo 104 bytes | 144 proof 32 bytes | 176 end
 * </pre>
 */
public final class AcceptFlyweight extends HandshakeFlyweight<AcceptFlyweight>
{
    public static final int RESERVED_OFFSET = 12;
    public static final int STATUS_ADDRESS_OFFSET = 16;
    public static final int STATUS_LENGTH_OFFSET = 24;
    public static final int STATUS_RKEY_OFFSET = 28;
    public static final int JOIN_POSITION_OFFSET = 32;
    public static final int QP_INFO_OFFSET = 40;
    public static final int PROOF_OFFSET = QP_INFO_OFFSET + QpInfoCodec.LENGTH;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    public AcceptFlyweight()
    {
        super(HandshakeHeader.ACCEPT_TYPE, LENGTH, RESERVED_OFFSET);
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

    public void getQpInfo(final QpInfoCodec.QpInfo info)
    {
        getQpInfo(QP_INFO_OFFSET, info);
    }

    public AcceptFlyweight qpInfo(final QpInfoCodec.QpInfo info)
    {
        return putQpInfo(QP_INFO_OFFSET, info);
    }
}
