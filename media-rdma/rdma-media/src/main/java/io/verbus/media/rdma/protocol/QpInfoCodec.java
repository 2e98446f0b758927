package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import static java.nio.ByteOrder.LITTLE_ENDIAN;

/**
 * The queue-pair connection block carried in CONNECT and ACCEPT: what a peer needs to move its RC QP to RTR
 * (the verbs attributes) plus a provider address for the software providers.
 * <pre>
 *   0 qpn int (24 bits) | 4 psn int (24 bits) | 8 lid int (16 bits) | 12 pathMtu int | 16 maxInline int
 *  20 addressLength int | 24 gid 16 bytes | 40 address up to 64 bytes | 104 end
 * </pre>
 */
public final class QpInfoCodec
{
    public static final int QPN_OFFSET = 0;
    public static final int PSN_OFFSET = 4;
    public static final int LID_OFFSET = 8;
    public static final int PATH_MTU_OFFSET = 12;
    public static final int MAX_INLINE_OFFSET = 16;
    public static final int ADDRESS_LENGTH_OFFSET = 20;
    public static final int GID_OFFSET = 24;
    public static final int GID_LENGTH = 16;
    public static final int ADDRESS_OFFSET = 40;
    public static final int ADDRESS_MAX_LENGTH = 64;
    public static final int LENGTH = ADDRESS_OFFSET + ADDRESS_MAX_LENGTH;

    public static final int MAX_24_BIT = 0xFF_FFFF;
    public static final int MAX_LID = 0xFFFF;
    public static final int MIN_PATH_MTU = 256;
    public static final int MAX_PATH_MTU = 4096;
    public static final int MAX_INLINE_LIMIT = 1024;

    private QpInfoCodec()
    {
    }

    public static void encode(final MutableDirectBuffer buffer, final int offset, final QpInfo info)
    {
        buffer.putInt(offset + QPN_OFFSET, info.qpn, LITTLE_ENDIAN);
        buffer.putInt(offset + PSN_OFFSET, info.psn, LITTLE_ENDIAN);
        buffer.putInt(offset + LID_OFFSET, info.lid, LITTLE_ENDIAN);
        buffer.putInt(offset + PATH_MTU_OFFSET, info.pathMtu, LITTLE_ENDIAN);
        buffer.putInt(offset + MAX_INLINE_OFFSET, info.maxInline, LITTLE_ENDIAN);
        buffer.putInt(offset + ADDRESS_LENGTH_OFFSET, info.addressLength, LITTLE_ENDIAN);
        buffer.putBytes(offset + GID_OFFSET, info.gid, 0, GID_LENGTH);
        buffer.setMemory(offset + ADDRESS_OFFSET, ADDRESS_MAX_LENGTH, (byte)0);
        buffer.putBytes(offset + ADDRESS_OFFSET, info.address, 0, info.addressLength);
    }

    /**
     * Decode without judging; {@link HandshakeValidator#validateQpInfo} judges. The address length is
     * clamped only so that decoding itself never reads outside the block.
     */
    public static void decode(final DirectBuffer buffer, final int offset, final QpInfo info)
    {
        info.qpn = buffer.getInt(offset + QPN_OFFSET, LITTLE_ENDIAN);
        info.psn = buffer.getInt(offset + PSN_OFFSET, LITTLE_ENDIAN);
        info.lid = buffer.getInt(offset + LID_OFFSET, LITTLE_ENDIAN);
        info.pathMtu = buffer.getInt(offset + PATH_MTU_OFFSET, LITTLE_ENDIAN);
        info.maxInline = buffer.getInt(offset + MAX_INLINE_OFFSET, LITTLE_ENDIAN);
        info.addressLength = buffer.getInt(offset + ADDRESS_LENGTH_OFFSET, LITTLE_ENDIAN);
        buffer.getBytes(offset + GID_OFFSET, info.gid, 0, GID_LENGTH);
        final int copy = Math.max(0, Math.min(info.addressLength, ADDRESS_MAX_LENGTH));
        java.util.Arrays.fill(info.address, (byte)0);
        buffer.getBytes(offset + ADDRESS_OFFSET, info.address, 0, copy);
    }

    /** The plain values of a QP connection block. */
    public static final class QpInfo
    {
        public int qpn;
        public int psn;
        public int lid;
        public int pathMtu;
        public int maxInline;
        public int addressLength;
        public final byte[] gid = new byte[GID_LENGTH];
        public final byte[] address = new byte[ADDRESS_MAX_LENGTH];

        public QpInfo address(final byte[] bytes)
        {
            if (bytes.length > ADDRESS_MAX_LENGTH)
            {
                throw new IllegalArgumentException("QP address longer than " + ADDRESS_MAX_LENGTH + " bytes");
            }
            java.util.Arrays.fill(address, (byte)0);
            System.arraycopy(bytes, 0, address, 0, bytes.length);
            addressLength = bytes.length;
            return this;
        }

        public byte[] addressBytes()
        {
            return java.util.Arrays.copyOf(address, Math.max(0, Math.min(addressLength, ADDRESS_MAX_LENGTH)));
        }

        public String toString()
        {
            return "QpInfo{qpn=" + qpn + ", psn=" + psn + ", lid=" + lid + ", pathMtu=" + pathMtu +
                ", maxInline=" + maxInline + ", addressLength=" + addressLength + "}";
        }
    }
}
