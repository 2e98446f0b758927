package io.verbus.bench;

import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchOptionsTest
{
    @Test
    void shouldDefaultToEveryPartTheIssueSizesAndNoJson()
    {
        final BenchOptions options = BenchOptions.parse();

        assertTrue(options.runs(BenchOptions.Part.LATENCY));
        assertTrue(options.runs(BenchOptions.Part.THROUGHPUT));
        assertTrue(options.runs(BenchOptions.Part.SEED));
        assertFalse(options.runs(BenchOptions.Part.BURST), "the burst tails run only when asked for");
        assertArrayEquals(new int[]{ 32, 256, 1024 }, options.latencySizes());
        assertArrayEquals(new int[]{ 32, 256, 1024, 4096 }, options.throughputSizes());
        assertNull(options.jsonFile());
        assertEquals(Path.of("verbus-bench-latency.svg"), options.svgFile());
        assertFalse(options.quick());
        assertEquals(0, options.pingerCpu());
        assertEquals(1, options.pongerCpu());
    }

    @Test
    void shouldTakeRoundsWithinRange()
    {
        assertEquals(1, BenchOptions.parse(new String[0]).rounds());
        assertEquals(3, BenchOptions.parse(new String[]{ "--quick", "--rounds", "3" }).rounds());
        final IllegalArgumentException zero = assertThrows(IllegalArgumentException.class,
            () -> BenchOptions.parse(new String[]{ "--rounds", "0" }));
        assertTrue(zero.getMessage().contains("--rounds"), zero.getMessage());
        assertThrows(IllegalArgumentException.class,
            () -> BenchOptions.parse(new String[]{ "--rounds", String.valueOf(BenchOptions.MAX_ROUNDS + 1) }));
    }

    @Test
    void shouldShortenEveryPhaseWhenQuick()
    {
        final BenchOptions normal = BenchOptions.parse();
        final BenchOptions quick = BenchOptions.parse("--quick");

        assertTrue(quick.quick());
        assertTrue(quick.warmupNs() < normal.warmupNs());
        assertTrue(quick.measureNs() < normal.measureNs());
        assertTrue(quick.throughputNs() < normal.throughputNs());
        assertTrue(quick.maxRoundTrips() < normal.maxRoundTrips());
    }

    @Test
    void shouldLetExplicitDurationsOverrideQuick()
    {
        final BenchOptions options = BenchOptions.parse("--quick", "--warmup-ms", "5", "--measure-ms", "7",
            "--throughput-ms", "9", "--max-round-trips", "11");

        assertEquals(TimeUnit.MILLISECONDS.toNanos(5), options.warmupNs());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(7), options.measureNs());
        assertEquals(TimeUnit.MILLISECONDS.toNanos(9), options.throughputNs());
        assertEquals(11, options.maxRoundTrips());
    }

    @Test
    void shouldPutTheSvgNextToTheJsonUnlessToldOtherwise()
    {
        assertEquals(Path.of("out", "run.svg"), BenchOptions.parse("--json", "out/run.json").svgFile());
        assertEquals(Path.of("plot.svg"), BenchOptions.parse("--json", "out/run.json", "--svg", "plot.svg").svgFile());
        assertEquals(Path.of("out/run.json"), BenchOptions.parse("--json", "out/run.json").jsonFile());
    }

    @Test
    void shouldSelectPartsAndContenders()
    {
        final BenchOptions options = BenchOptions.parse("--only", "latency,Seed", "--contenders", "^aeron-");

        assertTrue(options.runs(BenchOptions.Part.LATENCY));
        assertTrue(options.runs(BenchOptions.Part.SEED));
        assertFalse(options.runs(BenchOptions.Part.THROUGHPUT));
        assertTrue(options.selects("aeron-ipc"));
        assertFalse(options.selects("verbus-aeron-ipc"));

        final BenchOptions burst = BenchOptions.parse("--only", "burst");
        assertTrue(burst.runs(BenchOptions.Part.BURST));
        assertFalse(burst.runs(BenchOptions.Part.LATENCY));
    }

    @Test
    void shouldParseSizesAndCpus()
    {
        final BenchOptions options = BenchOptions.parse("--sizes", "64, 128", "--throughput-sizes", "4096",
            "--no-pin");

        assertArrayEquals(new int[]{ 64, 128 }, options.latencySizes());
        assertArrayEquals(new int[]{ 4096 }, options.throughputSizes());
        assertEquals(-1, options.pingerCpu());
        assertEquals(-1, options.pongerCpu());
    }

    @Test
    void shouldHandTheRestOfTheCommandLineToJmh()
    {
        final BenchOptions options = BenchOptions.parse("--jmh", "Offer", "-prof", "gc", "--quick");

        assertTrue(options.jmh());
        assertEquals(List.of("Offer", "-prof", "gc", "--quick"), options.jmhArgs());
        assertFalse(options.quick());
    }

    @Test
    void shouldRejectUnknownFlagNamingIt()
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--quik"));
        assertTrue(ex.getMessage().contains("--quik"), ex.getMessage());
    }

    @Test
    void shouldRejectFlagWithoutItsValue()
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--json"));
        assertTrue(ex.getMessage().contains("--json needs a value"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--json", "--quick"));
    }

    @Test
    void shouldRejectSizesTooSmallToCarryTheSequenceOrNotNumbers()
    {
        final IllegalArgumentException small =
            assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--sizes", "32,8"));
        assertTrue(small.getMessage().contains("--sizes") && small.getMessage().contains("8"), small.getMessage());
        final IllegalArgumentException text =
            assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--sizes", "1k"));
        assertTrue(text.getMessage().contains("'1k' is not a whole number"), text.getMessage());
    }

    @Test
    void shouldRejectUnknownPartAndBadRegex()
    {
        final IllegalArgumentException part =
            assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--only", "latency,speed"));
        assertTrue(part.getMessage().contains("speed"), part.getMessage());
        final IllegalArgumentException regex =
            assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--contenders", "(aeron"));
        assertTrue(regex.getMessage().contains("--contenders"), regex.getMessage());
    }

    @Test
    void shouldRejectBothThreadsOnOneCpu()
    {
        final IllegalArgumentException ex =
            assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--cpus", "0,0"));
        assertTrue(ex.getMessage().contains("two different CPUs"), ex.getMessage());
        assertThrows(IllegalArgumentException.class, () -> BenchOptions.parse("--cpus", "0"));
    }
}
