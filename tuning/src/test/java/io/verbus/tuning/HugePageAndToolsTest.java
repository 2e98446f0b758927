package io.verbus.tuning;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.List;
import java.util.Optional;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HugePageAndToolsTest
{
    private static final long TWO_GIB = 2L * 1024 * 1024 * 1024;

    @TempDir
    Path root;

    private List<CheckResult> hugePageLines(final FakeHost host, final RingSizing rings)
    {
        return new HugePageCheck().check(
            new CheckContext(host.fs(), HostTools.NONE, rings, CpuSet.EMPTY, JvmFlags.of("")));
    }

    @Test
    void shouldAcceptOneGigPagesForLargeRingsAndSaySo()
    {
        final FakeHost host = FakeHost.noRdmaHost(root).hugePages("hugepages-1048576kB", 4, 4);

        final List<CheckResult> lines = hugePageLines(host, RingSizing.given(TWO_GIB));

        assertEquals(Status.WARN, lines.get(0).status());
        assertTrue(lines.get(0).detail().endsWith("(1 GiB pages cover them)"), lines.get(0).toLine());
        assertEquals(List.of("echo 1024 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"),
            lines.get(0).commands());
        assertEquals(Status.OK, lines.get(1).status(), lines.get(1).toLine());
        assertTrue(lines.get(1).detail().startsWith("4 reserved, 4 free (4 GiB) covers the rings' 2 GiB (assumed " +
            "--ring-bytes 2g)"), lines.get(1).toLine());
    }

    @Test
    void shouldAskForOneGigPagesAtBootWhenLargeRingsAreUncovered()
    {
        final List<CheckResult> lines = hugePageLines(FakeHost.noRdmaHost(root), RingSizing.fromTerms(1L << 30, 1));

        assertEquals(Status.WARN, lines.get(1).status(), lines.get(1).toLine());
        assertTrue(lines.get(1).fix().contains("&hugepagesz=1G hugepages=3 /"), lines.get(1).toLine());
        assertTrue(lines.get(1).commands().isEmpty(), "1 GiB pages are reserved at boot, not by apply");
    }

    @Test
    void shouldNotCountPagesReservedByOtherMappingsAsFree()
    {
        final FakeHost host = FakeHost.noRdmaHost(root)
            .hugePages("hugepages-2048kB", 512, 512)
            .file("/sys/kernel/mm/hugepages/hugepages-2048kB/resv_hugepages", "500");

        final CheckResult line = hugePageLines(host, RingSizing.given(48L << 20)).getFirst();

        assertEquals(Status.WARN, line.status(), line.toLine());
        assertTrue(line.detail().startsWith("512 reserved, 12 free (24 MiB)"), line.toLine());
        assertEquals(List.of("echo 524 > /sys/kernel/mm/hugepages/hugepages-2048kB/nr_hugepages"), line.commands());
    }

    @Test
    void shouldRunRealToolsAndTreatMissingOrFailingOnesAsUnavailable()
    {
        final HostTools tools = HostTools.system();

        assertEquals(Optional.of("verbus\n"), tools.run(List.of("sh", "-c", "echo verbus")));
        assertEquals(Optional.empty(), tools.run(List.of("sh", "-c", "exit 3")));
        assertEquals(Optional.empty(), tools.run(List.of("verbus-no-such-tool-on-any-path")));
    }

    @Test
    void shouldRejectRingSizesThatAreNotPowersOfTwoTerms()
    {
        assertEquals("768 MiB (assumed term-length 64m x 3 partitions x 4 subscribers)",
            RingSizing.fromTerms(64L << 20, 4).describe());
        assertTrue(org.junit.jupiter.api.Assertions.assertThrows(IllegalArgumentException.class,
            () -> RingSizing.fromTerms(3L << 20, 1)).getMessage().contains("power of two"));
    }
}
