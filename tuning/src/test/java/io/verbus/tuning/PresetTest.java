package io.verbus.tuning;

import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class PresetTest
{
    @TempDir
    Path root;

    @Test
    void shouldSetLowLatencyToDedicatedBusySpinPinnedHugepagesAndPreTouch()
    {
        final PresetSettings settings = Preset.byName("low-latency").settings(CpuSet.parse("2-4"));

        assertEquals(new PresetSettings(ThreadingMode.DEDICATED, "busy-spin", 4, 2, 3, true, "-XX:+AlwaysPreTouch",
            "provider=auto"), settings);
    }

    @Test
    void shouldConfigureARealVerbusContextThatThenConcludes()
    {
        final Verbus.Context context = new Verbus.Context()
            .dir(root.resolve("verbus").toString())
            .threadingMode(ThreadingMode.INVOKER)
            .idleStrategy("sleeping")
            .useHugePages(false);

        // CPU 0 exists on every machine; conclude() checks pins against the online CPUs.
        Preset.LOW_LATENCY.applyTo(context, CpuSet.of(0));

        assertEquals(ThreadingMode.DEDICATED, context.threadingMode());
        assertEquals("busy-spin", context.idleStrategy());
        assertEquals(0, context.senderCpu());
        assertEquals(-1, context.receiverCpu());
        assertEquals(-1, context.conductorCpu());
        assertTrue(context.useHugePages());
        assertEquals(root.resolve("verbus").toString(), context.dir(), "settings the preset does not name stay");
        context.conclude();
    }

    @Test
    void shouldResetPinsAndSpinningWhenDefaultIsApplied()
    {
        final Verbus.Context context = Preset.LOW_LATENCY.applyTo(new Verbus.Context(), CpuSet.of(0));

        Preset.DEFAULT.applyTo(context, CpuSet.of(0));

        assertEquals(ThreadingMode.SHARED, context.threadingMode());
        assertEquals("backoff", context.idleStrategy());
        assertEquals(-1, context.senderCpu());
        assertEquals(-1, context.receiverCpu());
        assertEquals(-1, context.conductorCpu());
    }

    @Test
    void shouldNeverPinTwoAgentsToOneCpu()
    {
        final PresetSettings settings = Preset.LOW_LATENCY.settings(CpuSet.of(6));

        assertEquals(6, settings.senderCpu());
        assertEquals(-1, settings.receiverCpu());
        assertEquals(-1, settings.conductorCpu());
    }

    @Test
    void shouldSetDefaultToSharedBackoffWithoutPinning()
    {
        final PresetSettings settings = Preset.byName("default").settings(CpuSet.parse("2-4"));

        assertEquals(new PresetSettings(ThreadingMode.SHARED, "backoff", -1, -1, -1, true, "", "provider=auto"),
            settings);
    }

    @Test
    void shouldChooseVerbsOnlyWhereTheHostHasAnActiveHardwarePort()
    {
        final RdmaInventory good = RdmaInventory.scan(FakeHost.goodHost(root.resolve("good")).fs());
        final RdmaInventory bad = RdmaInventory.scan(FakeHost.badHost(root.resolve("bad")).fs());
        final RdmaInventory none = RdmaInventory.scan(FakeHost.noRdmaHost(root.resolve("none")).fs());

        assertEquals("provider=verbs", Preset.LOW_LATENCY.channelParameters(good));
        assertEquals("provider=auto", Preset.LOW_LATENCY.channelParameters(bad));
        assertEquals("provider=auto", Preset.LOW_LATENCY.channelParameters(none));
        assertEquals("provider=auto", Preset.DEFAULT.channelParameters(good));
    }

    @Test
    void shouldRejectUnknownPresetNamingTheKnownOnes()
    {
        assertEquals("unknown preset 'turbo': expected one of [low-latency, default]",
            assertThrows(IllegalArgumentException.class, () -> Preset.byName("turbo")).getMessage());
    }

    @Test
    void shouldDescribeWhatItSets()
    {
        final String text = String.join("\n", Preset.LOW_LATENCY.describe(CpuSet.EMPTY,
            RdmaInventory.scan(FakeHost.noRdmaHost(root).fs())));

        assertTrue(text.contains("threading mode     DEDICATED"), text);
        assertTrue(text.contains("no --cpus given, so the spinning agents are not pinned"), text);
        assertTrue(text.contains("tries: verbs on an InfiniBand port, then verbs on a RoCE v2 port, then tcp (soft); " +
            "shm only when named"), text);
    }
}
