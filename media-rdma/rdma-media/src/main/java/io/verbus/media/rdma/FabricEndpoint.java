package io.verbus.media.rdma;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.IpGid;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.media.rdma.protocol.HandshakeException;
import io.verbus.media.rdma.protocol.ProviderIds;
import io.verbus.media.rdma.protocol.QpInfoCodec;

import java.lang.foreign.MemorySegment;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.Locale;

/**
 * One opened fabric device for one publication or subscription, plus pools of the memory it registers per
 * connection, so that reconnects re-register (fresh regions and rkeys) without allocating new pinned memory each
 * time. Each connection gets a protection domain of its own on this device (see {@link ConnectionResources}).
 * <p>
 * Pools are used by control threads only and synchronised for the publisher's concurrent handshakes.
 */
final class FabricEndpoint implements AutoCloseable
{
    static final int SHM_PROVIDER_ID = ProviderIds.SHM;
    static final int TCP_PROVIDER_ID = ProviderIds.TCP;
    static final int VERBS_PROVIDER_ID = ProviderIds.VERBS;

    private final Fabric fabric;
    private final Device device;
    private final int providerId;
    private final ArrayDeque<MemorySegment> freeRings = new ArrayDeque<>();
    private long ringBytesAllocated;
    private boolean closed;

    private FabricEndpoint(final Fabric fabric, final Device device)
    {
        this.fabric = fabric;
        this.device = device;
        this.providerId = providerId(fabric.providerName());
    }

    static FabricEndpoint open(final String providerName, final FabricContext context)
    {
        final Fabric fabric = Fabrics.open(providerName, context);
        Device device = null;
        try
        {
            device = fabric.openDevice();
            return new FabricEndpoint(fabric, device);
        }
        catch (final RuntimeException ex)
        {
            if (null != device)
            {
                device.close();
            }
            fabric.close();
            throw ex;
        }
    }

    static String providerName(final RdmaChannelParams.Provider provider)
    {
        return provider.name().toLowerCase(Locale.ROOT);
    }

    static int providerId(final String providerName)
    {
        return ProviderIds.id(providerName);
    }

    static String providerName(final int providerId)
    {
        return switch (providerId)
        {
            case SHM_PROVIDER_ID -> "shm";
            case TCP_PROVIDER_ID -> "tcp";
            case VERBS_PROVIDER_ID -> "verbs";
            default -> throw new IllegalArgumentException("unknown fabric provider id " + providerId);
        };
    }

    /** 0 = any provider, else the id the channel insists on. */
    static int requiredProviderId(final RdmaChannelParams.Provider provider)
    {
        return RdmaChannelParams.Provider.AUTO == provider ? 0 : providerId(providerName(provider));
    }

    Device device()
    {
        return device;
    }

    int providerId()
    {
        return providerId;
    }

    String providerName()
    {
        return fabric.providerName();
    }

    /** A ring of the given length: a pooled one (zeroed again) or new device memory (hugepages when possible). */
    synchronized MemorySegment acquireRing(final long length)
    {
        for (final MemorySegment segment : freeRings)
        {
            if (segment.byteSize() == length)
            {
                freeRings.remove(segment);
                segment.fill((byte)0);
                return segment;
            }
        }
        final MemorySegment ring = device.allocateMemory(length);
        ringBytesAllocated += length;
        return ring;
    }

    /** @return true when {@link #acquireRing(long)} of this length would reuse pooled memory. */
    synchronized boolean hasPooledRing(final long length)
    {
        for (final MemorySegment segment : freeRings)
        {
            if (segment.byteSize() == length)
            {
                return true;
            }
        }
        return false;
    }

    /**
     * @return bytes of ring memory this endpoint has allocated from its device: in use, lingering and pooled (device
     * memory is only given back when the device closes).
     */
    synchronized long ringBytesAllocated()
    {
        return ringBytesAllocated;
    }

    /** Return a ring once nothing can read it any more (after the image's linger). */
    synchronized void releaseRing(final MemorySegment segment)
    {
        if (!closed)
        {
            freeRings.addLast(segment);
        }
    }

