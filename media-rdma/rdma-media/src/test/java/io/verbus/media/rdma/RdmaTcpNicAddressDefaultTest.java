package io.verbus.media.rdma;

import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.fabric.FabricContext;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Without {@code verbus.fabric.tcp.address} the tcp NIC follows the control connection: a publication's NIC listens
 * where its control port does and a subscription's on the address its host routes to the publisher from. Loopback
 * stands in for a second host: Linux answers on all of 127/8, so a subscriber that dials 127.0.0.2 reaches the
 * publication from an address other than 127.0.0.1, which a fixed loopback default refused (the NIC's GID is not the
 * control peer).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@ExtendWith(RdmaTestProperties.class)
class RdmaTcpNicAddressDefaultTest
{
    @TempDir
    Path dir;

    @BeforeAll
    static void requireNoConfiguredNicAddress()
    {
        assertNull(System.getProperty(FabricContext.TCP_ADDRESS_PROP_NAME),
            "this test is about the default: run it without -D" + FabricContext.TCP_ADDRESS_PROP_NAME);
    }

    @Test
    void shouldConnectAWildcardPublicationToASubscriberThatReachedItOnAnotherAddress()
    {
        deliver("0.0.0.0", "127.0.0.2");
    }

    @Test
    void shouldConnectAPublicationBoundToOneAddressWithoutTheProperty()
    {
        deliver("127.0.0.3", "127.0.0.3");
    }

    @Test
    void shouldConnectASubscriptionThatNamesThePublisherByHostName()
    {
        deliver("127.0.0.1", "localhost");
    }

    @Test
    void shouldNotLookUpAHostNameOnTheThreadAddingTheSubscription()
    {
        // A name no resolver knows: a lookup would take the resolver's timeout and end in the same wildcard, so the
        // assertion that counts is the one on the address a literal gets below.
        final FabricContext named = new FabricContext();
        TcpNicAddress.applyDefault(named, RdmaChannelParams.from(
            io.verbus.ChannelUri.parse("rdma:endpoint=publisher.invalid:40123|provider=tcp")), false);
        assertEquals("0.0.0.0", named.tcpAddress(), "every address; the control connection's local one is advertised");

        final FabricContext localhost = new FabricContext();
        TcpNicAddress.applyDefault(localhost, RdmaChannelParams.from(
            io.verbus.ChannelUri.parse("rdma:endpoint=localhost:40123|provider=tcp")), false);
        assertEquals("0.0.0.0", localhost.tcpAddress(), "a name is not resolved here, even one that resolves");
    }

    @Test
    void shouldListenOnTheHostsOwnAddressForAPublisherReachedOverIt() throws Exception
    {
        final RdmaChannelParams loopback = RdmaChannelParams.from(
            io.verbus.ChannelUri.parse("rdma:endpoint=127.0.0.2:40123|provider=tcp"));
        final FabricContext subscriber = new FabricContext();
        TcpNicAddress.applyDefault(subscriber, loopback, false);
        assertEquals("127.0.0.1", subscriber.tcpAddress(), "the kernel's source address towards 127.0.0.2");

        final FabricContext publisher = new FabricContext();
        TcpNicAddress.applyDefault(publisher, loopback, true);
        assertEquals("127.0.0.2", publisher.tcpAddress(), "where the control port listens");

        final InetAddress own = firstNonLoopbackIpv4();
        if (null != own)
        {
            final FabricContext toOwn = new FabricContext();
            TcpNicAddress.applyDefault(toOwn, RdmaChannelParams.from(io.verbus.ChannelUri.parse(
                "rdma:endpoint=" + own.getHostAddress() + ":40123|provider=tcp")), false);
            assertEquals(own.getHostAddress(), toOwn.tcpAddress());
        }

        System.setProperty(FabricContext.TCP_ADDRESS_PROP_NAME, "127.0.0.9");
        try
        {
            final FabricContext configured = new FabricContext();
            TcpNicAddress.applyDefault(configured, loopback, false);
            assertEquals("127.0.0.9", configured.tcpAddress(), "the property wins");
        }
        finally
        {
            System.clearProperty(FabricContext.TCP_ADDRESS_PROP_NAME);
        }
    }

    private void deliver(final String publicationHost, final String subscriptionHost)
    {
        try (Verbus verbus = Verbus.launch(new Verbus.Context()
            .dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping")))
        {
            final Publication publication = verbus.addPublication(
                "rdma:endpoint=" + publicationHost + ":0|provider=tcp|term-length=64k|timeout=2s", 2101);
            final int port = RdmaVerbusTest.controlPort(verbus.countersReader());
            assertTrue(port > 0);
            final Subscription subscription =
                verbus.addSubscription("rdma:endpoint=" + subscriptionHost + ":" + port + "|provider=tcp", 2101);

            RdmaVerbusTest.offerAndReceive(publication, new ExpandableArrayBuffer(2048), 0, 2_000,
                new Subscription[]{ subscription }, new MessageStream.Checker[]{ new MessageStream.Checker(0) });
        }
    }

    private static InetAddress firstNonLoopbackIpv4() throws Exception
    {
        for (final NetworkInterface nic : Collections.list(NetworkInterface.getNetworkInterfaces()))
        {
            if (nic.isUp() && !nic.isLoopback())
            {
                for (final InetAddress address : Collections.list(nic.getInetAddresses()))
                {
                    if (address instanceof Inet4Address)
                    {
                        return address;
                    }
                }
            }
        }
        return null;
    }
}
