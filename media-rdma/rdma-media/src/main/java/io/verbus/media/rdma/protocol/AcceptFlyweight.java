package io.verbus.media.rdma.protocol;

/**
 * ACCEPT, publisher to subscriber: the status slot the subscriber WRITEs its consumed position into
 * (registered REMOTE_WRITE only, this subscriber's slot only), the join position, the publisher's QP block
 * and a proof binding all of it to this handshake. For a subscriber that asked to catch up: the position its
 * catch-up starts at (the join position when none is granted), the oldest position the log held at admission, and a
 * READ-only registration of the publisher's three term partitions (all 0 when not granted). Both regions are
 * {@link RemoteRegionFlyweight} descriptors (address long, length long, rkey int).
 * <pre>
 *  12 reserved int | 16 status region 20 bytes (16 address, 24 length, 32 rkey) | 36 reserved int
 *  40 joinPosition long | 48 qpInfo 104 bytes | 152 catchUpPosition long | 160 oldestPosition long
 * 168 log region 20 bytes (168 address, 176 length, 184 rkey) | 188 reserved int | 192 proof 32 bytes | 224 end
 * </pre>
 */
public final class AcceptFlyweight extends QpOfferFlyweight<AcceptFlyweight>
{
    public static final int RESERVED_OFFSET = 12;
    public static final int STATUS_REGION_OFFSET = 16;
    public static final int RESERVED2_OFFSET = STATUS_REGION_OFFSET + RemoteRegionFlyweight.LENGTH;
    public static final int JOIN_POSITION_OFFSET = RESERVED2_OFFSET + 4;
    public static final int QP_INFO_OFFSET = JOIN_POSITION_OFFSET + 8;
    public static final int CATCH_UP_POSITION_OFFSET = catchUpPositionOffset(QP_INFO_OFFSET);
    public static final int OLDEST_POSITION_OFFSET = CATCH_UP_POSITION_OFFSET + 8;
    public static final int LOG_REGION_OFFSET = OLDEST_POSITION_OFFSET + 8;
    public static final int RESERVED3_OFFSET = LOG_REGION_OFFSET + RemoteRegionFlyweight.LENGTH;
    public static final int PROOF_OFFSET = RESERVED3_OFFSET + 4;
    public static final int LENGTH = PROOF_OFFSET + HandshakeHeader.PROOF_LENGTH;

    private final RemoteRegionFlyweight status = new RemoteRegionFlyweight();
    private final RemoteRegionFlyweight log = new RemoteRegionFlyweight();

    public AcceptFlyweight()
    {
        super(HandshakeHeader.ACCEPT_TYPE, LENGTH, QP_INFO_OFFSET, NO_OFFSETS, RESERVED_OFFSET, RESERVED2_OFFSET,
            RESERVED3_OFFSET);
    }

    /** @return where the subscriber's image starts: the live position at admission, frame-aligned. */
    public long joinPosition()
    {
        return getLong(JOIN_POSITION_OFFSET);
    }

    public AcceptFlyweight joinPosition(final long value)
    {
        return putLong(JOIN_POSITION_OFFSET, value);
    }

    /** @return the oldest position the publisher's log still held at admission (a catch-up's lower limit). */
    public long oldestPosition()
    {
        return getLong(OLDEST_POSITION_OFFSET);
    }

    public AcceptFlyweight oldestPosition(final long value)
    {
        return putLong(OLDEST_POSITION_OFFSET, value);
    }

    /** @return the status slot: this subscriber's {@link SlotLayout#BLOCK_LENGTH} bytes, REMOTE_WRITE only. */
    public RemoteRegionFlyweight status()
    {
        return region(status, STATUS_REGION_OFFSET);
    }

    /** @return the publisher's log for a granted catch-up (three terms, READ only), else all 0. */
    public RemoteRegionFlyweight log()
    {
        return region(log, LOG_REGION_OFFSET);
    }
}
