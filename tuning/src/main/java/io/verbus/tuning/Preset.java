package io.verbus.tuning;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Named configurations the driver and the gateway take by name.
 * <ul>
 * <li>{@code low-latency}: DEDICATED threads, busy-spin idle, sender / receiver / conductor pinned to the CPUs given
 * (in that order: the agents on the message path get CPUs first), hugepage rings, pre-touch, and the rdma provider
 * chosen verbs-first (InfiniBand, then RoCE v2, then the soft providers).</li>
 * <li>{@code default}: SHARED threads, backoff idle, no pinning, no hugepage requirement, no pre-touch,
 * {@code provider=auto}.</li>
 * </ul>
 */
public enum Preset
{
    LOW_LATENCY("low-latency", "DEDICATED", "busy-spin", true, true),
    DEFAULT("default", "SHARED", "backoff", false, false);

    /**
     * {@code provider=auto} tries these in order; it is what both presets put on rdma channels by default.
     */
    public static final List<String> PROVIDER_PREFERENCE =
        List.of("verbs on an InfiniBand port", "verbs on a RoCE v2 port", "tcp (soft)", "shm (soft, one host)");

    public static final String PROVIDER_AUTO = "provider=auto";
    public static final String PROVIDER_VERBS = "provider=verbs";

    private final String presetName;
    private final String threadingMode;
    private final String idleStrategy;
    private final boolean hugePages;
    private final boolean preTouch;

    Preset(final String presetName, final String threadingMode, final String idleStrategy, final boolean hugePages,
        final boolean preTouch)
    {
        this.presetName = presetName;
        this.threadingMode = threadingMode;
        this.idleStrategy = idleStrategy;
        this.hugePages = hugePages;
        this.preTouch = preTouch;
    }

    /**
     * @param name {@code low-latency} or {@code default}.
     * @return the preset.
     * @throws IllegalArgumentException naming the known presets when the name is unknown.
     */
    public static Preset byName(final String name)
    {
        for (final Preset preset : values())
        {
            if (preset.presetName.equals(name))
            {
                return preset;
            }
        }
        throw new IllegalArgumentException("unknown preset '" + name + "': expected one of " + names());
    }

    public static List<String> names()
    {
        return Arrays.stream(values()).map(Preset::presetName).toList();
    }

    public String presetName()
    {
        return presetName;
    }

    /**
     * @param cpus CPUs to pin to; ignored by {@code default}. The sender gets the first, the receiver the second,
     *             the conductor the third; agents beyond the CPUs given stay unpinned, never doubled up on a CPU
     *             (two spinning threads on one CPU take turns at scheduler speed).
     * @return what this preset sets.
     */
    public PresetSettings settings(final CpuSet cpus)
    {
        final int[] pins = this == LOW_LATENCY ? cpus.toArray() : new int[0];
        return new PresetSettings(
            threadingMode,
            idleStrategy,
            pin(pins, 2),
            pin(pins, 0),
            pin(pins, 1),
            hugePages,
            preTouch,
            channelParameters());
    }

    /**
     * @return the channel parameters this preset puts on rdma channels whatever the host: {@code provider=auto},
     *         which tries {@link #PROVIDER_PREFERENCE} in order.
     */
    public String channelParameters()
    {
        return PROVIDER_AUTO;
    }

    /**
     * @param host the RDMA devices of the host the channel runs on.
     * @return for {@code low-latency} on a host with an active hardware RDMA port, {@code provider=verbs} (so a host
     *         whose NIC breaks fails loudly rather than measuring TCP); otherwise {@link #channelParameters()}.
     */
    public String channelParameters(final RdmaInventory host)
    {
        if (this == LOW_LATENCY)
        {
            final Optional<RdmaPort> port = host.preferredPort();
            if (port.isPresent() && !host.deviceOf(port.get()).soft())
            {
                return PROVIDER_VERBS;
            }
        }
        return channelParameters();
    }

    /**
     * @return lines that say exactly what this preset sets with these CPUs on this host.
     */
    public List<String> describe(final CpuSet cpus, final RdmaInventory host)
    {
        final PresetSettings settings = settings(cpus);
        final List<String> lines = new ArrayList<>();
        lines.add("preset " + presetName + ":");
        lines.add("  threading mode     " + settings.threadingMode());
        lines.add("  idle strategy      " + settings.idleStrategy());
        lines.add("  sender CPU         " + cpuText(settings.senderCpu()));
        lines.add("  receiver CPU       " + cpuText(settings.receiverCpu()));
        lines.add("  conductor CPU      " + cpuText(settings.conductorCpu()));
        lines.add("  hugepage rings     " + (settings.hugePages() ? "yes" : "no (bus-core's default)"));
        lines.add("  pre-touch          " + (settings.preTouch() ? "yes" : "no (bus-core's default)"));
        lines.add("  rdma channels      " + channelParameters(host) + " on this host (" + channelParameters() +
            " tries: " + String.join(", then ", PROVIDER_PREFERENCE) + ")");
        if (this == LOW_LATENCY && cpus.isEmpty())
        {
            lines.add("  note: no --cpus given, so the spinning agents are not pinned");
        }
        if (this == LOW_LATENCY && cpus.size() > 3)
        {
            lines.add("  note: only the first 3 CPUs of " + cpus + " are used (sender, receiver, conductor)");
        }
        return lines;
    }

    private static int pin(final int[] cpus, final int index)
    {
        return index < cpus.length ? cpus[index] : -1;
    }

    private static String cpuText(final int cpu)
    {
        return cpu < 0 ? "not pinned" : Integer.toString(cpu);
    }
}
