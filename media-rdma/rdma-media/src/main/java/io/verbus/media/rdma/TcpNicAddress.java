package io.verbus.media.rdma;

import io.verbus.fabric.FabricContext;

import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;

/**
 * The address a channel's tcp NIC listens on when {@code verbus.fabric.tcp.address} is not set.
 * <p>
 * Why: the tcp NIC advertises its listening address as its QP's GID, and the other end only connects its NIC to the
 * host its control connection is with ({@link FabricEndpoint#checkPeerNicAddress}). A fixed default (loopback) made
 * every two-host tcp channel fail its handshake until the user found the property. Each channel end already names
 * where its control connection goes, so the NIC follows it:
 * <ul>
 *     <li>a publication listens where its control port does: the endpoint's host; on the wildcard it advertises, per
 *     subscriber, the address that subscriber reached it on;</li>
 *     <li>a subscription listens on the local address its host routes to the publisher from (a UDP socket connected
 *     to the endpoint asks the kernel's routing table; no packet is sent). An endpoint named by host name is not
 *     looked up here: that would block the thread adding the subscription (the conductor, in a shared driver) for as
 *     long as the resolver takes. The NIC then listens on every address and advertises, per connection, the local
 *     address of its control connection, which the control thread resolves and connects anyway.</li>
 * </ul>
 */
final class TcpNicAddress
{
    private static final String WILDCARD = "0.0.0.0";

    private TcpNicAddress()
    {
    }

    /**
     * @param context     to set the address on, unless the property already did.
     * @param params      the channel.
     * @param publication whether this end is the publication's.
     */
    static void applyDefault(final FabricContext context, final RdmaChannelParams params, final boolean publication)
    {
        final String configured = System.getProperty(FabricContext.TCP_ADDRESS_PROP_NAME);
        if (null != configured && !configured.isBlank())
        {
            return;
        }
        context.tcpAddress(publication ? params.endpointHost() : routedLocalAddress(params));
    }

    private static String routedLocalAddress(final RdmaChannelParams params)
    {
        final InetAddress publisher;
        try
        {
            publisher = InetAddress.ofLiteral(params.endpointHost());
        }
        catch (final IllegalArgumentException notALiteral)
        {
            return WILDCARD;
        }
        try (DatagramSocket probe = new DatagramSocket())
        {
            probe.connect(new InetSocketAddress(publisher, Math.max(1, params.endpointPort())));
            final InetAddress local = probe.getLocalAddress();
            return null == local || local.isAnyLocalAddress() ? WILDCARD : local.getHostAddress();
        }
        catch (final IOException | RuntimeException ex)
        {
            // No route yet (the subscription retries): listen on every address and advertise the control
            // connection's local one when it is made.
            return WILDCARD;
        }
    }
}
