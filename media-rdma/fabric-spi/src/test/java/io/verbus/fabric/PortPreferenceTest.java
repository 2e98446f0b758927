package io.verbus.fabric;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PortPreferenceTest
{
    @Test
    void shouldPreferHardwareThenInfiniBandThenTheLargerMtu()
    {
        final PortPreference.Candidate rxe = candidate("rxe0", true, false, true, 4096);
        final PortPreference.Candidate roce1k = candidate("mlx5_0", false, false, true, 1024);
        final PortPreference.Candidate roce4k = candidate("mlx5_1", false, false, true, 4096);
        final PortPreference.Candidate ib2k = candidate("mlx5_2", false, true, false, 2048);
        final List<PortPreference.Candidate> ports = new ArrayList<>(List.of(rxe, roce1k, roce4k, ib2k));
        ports.sort(PortPreference.BEST_FIRST);
        assertEquals(List.of(ib2k, roce4k, roce1k, rxe), ports);
    }

    @Test
    void shouldUseOnlyActivePortsThatCarryInfiniBandOrRoceV2()
    {
        assertTrue(candidate("mlx5_0", false, true, false, 4096).isUsable());
        assertFalse(new PortPreference.Candidate("mlx5_0", false, 1, false, true, false, 4096).isUsable());
        assertFalse(candidate("mlx5_0", false, false, false, 4096).isUsable(), "Ethernet without a RoCE v2 GID");
    }

    @Test
    void shouldKnowTheKernelsSoftwareDevices()
    {
        assertTrue(PortPreference.isSoftwareDevice("rxe0"));
        assertTrue(PortPreference.isSoftwareDevice("siw_eth0"));
        assertFalse(PortPreference.isSoftwareDevice("mlx5_0"));
    }

    private static PortPreference.Candidate candidate(
        final String device, final boolean software, final boolean infiniBand, final boolean roceV2, final int mtu)
    {
        return new PortPreference.Candidate(device, software, 1, true, infiniBand, roceV2, mtu);
    }
}
