package io.verbus.tuning;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class CpuSetTest
{
    @Test
    void shouldParseKernelListFormatAndPrintItCollapsed()
    {
        final CpuSet cpus = CpuSet.parse(" 0-2,5, 7-8,3 ");

        assertArrayEquals(new int[]{ 0, 1, 2, 3, 5, 7, 8 }, cpus.toArray());
        assertEquals("0-3,5,7-8", cpus.toString());
        assertEquals(cpus, CpuSet.parse(cpus.toString()));
    }

    @Test
    void shouldTreatBlankAndNullAsEmpty()
    {
        assertTrue(CpuSet.parse("").isEmpty());
        assertTrue(CpuSet.parse("(null)").isEmpty());
        assertEquals(-1, CpuSet.EMPTY.first());
    }

    @Test
    void shouldRejectMalformedListsNamingThePart()
    {
        assertEquals("CPU range '5-2' runs backwards in '1,5-2'",
            assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("1,5-2")).getMessage());
        assertEquals("not a CPU number: 'a' in CPU list '1,a'",
            assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("1,a")).getMessage());
        assertTrue(assertThrows(IllegalArgumentException.class, () -> CpuSet.parse("99999")).getMessage()
            .contains("out of range"));
    }

    @Test
    void shouldCombineSets()
    {
        final CpuSet a = CpuSet.parse("0-3");
        final CpuSet b = CpuSet.parse("2-5");

        assertEquals("0-5", a.union(b).toString());
        assertEquals("2-3", a.intersection(b).toString());
        assertEquals("0-1", a.minus(b).toString());
        assertTrue(a.intersects(b));
        assertTrue(a.containsAll(CpuSet.of(1, 3)));
    }

    @Test
    void shouldReadIsolcpusListAfterItsFlags()
    {
        final KernelCommandLine cmdline = new KernelCommandLine(
            "root=/dev/sda isolcpus=managed_irq,domain,2-5,8 nohz_full=2-5 quiet -- isolcpus=0");

        assertEquals("2-5,8", cmdline.cpuList("isolcpus").toString());
        assertEquals("2-5", cmdline.cpuList("nohz_full").toString());
        assertTrue(cmdline.cpuList("rcu_nocbs").isEmpty());
        assertEquals("", cmdline.get("quiet").orElseThrow());
    }

    @Test
    void shouldSortNamesWithNumbersByValue()
    {
        assertTrue(HostFs.compareNatural("cpu9", "cpu10") < 0);
        assertTrue(HostFs.compareNatural("state2", "state10") < 0);
        assertEquals(0, HostFs.compareNatural("mlx5_0", "mlx5_0"));
    }
}
