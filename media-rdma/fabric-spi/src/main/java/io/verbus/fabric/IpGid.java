package io.verbus.fabric;

import java.net.Inet4Address;
import java.net.InetAddress;

/**
 * A GID that is an IP address, as RoCE v2 and the tcp provider use it: an IPv6 address as its 16 bytes, an IPv4
 * address IPv4-mapped ({@code ::ffff:a.b.c.d}). One encoding for every provider and for the handshake that checks a
 * peer's GID against its control connection, so the two ends can never disagree on it.
 */
public final class IpGid
{
    /** Bytes in a GID. */
    public static final int LENGTH = PortAttributes.GID_LENGTH;

    private IpGid()
    {
    }

    /**
     * @param address an IPv4 or IPv6 address.
     * @return its GID, a new array of {@link #LENGTH} bytes.
     */
    public static byte[] of(final InetAddress address)
    {
        if (address instanceof Inet4Address)
        {
            final byte[] gid = new byte[LENGTH];
            gid[10] = (byte)0xFF;
            gid[11] = (byte)0xFF;
            System.arraycopy(address.getAddress(), 0, gid, 12, 4);
            return gid;
        }
        return address.getAddress();
    }

    /**
     * @param gid a GID of {@link #LENGTH} bytes.
     * @return true when it holds an IPv4 address ({@code ::ffff:a.b.c.d}).
     */
    public static boolean isIpv4Mapped(final byte[] gid)
    {
        for (int i = 0; i < 10; i++)
        {
            if (0 != gid[i])
            {
                return false;
            }
        }
        return (byte)0xFF == gid[10] && (byte)0xFF == gid[11];
    }
}
