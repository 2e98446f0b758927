package io.verbus.media.rdma.protocol;

import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * A registered memory region one side grants its peer, as CONNECT (the subscriber's ring and position block) and
 * ACCEPT (the publisher's status slot and, for a catch-up, its log) carry it: where it starts, how long it is and the
 * rkey that opens it. Every region in the handshake has this one layout, so one reader, one writer and one validation
 * ({@link HandshakeValidator}) serve all four.
 * <pre>
 *   0 address long | 8 length long | 16 rkey int | 20 end
 * </pre>
 * Little-endian like the rest of the handshake. A view over its message's buffer; owns no memory.
 */
public final class RemoteRegionFlyweight
{
    public static final int ADDRESS_OFFSET = 0;
    public static final int LENGTH_OFFSET = 8;
    public static final int RKEY_OFFSET = 16;
    public static final int LENGTH = RKEY_OFFSET + 4;

    private MutableDirectBuffer buffer;
    private int offset;

    RemoteRegionFlyweight wrap(final MutableDirectBuffer buffer, final int offset)
    {
        this.buffer = buffer;
        this.offset = offset;
        return this;
    }

    public long address()
    {
        return buffer.getLong(offset + ADDRESS_OFFSET, LITTLE_ENDIAN);
    }

    public long length()
    {
        return buffer.getLong(offset + LENGTH_OFFSET, LITTLE_ENDIAN);
    }

    public int rkey()
    {
        return buffer.getInt(offset + RKEY_OFFSET, LITTLE_ENDIAN);
    }

    /** Writes the whole descriptor: a region is granted whole, so it has no setter per field. */
    public RemoteRegionFlyweight set(final long address, final long length, final int rkey)
    {
        buffer.putLong(offset + ADDRESS_OFFSET, address, LITTLE_ENDIAN);
        buffer.putLong(offset + LENGTH_OFFSET, length, LITTLE_ENDIAN);
        buffer.putInt(offset + RKEY_OFFSET, rkey, LITTLE_ENDIAN);
        return this;
    }

    /** @return true when address, length and rkey are all 0: no region granted. */
    public boolean isEmpty()
    {
        return 0 == address() && 0 == length() && 0 == rkey();
    }
}
