package io.verbus.fabric.verbs;

import org.junit.jupiter.api.Test;

import java.net.InetAddress;
import java.util.List;

import static io.verbus.fabric.verbs.IbvConstants.IBV_GID_TYPE_ROCE_V1;
import static io.verbus.fabric.verbs.IbvConstants.IBV_GID_TYPE_ROCE_V2;
import static io.verbus.fabric.verbs.IbvConstants.IBV_LINK_LAYER_ETHERNET;
import static io.verbus.fabric.verbs.IbvConstants.IBV_LINK_LAYER_INFINIBAND;
import static io.verbus.fabric.verbs.IbvConstants.IBV_PORT_ACTIVE;
import static io.verbus.fabric.verbs.IbvConstants.IBV_PORT_DOWN;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PortSelectorTest
{
    private static final byte[] LINK_LOCAL = gid("fe80::1");
    private static final byte[] IPV4_A = gid("::ffff:10.0.0.1");
    private static final byte[] IPV4_B = gid("::ffff:10.0.0.2");

    @Test
    void shouldPreferAnActiveInfiniBandPortOverRoce()
    {
        final PortSelector.PortInfo roce = ethernet("mlx5_0", 1, IBV_PORT_ACTIVE, 4096,
            new PortSelector.GidInfo(3, IPV4_A, IBV_GID_TYPE_ROCE_V2));
        final PortSelector.PortInfo ib = infiniBand("mlx5_1", 1, IBV_PORT_ACTIVE, 2048, 7);

        final PortSelector.PortChoice choice = PortSelector.choose(List.of(roce, ib), null);

        assertEquals("mlx5_1", choice.port().deviceName());
        assertTrue(choice.isInfiniBand());
        assertEquals(0, choice.gidIndex());
        assertTrue(choice.explanation().contains("InfiniBand") && choice.explanation().contains("LID 7"),
            choice.explanation());
    }

    @Test
    void shouldPreferAHardwareRocePortOverSoftRoceWhateverTheMtu()
    {
        final PortSelector.PortInfo rxe = ethernet("rxe0", 1, IBV_PORT_ACTIVE, 4096,
            new PortSelector.GidInfo(1, IPV4_A, IBV_GID_TYPE_ROCE_V2));
        final PortSelector.PortInfo hardware = ethernet("mlx5_0", 1, IBV_PORT_ACTIVE, 1024,
            new PortSelector.GidInfo(3, IPV4_B, IBV_GID_TYPE_ROCE_V2));

        final PortSelector.PortChoice choice = PortSelector.choose(List.of(rxe, hardware), null);

        assertEquals("mlx5_0", choice.port().deviceName(), "the same rule as ./verbus tune's report");
        assertTrue(choice.explanation().contains("hardware before software"), choice.explanation());
    }

    @Test
    void shouldIgnorePortsThatAreNotActive()
    {
        final PortSelector.PortInfo downIb = infiniBand("mlx5_1", 1, IBV_PORT_DOWN, 4096, 7);
        final PortSelector.PortInfo roce = ethernet("mlx5_0", 2, IBV_PORT_ACTIVE, 1024,
            new PortSelector.GidInfo(1, IPV4_A, IBV_GID_TYPE_ROCE_V2));

        final PortSelector.PortChoice choice = PortSelector.choose(List.of(downIb, roce), null);

        assertEquals("mlx5_0", choice.port().deviceName());
        assertEquals(2, choice.port().portNumber());
    }

    @Test
    void shouldPreferTheLargestActiveMtuBetweenEqualLinkLayers()
    {
        final PortSelector.PortInfo small = ethernet("rxe0", 1, IBV_PORT_ACTIVE, 1024,
            new PortSelector.GidInfo(1, IPV4_A, IBV_GID_TYPE_ROCE_V2));
        final PortSelector.PortInfo large = ethernet("rxe1", 1, IBV_PORT_ACTIVE, 4096,
            new PortSelector.GidInfo(1, IPV4_B, IBV_GID_TYPE_ROCE_V2));

        assertEquals("rxe1", PortSelector.choose(List.of(small, large), null).port().deviceName());
    }

    @Test
    void shouldTakeTheRoceV2GidOfTheConfiguredAddress() throws Exception
    {
        final PortSelector.PortInfo port = ethernet("rxe0", 1, IBV_PORT_ACTIVE, 1024,
            new PortSelector.GidInfo(0, LINK_LOCAL, IBV_GID_TYPE_ROCE_V2),
            new PortSelector.GidInfo(1, IPV4_A, IBV_GID_TYPE_ROCE_V1),
            new PortSelector.GidInfo(2, IPV4_A, IBV_GID_TYPE_ROCE_V2),
            new PortSelector.GidInfo(3, IPV4_B, IBV_GID_TYPE_ROCE_V2));

        final PortSelector.PortChoice choice = PortSelector.choose(List.of(port), InetAddress.getByName("10.0.0.2"));

        assertEquals(3, choice.gidIndex());
        assertArrayEquals(IPV4_B, choice.gid());
        assertTrue(choice.explanation().contains("RoCE v2") && choice.explanation().contains("10.0.0.2"),
            choice.explanation());
    }

    @Test
    void shouldPreferAnIpv4MappedRoceV2GidOverTheLinkLocalOneWithoutAConfiguredAddress()
    {
        final PortSelector.PortInfo port = ethernet("rxe0", 1, IBV_PORT_ACTIVE, 1024,
            new PortSelector.GidInfo(0, LINK_LOCAL, IBV_GID_TYPE_ROCE_V2),
            new PortSelector.GidInfo(1, IPV4_A, IBV_GID_TYPE_ROCE_V1),
            new PortSelector.GidInfo(2, IPV4_A, IBV_GID_TYPE_ROCE_V2));

        assertEquals(2, PortSelector.choose(List.of(port), null).gidIndex());
    }

    @Test
    void shouldRejectAnEthernetPortWithoutARoceV2GidAndSayWhy() throws Exception
    {
        final PortSelector.PortInfo v1Only = ethernet("mlx4_0", 1, IBV_PORT_ACTIVE, 1024,
            new PortSelector.GidInfo(0, IPV4_A, IBV_GID_TYPE_ROCE_V1));
        final PortSelector.PortInfo otherAddress = ethernet("rxe0", 1, IBV_PORT_ACTIVE, 1024,
            new PortSelector.GidInfo(1, IPV4_A, IBV_GID_TYPE_ROCE_V2));
        final PortSelector.PortInfo down = infiniBand("mlx5_0", 1, IBV_PORT_DOWN, 4096, 0);
        final InetAddress wanted = InetAddress.getByName("10.0.0.2");

        assertNull(PortSelector.choose(List.of(v1Only, otherAddress, down), wanted));
        final String why = PortSelector.whyNone(List.of(v1Only, otherAddress, down), wanted);
        assertTrue(why.contains("mlx4_0 port 1: Ethernet with no RoCE v2 GID for 10.0.0.2"), why);
        assertTrue(why.contains("mlx5_0 port 1: not ACTIVE"), why);
    }

    @Test
    void shouldMapAnIpv4AddressToItsIpv4MappedGid() throws Exception
    {
        assertArrayEquals(IPV4_A, PortSelector.gidOf(InetAddress.getByName("10.0.0.1")));
    }

    private static PortSelector.PortInfo ethernet(
        final String device, final int port, final int state, final int mtu, final PortSelector.GidInfo... gids)
    {
        return new PortSelector.PortInfo(device, port, state, IBV_LINK_LAYER_ETHERNET, 0, mtu, 1 << 30, List.of(gids));
    }

    private static PortSelector.PortInfo infiniBand(
        final String device, final int port, final int state, final int mtu, final int lid)
    {
        return new PortSelector.PortInfo(device, port, state, IBV_LINK_LAYER_INFINIBAND, lid, mtu, 1 << 30,
            List.of(new PortSelector.GidInfo(0, LINK_LOCAL, 0)));
    }

    private static byte[] gid(final String address)
    {
        try
        {
            final byte[] raw = InetAddress.getByName(address).getAddress();
            return raw.length == 16 ? raw : PortSelector.gidOf(InetAddress.getByName(address));
        }
        catch (final Exception ex)
        {
            throw new IllegalArgumentException(ex);
        }
    }
}
