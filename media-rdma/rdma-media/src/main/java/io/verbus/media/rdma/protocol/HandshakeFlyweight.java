package io.verbus.media.rdma.protocol;

import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * What every fixed-length handshake message's flyweight shares: it wraps a buffer at an offset and owns no memory,
 * writes the 12-byte {@link HandshakeHeader} with its type and length (zeroing its reserved words), and reads and
 * writes its little-endian fields at offsets from the start of the message. Each message names its own fields.
 *
 * @param <T> the message's flyweight, so that {@link #wrap}, {@link #writeHeader} and the setters chain.
 */
public abstract class HandshakeFlyweight<T extends HandshakeFlyweight<T>>
{
    static final int[] NO_OFFSETS = {};

    private final short type;
    private final int length;
    private final int[] defaultedOffsets;
    private final int[] reservedOffsets;
    private MutableDirectBuffer buffer;
    private int offset;

    HandshakeFlyweight(final short type, final int length, final int... reservedOffsets)
    {
        this(type, length, NO_OFFSETS, reservedOffsets);
    }

    /**
     * @param defaultedOffsets int fields whose zero is their default: {@link #writeHeader} zeroes them as it does the
     *                         reserved words, but they carry values, so {@link #reserved} leaves them out.
     * @param reservedOffsets  int words that must be zero.
     */
    HandshakeFlyweight(final short type, final int length, final int[] defaultedOffsets, final int... reservedOffsets)
    {
        this.type = type;
        this.length = length;
        this.defaultedOffsets = defaultedOffsets;
        this.reservedOffsets = reservedOffsets;
    }

    public final T wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return self();
    }

    /** Writes the header (this message's type and length) and zeroes the reserved words and defaulted fields. */
    public final T writeHeader()
    {
        HandshakeHeader.write(buffer, offset, type, length);
        zero(defaultedOffsets);
        zero(reservedOffsets);
        return self();
    }

    public final MutableDirectBuffer buffer()
    {
        return buffer;
    }

    public final int offset()
    {
        return offset;
    }

    /** @return the reserved words OR-ed together: 0 when every one is zero, as a well-formed message has them. */
    public final int reserved()
    {
        int bits = 0;
        for (final int reservedOffset : reservedOffsets)
        {
            bits |= buffer.getInt(offset + reservedOffset, LITTLE_ENDIAN);
        }
        return bits;
    }

    /** @return {@code region} as a view of the region descriptor at {@code fieldOffset} in this message. */
    final RemoteRegionFlyweight region(final RemoteRegionFlyweight region, final int fieldOffset)
    {
        return region.wrap(buffer, offset + fieldOffset);
    }

    final short getShort(final int fieldOffset)
    {
        return buffer.getShort(offset + fieldOffset, LITTLE_ENDIAN);
    }

    final T putShort(final int fieldOffset, final short value)
    {
        buffer.putShort(offset + fieldOffset, value, LITTLE_ENDIAN);
        return self();
    }

    final int getInt(final int fieldOffset)
    {
        return buffer.getInt(offset + fieldOffset, LITTLE_ENDIAN);
    }

    final T putInt(final int fieldOffset, final int value)
    {
        buffer.putInt(offset + fieldOffset, value, LITTLE_ENDIAN);
        return self();
    }

    final long getLong(final int fieldOffset)
    {
        return buffer.getLong(offset + fieldOffset, LITTLE_ENDIAN);
    }

    final T putLong(final int fieldOffset, final long value)
    {
        buffer.putLong(offset + fieldOffset, value, LITTLE_ENDIAN);
        return self();
    }

    /** Copies the {@link HandshakeHeader#NONCE_LENGTH}-byte nonce at {@code fieldOffset} into {@code dst}. */
    final void getNonce(final int fieldOffset, final byte[] dst)
    {
        buffer.getBytes(offset + fieldOffset, dst, 0, HandshakeHeader.NONCE_LENGTH);
    }

    final T putNonce(final int fieldOffset, final byte[] src)
    {
        buffer.putBytes(offset + fieldOffset, src, 0, HandshakeHeader.NONCE_LENGTH);
        return self();
    }

    final void getQpInfo(final int fieldOffset, final QpInfoCodec.QpInfo info)
    {
        QpInfoCodec.decode(buffer, offset + fieldOffset, info);
    }

    final T putQpInfo(final int fieldOffset, final QpInfoCodec.QpInfo info)
    {
        QpInfoCodec.encode(buffer, offset + fieldOffset, info);
        return self();
    }

    private void zero(final int[] fieldOffsets)
    {
        for (final int fieldOffset : fieldOffsets)
        {
            buffer.putInt(offset + fieldOffset, 0, LITTLE_ENDIAN);
        }
    }

    @SuppressWarnings("unchecked")
    private T self()
    {
        return (T)this;
    }
}
