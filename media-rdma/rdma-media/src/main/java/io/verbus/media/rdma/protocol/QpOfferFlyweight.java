package io.verbus.media.rdma.protocol;

/**
 * What CONNECT and ACCEPT lay out alike: each side's offer carries its QP block ({@link QpInfoCodec}) followed at once
 * by the catch-up position (the subscriber's request in CONNECT, the publisher's grant in ACCEPT). Each message names
 * where its QP block starts; the accessors for both fields live here once.
 *
 * @param <T> the message's flyweight, so that the setters chain.
 */
public abstract class QpOfferFlyweight<T extends QpOfferFlyweight<T>> extends HandshakeFlyweight<T>
{
    private final int qpInfoOffset;
    private final int catchUpPositionOffset;

    QpOfferFlyweight(final short type, final int length, final int qpInfoOffset, final int[] defaultedOffsets,
        final int... reservedOffsets)
    {
        super(type, length, defaultedOffsets, reservedOffsets);
        this.qpInfoOffset = qpInfoOffset;
        this.catchUpPositionOffset = catchUpPositionOffset(qpInfoOffset);
    }

    /** @return where the catch-up position of a message whose QP block starts at {@code qpInfoOffset} lies. */
    static int catchUpPositionOffset(final int qpInfoOffset)
    {
        return qpInfoOffset + QpInfoCodec.LENGTH;
    }

    public final void getQpInfo(final QpInfoCodec.QpInfo info)
    {
        getQpInfo(qpInfoOffset, info);
    }

    public final T qpInfo(final QpInfoCodec.QpInfo info)
    {
        return putQpInfo(qpInfoOffset, info);
    }

    public final long catchUpPosition()
    {
        return getLong(catchUpPositionOffset);
    }

    public final T catchUpPosition(final long value)
    {
        return putLong(catchUpPositionOffset, value);
    }
}
