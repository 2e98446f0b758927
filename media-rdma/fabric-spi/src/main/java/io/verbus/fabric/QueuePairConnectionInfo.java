package io.verbus.fabric;

import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.util.Arrays;
import java.util.HexFormat;

/**
 * What a peer needs to connect its RC QP to ours, exchanged out of band (the rdma media's TCP handshake):
 * QP number, starting packet sequence number, LID, GID, path MTU.
 * <p>
 * Soft providers reuse the verbs fields for their own addressing: tcp puts the NIC's listening TCP port in
 * the LID and its IPv4-mapped IPv6 address in the GID; shm puts the device's random 16-byte identity in
 * the GID. A peer therefore never needs more than these 32 bytes.
 *
 * @param qpNumber 24-bit QP number.
 * @param psn      24-bit starting packet sequence number.
 * @param lid      16-bit local identifier (0 on RoCE).
 * @param gid      16-byte global identifier.
 * @param mtuBytes path MTU in bytes: 256, 512, 1024, 2048 or 4096.
 */
public record QueuePairConnectionInfo(int qpNumber, int psn, int lid, byte[] gid, int mtuBytes)
{
    /** Bytes of {@link #encode(ByteBuffer)}'s output. */
    public static final int ENCODED_LENGTH = 4 + 4 + 4 + PortAttributes.GID_LENGTH + 4;

    private static final int QPN_MASK = 0xFF_FFFF;

    public QueuePairConnectionInfo
    {
        if ((qpNumber & ~QPN_MASK) != 0)
        {
            throw new IllegalArgumentException("qpNumber must fit 24 bits: " + qpNumber);
        }
        if ((psn & ~QPN_MASK) != 0)
        {
            throw new IllegalArgumentException("psn must fit 24 bits: " + psn);
        }
        if ((lid & ~0xFFFF) != 0)
        {
            throw new IllegalArgumentException("lid must fit 16 bits: " + lid);
        }
        if (gid == null || gid.length != PortAttributes.GID_LENGTH)
        {
            throw new IllegalArgumentException("gid must be " + PortAttributes.GID_LENGTH + " bytes");
        }
        if (mtuBytes != 256 && mtuBytes != 512 && mtuBytes != 1024 && mtuBytes != 2048 && mtuBytes != 4096)
        {
            throw new IllegalArgumentException("mtu must be 256, 512, 1024, 2048 or 4096 bytes: " + mtuBytes);
        }
        gid = gid.clone();
    }

    /**
     * @return a copy of the GID.
     */
    @Override
    public byte[] gid()
    {
        return gid.clone();
    }

    /**
     * Write the {@link #ENCODED_LENGTH} bytes, little-endian, at the buffer's position.
     *
     * @param buffer destination; its position advances.
     */
    public void encode(final ByteBuffer buffer)
    {
        final ByteOrder order = buffer.order();
        buffer.order(ByteOrder.LITTLE_ENDIAN);
        buffer.putInt(qpNumber).putInt(psn).putInt(lid).put(gid).putInt(mtuBytes);
        buffer.order(order);
    }

    /**
     * Read what {@link #encode(ByteBuffer)} wrote, validating every field.
     *
     * @param buffer source; its position advances.
     * @return the info.
     * @throws IllegalArgumentException naming the bad field.
     */
    public static QueuePairConnectionInfo decode(final ByteBuffer buffer)
    {
        if (buffer.remaining() < ENCODED_LENGTH)
        {
            throw new IllegalArgumentException(
                "connection info needs " + ENCODED_LENGTH + " bytes, " + buffer.remaining() + " remain");
        }
        final ByteOrder order = buffer.order();
        buffer.order(ByteOrder.LITTLE_ENDIAN);
        try
        {
            final int qpn = buffer.getInt();
            final int psn = buffer.getInt();
            final int lid = buffer.getInt();
            final byte[] gid = new byte[PortAttributes.GID_LENGTH];
            buffer.get(gid);
            final int mtu = buffer.getInt();
            return new QueuePairConnectionInfo(qpn, psn, lid, gid, mtu);
        }
        finally
        {
            buffer.order(order);
        }
    }

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof QueuePairConnectionInfo that && qpNumber == that.qpNumber && psn == that.psn &&
            lid == that.lid && mtuBytes == that.mtuBytes && Arrays.equals(gid, that.gid);
    }

    @Override
    public int hashCode()
    {
        return 31 * (31 * qpNumber + psn) + Arrays.hashCode(gid);
    }

    @Override
    public String toString()
    {
        return "QueuePairConnectionInfo{qpn=" + qpNumber + ", psn=" + psn + ", lid=" + lid +
            ", gid=" + HexFormat.of().formatHex(gid) + ", mtu=" + mtuBytes + '}';
    }
}