    /**
     * On the tcp provider a QP's GID is the IP address its software NIC listens on, and the local NIC dials it with
     * the data. An authenticated peer could otherwise point this NIC at any host (and, with the LID, any port) and
     * have the stream poured into it; so the GID must be the address the control connection came from (publisher)
     * or went to (subscriber). The tcp NIC also sends nothing but its 16-byte hello until the remote NIC answers it,
     * so a port that is no Verbus NIC gets nothing else. Other providers' GIDs are no IP addresses: not checked.
     *
     * @param qp          the peer's QP block.
     * @param controlPeer the address at the other end of the control connection.
     * @param field       the message field, for the error.
     * @throws HandshakeException OUT_OF_RANGE when they differ.
     */
    void checkPeerNicAddress(final QpInfoCodec.QpInfo qp, final InetAddress controlPeer, final String field)
        throws HandshakeException
    {
        if (TCP_PROVIDER_ID != providerId)
        {
            return;
        }
        final InetAddress nic;
        try
        {
            nic = InetAddress.getByAddress(IpGid.isIpv4Mapped(qp.gid) ? Arrays.copyOfRange(qp.gid, 12, 16) : qp.gid);
        }
        catch (final UnknownHostException ex)
        {
            throw new HandshakeException(HandshakeException.Reason.OUT_OF_RANGE, field + ".gid is no IP address", ex);
        }
        final InetAddress control = unmapped(controlPeer);
        if (!nic.equals(control))
        {
            throw new HandshakeException(HandshakeException.Reason.OUT_OF_RANGE, field + ".gid=" +
                nic.getHostAddress() + " is not " + control.getHostAddress() + ", the address of the control " +
                "connection: the tcp NIC connects only to the host the control connection is with");
        }
    }

    private static InetAddress unmapped(final InetAddress address)
    {
        if (address instanceof Inet6Address)
        {
            final byte[] bytes = address.getAddress();
            if (IpGid.isIpv4Mapped(bytes))
            {
                try
                {
                    return InetAddress.getByAddress(Arrays.copyOfRange(bytes, 12, 16));
                }
                catch (final UnknownHostException ex)
                {
                    throw new IllegalStateException(ex); // four bytes are always an address
                }
            }
        }
        return address;
    }

    static QueuePairConnectionInfo toConnectionInfo(final QpInfoCodec.QpInfo info)
    {
        return new QueuePairConnectionInfo(info.qpn, info.psn, info.lid, info.gid, info.pathMtu);
    }

    /**
     * The QP block this end sends in its handshake. A tcp NIC that listens on the wildcard address (a publication on
     * {@code endpoint=0.0.0.0:P} with no {@code verbus.fabric.tcp.address}) has no one address to advertise: it
     * advertises the local address of this handshake's control connection, which is the address the peer reached
     * this host on and the one {@link #checkPeerNicAddress} on the other end expects.
     *
     * @param info         the QP's connection info.
     * @param maxInline    the QP's inline capacity.
     * @param controlLocal the local address of the control connection this block goes out on.
     * @return the block.
     */
    QpInfoCodec.QpInfo toQpInfo(final QueuePairConnectionInfo info, final int maxInline, final InetAddress controlLocal)
    {
        final QpInfoCodec.QpInfo qpInfo = new QpInfoCodec.QpInfo();
        qpInfo.qpn = info.qpNumber();
        qpInfo.psn = info.psn();
        qpInfo.lid = info.lid();
        qpInfo.pathMtu = info.mtuBytes();
        qpInfo.maxInline = Math.min(maxInline, QpInfoCodec.MAX_INLINE_LIMIT);
        if (TCP_PROVIDER_ID == providerId && isWildcard(info.gid()))
        {
            System.arraycopy(IpGid.of(unmapped(controlLocal)), 0, qpInfo.gid, 0, QpInfoCodec.GID_LENGTH);
        }
        else
        {
            System.arraycopy(info.gid(), 0, qpInfo.gid, 0, QpInfoCodec.GID_LENGTH);
        }
        qpInfo.addressLength = 0;
        return qpInfo;
    }

    private static boolean isWildcard(final byte[] gid)
    {
        for (int i = IpGid.isIpv4Mapped(gid) ? 12 : 0; i < QpInfoCodec.GID_LENGTH; i++)
        {
            if (0 != gid[i])
            {
                return false;
            }
        }
        return true;
    }

    public synchronized void close()
    {
        if (!closed)
        {
            closed = true;
            freeRings.clear();
            device.close();
            fabric.close();
        }
    }
}
