package io.verbus.fabric;

import java.util.Arrays;
import java.util.HexFormat;

/**
 * What a device port reports (the subset of {@code ibv_port_attr} and its GID table that Verbus uses).
 *
 * @param portNumber    port number, 1-based as in verbs.
 * @param state         logical port state; only {@link PortState#ACTIVE} ports carry traffic.
 * @param linkLayer     InfiniBand, Ethernet or shared memory.
 * @param lid           local identifier (InfiniBand); the tcp provider puts its listening TCP port here.
 * @param gid           16-byte global identifier of {@code gidIndex}; the tcp provider puts its IPv4-mapped
 *                      IPv6 address here, the shm provider the device's random identity.
 * @param gidIndex      index of {@code gid} in the port's GID table.
 * @param activeMtuBytes path MTU in bytes (256, 512, 1024, 2048 or 4096).
 */
public record PortAttributes(
    int portNumber, PortState state, LinkLayer linkLayer, int lid, byte[] gid, int gidIndex, int activeMtuBytes)
{
    /** Length of a GID in bytes. */
    public static final int GID_LENGTH = 16;

    public PortAttributes
    {
        if (gid.length != GID_LENGTH)
        {
            throw new IllegalArgumentException("gid must be " + GID_LENGTH + " bytes, was " + gid.length);
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

    @Override
    public boolean equals(final Object o)
    {
        return o instanceof PortAttributes that && portNumber == that.portNumber && state == that.state &&
            linkLayer == that.linkLayer && lid == that.lid && gidIndex == that.gidIndex &&
            activeMtuBytes == that.activeMtuBytes && Arrays.equals(gid, that.gid);
    }

    @Override
    public int hashCode()
    {
        return 31 * (31 * portNumber + lid) + Arrays.hashCode(gid);
    }

    @Override
    public String toString()
    {
        return "PortAttributes{port=" + portNumber + ", state=" + state + ", linkLayer=" + linkLayer +
            ", lid=" + lid + ", gid=" + HexFormat.of().formatHex(gid) + ", gidIndex=" + gidIndex +
            ", activeMtu=" + activeMtuBytes + '}';
    }
}
