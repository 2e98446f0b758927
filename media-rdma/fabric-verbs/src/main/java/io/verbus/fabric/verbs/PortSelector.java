package io.verbus.fabric.verbs;

import io.verbus.fabric.IpGid;
import io.verbus.fabric.PortPreference;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;

import static io.verbus.fabric.verbs.IbvConstants.IBV_GID_TYPE_ROCE_V2;
import static io.verbus.fabric.verbs.IbvConstants.IBV_LINK_LAYER_ETHERNET;
import static io.verbus.fabric.verbs.IbvConstants.IBV_LINK_LAYER_INFINIBAND;
import static io.verbus.fabric.verbs.IbvConstants.IBV_PORT_ACTIVE;

/**
 * Chooses the device port (and, on Ethernet, the GID) Verbus uses, from what the devices report:
 * <ol>
 *     <li>only ACTIVE ports;</li>
 *     <li>InfiniBand link layer first (LID addressing, the lowest latency);</li>
 *     <li>otherwise Ethernet with RoCE v2: the RoCE v2 GID of the configured IP address, or without one the
 *     first IPv4-mapped RoCE v2 GID, then any non-link-local RoCE v2 GID;</li>
 *     <li>between equals, the largest active MTU, then the device name.</li>
 * </ol>
 * Pure logic over {@link PortInfo}s, so every rule is tested without hardware.
 */
public final class PortSelector
{
    /**
     * One GID table entry.
     *
     * @param index GID index.
     * @param gid   16 bytes.
     * @param type  {@code IBV_GID_TYPE_*}.
     */
    public record GidInfo(int index, byte[] gid, int type)
    {
        public GidInfo
        {
            gid = gid.clone();
        }

        boolean isLinkLocal()
        {
            return (gid[0] & 0xFF) == 0xFE && (gid[1] & 0xC0) == 0x80;
        }

        boolean isIpv4Mapped()
        {
            return IpGid.isIpv4Mapped(gid);
        }

        String address()
        {
            try
            {
                final InetAddress address = InetAddress.getByAddress(gid);
                return address.getHostAddress();
            }
            catch (final UnknownHostException ex)
            {
                return Arrays.toString(gid);
            }
        }
    }

    /**
     * What one port of one device reports.
     *
     * @param deviceName     e.g. mlx5_0, rxe0.
     * @param portNumber     1-based.
     * @param state          {@code IBV_PORT_*}.
     * @param linkLayer      {@code IBV_LINK_LAYER_*}.
     * @param lid            InfiniBand LID, 0 on Ethernet.
     * @param activeMtuBytes active MTU in bytes.
     * @param maxMessageBytes largest message the port carries.
     * @param gids           the first entries of the GID table.
     */
    public record PortInfo(
        String deviceName,
        int portNumber,
        int state,
        int linkLayer,
        int lid,
        int activeMtuBytes,
        int maxMessageBytes,
        List<GidInfo> gids)
    {
        public PortInfo
        {
            gids = List.copyOf(gids);
        }
    }

    /**
     * The choice.
     *
     * @param port        the chosen port.
     * @param gidIndex    GID index for the GRH (RoCE) or 0 (InfiniBand's port GID).
     * @param gid         that GID, 16 bytes (zeros when the table is empty on InfiniBand).
     * @param explanation one log line saying why.
     */
    public record PortChoice(PortInfo port, int gidIndex, byte[] gid, String explanation)
    {
        public PortChoice
        {
            gid = gid.clone();
        }

        public boolean isInfiniBand()
        {
            return port.linkLayer() == IBV_LINK_LAYER_INFINIBAND;
        }
    }

    private PortSelector()
    {
    }

    /**
     * @param ports            every port of every candidate device.
     * @param configuredAddress the IP address whose RoCE v2 GID to use, or null for the first IPv4 one.
     * @return the best port, or null if none is usable (see {@link #whyNone}).
     */
    public static PortChoice choose(final List<PortInfo> ports, final InetAddress configuredAddress)
    {
        final List<PortChoice> usable = new ArrayList<>();
        for (final PortInfo port : ports)
        {
            final PortChoice choice = evaluate(port, configuredAddress);
            if (null != choice)
            {
                usable.add(choice);
            }
        }
        if (usable.isEmpty())
        {
            return null;
        }
        usable.sort(PREFERENCE);
        final PortChoice best = usable.getFirst();
        final String explanation = best.explanation() + " (" + usable.size() + " usable of " + ports.size() +
            " port(s); " + PortPreference.DESCRIPTION + ")";
        return new PortChoice(best.port(), best.gidIndex(), best.gid(), explanation);
    }

    /**
     * @param ports             as given to {@link #choose}.
     * @param configuredAddress as given to {@link #choose}.
     * @return why no port is usable, naming every port's problem.
     */
    public static String whyNone(final List<PortInfo> ports, final InetAddress configuredAddress)
    {
        if (ports.isEmpty())
        {
            return "no RDMA port found";
        }
        final StringBuilder reasons = new StringBuilder("no usable RDMA port:");
        for (final PortInfo port : ports)
        {
            reasons.append(' ').append(port.deviceName()).append(" port ").append(port.portNumber()).append(": ");
            if (port.state() != IBV_PORT_ACTIVE)
            {
                reasons.append("not ACTIVE (state ").append(port.state()).append(");");
            }
            else if (port.linkLayer() == IBV_LINK_LAYER_ETHERNET)
            {
                reasons.append("Ethernet with no RoCE v2 GID")
                    .append(null == configuredAddress ? "" : " for " + configuredAddress.getHostAddress()).append(';');
            }
            else
            {
                reasons.append("unsupported link layer ").append(port.linkLayer()).append(';');
            }
        }
        return reasons.toString();
    }

    /** Rank of a choice, smaller is better: the shared {@link PortPreference} rule. */
    static final Comparator<PortChoice> PREFERENCE = Comparator.comparing(
        (PortChoice choice) -> candidate(choice.port()), PortPreference.BEST_FIRST);

    private static PortPreference.Candidate candidate(final PortInfo port)
    {
        return new PortPreference.Candidate(port.deviceName(), PortPreference.isSoftwareDevice(port.deviceName()),
            port.portNumber(), port.state() == IBV_PORT_ACTIVE, port.linkLayer() == IBV_LINK_LAYER_INFINIBAND,
            port.linkLayer() == IBV_LINK_LAYER_ETHERNET, port.activeMtuBytes());
    }

    /**
     * @param port              one port.
     * @param configuredAddress as for {@link #choose}.
     * @return the port's usable choice, or null.
     */
    static PortChoice evaluate(final PortInfo port, final InetAddress configuredAddress)
    {
        if (port.state() != IBV_PORT_ACTIVE)
        {
            return null;
        }
        final String where = port.deviceName() + " port " + port.portNumber();
        if (port.linkLayer() == IBV_LINK_LAYER_INFINIBAND)
        {
            final GidInfo portGid = port.gids().isEmpty() ? null : port.gids().getFirst();
            return new PortChoice(port, 0, null == portGid ? new byte[16] : portGid.gid(),
                "verbs: using " + where + ": InfiniBand, ACTIVE, LID " + port.lid() + ", MTU " +
                port.activeMtuBytes());
        }
        if (port.linkLayer() != IBV_LINK_LAYER_ETHERNET)
        {
            return null;
        }
        final GidInfo gid = roceV2Gid(port.gids(), configuredAddress);
        if (null == gid)
        {
            return null;
        }
        return new PortChoice(port, gid.index(), gid.gid(),
            "verbs: using " + where + ": Ethernet (RoCE v2), ACTIVE, GID index " + gid.index() + " (" + gid.address() +
            (null == configuredAddress ? ", first IPv4 RoCE v2 GID" : ", the configured address") + "), MTU " +
            port.activeMtuBytes());
    }

    private static GidInfo roceV2Gid(final List<GidInfo> gids, final InetAddress configuredAddress)
    {
        if (null != configuredAddress)
        {
            final byte[] wanted = gidOf(configuredAddress);
            for (final GidInfo gid : gids)
            {
                if (gid.type() == IBV_GID_TYPE_ROCE_V2 && Arrays.equals(gid.gid(), wanted))
                {
                    return gid;
                }
            }
            return null;
        }
        for (final GidInfo gid : gids)
        {
            if (gid.type() == IBV_GID_TYPE_ROCE_V2 && gid.isIpv4Mapped())
            {
                return gid;
            }
        }
        for (final GidInfo gid : gids)
        {
            if (gid.type() == IBV_GID_TYPE_ROCE_V2 && !gid.isLinkLocal() && !isZero(gid.gid()))
            {
                return gid;
            }
        }
        return null;
    }

    /**
     * @param address IPv4 or IPv6 address.
     * @return its GID: IPv6 as is, IPv4 as ::ffff:a.b.c.d.
     */
    static byte[] gidOf(final InetAddress address)
    {
        return IpGid.of(address);
    }

    private static boolean isZero(final byte[] bytes)
    {
        for (final byte b : bytes)
        {
            if (b != 0)
            {
                return false;
            }
        }
        return true;
    }
}
