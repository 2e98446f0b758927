package io.verbus.tuning;

import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.driver.Affinity;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * Named configurations the driver and the gateway take by name, applied to a {@link Verbus.Context}.
 * <ul>
 * <li>{@code low-latency}: DEDICATED agent threads, busy-spin idle, the sender / receiver / conductor pinned to the
 * CPUs given (in that order: the agents on the message path get CPUs first, never two on one CPU), hugepage-backed
 * logs and rings, heap pre-touch ({@code -XX:+AlwaysPreTouch}; bus-core pre-touches every log itself), and rdma
 * channels verbs-first: InfiniBand, then RoCE v2, then the soft providers.</li>
 * <li>{@code default}: SHARED agent thread, backoff idle, no pinning, hugepages where available, no extra JVM flags,
 * {@code provider=auto}: bus-core's own defaults, spelled out.</li>
 * </ul>
 */
public enum Preset
{
    LOW_LATENCY("low-latency", ThreadingMode.DEDICATED, "busy-spin", "-XX:+AlwaysPreTouch"),
    DEFAULT("default", ThreadingMode.SHARED, "backoff", "");

    /**
     * The order {@code provider=auto} tries providers in; what both presets put on rdma channels by default. Never
     * shm: a publication cannot know that its subscribers share its host, so shm is only taken when named.
     */
    public static final List<String> PROVIDER_PREFERENCE =
        List.of("verbs on an InfiniBand port", "verbs on a RoCE v2 port", "tcp (soft)");

    public static final String PROVIDER_AUTO = "provider=auto";
    public static final String PROVIDER_VERBS = "provider=verbs";

    private final String presetName;
    private final ThreadingMode threadingMode;
    private final String idleStrategy;
    private final String jvmFlags;

    Preset(final String presetName, final ThreadingMode threadingMode, final String idleStrategy, final String jvmFlags)
    {
        this.presetName = presetName;
        this.threadingMode = threadingMode;
        this.idleStrategy = idleStrategy;
        this.jvmFlags = jvmFlags;
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
            true,
            jvmFlags,
            channelParameters());
    }

    /**
     * Writes this preset into a context; settings it does not name are left as they were.
     *
     * @param context the context to configure, before {@link Verbus#launch(Verbus.Context)}.
     * @param cpus    CPUs for the agents (see {@link #settings(CpuSet)}); {@link CpuSet#EMPTY} for none.
     * @return the context.
     */
    public Verbus.Context applyTo(final Verbus.Context context, final CpuSet cpus)
    {
        Objects.requireNonNull(context, "context");
        final PresetSettings settings = settings(Objects.requireNonNull(cpus, "cpus"));
        return context
            .threadingMode(settings.threadingMode())
            .idleStrategy(settings.idleStrategy())
            .conductorCpu(settings.conductorCpu())
            .senderCpu(settings.senderCpu())
            .receiverCpu(settings.receiverCpu())
            .useHugePages(settings.useHugePages());
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
     * @param host the RDMA devices of the host the channel runs on ({@link RdmaInventory#scan(HostFs)}).
     * @return for {@code low-latency} on a host with an active hardware RDMA port, {@code provider=verbs} (the verbs
     *         provider itself takes InfiniBand before RoCE v2, and a NIC that breaks then fails loudly instead of
     *         quietly measuring TCP); otherwise {@link #channelParameters()}.
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
        lines.add("  threading mode     " + settings.threadingMode() + "    (Verbus.Context.threadingMode)");
        lines.add("  idle strategy      " + settings.idleStrategy() + "    (Verbus.Context.idleStrategy)");
        lines.add("  sender CPU         " + cpuText(settings.senderCpu()) + "    (Verbus.Context.senderCpu)");
        lines.add("  receiver CPU       " + cpuText(settings.receiverCpu()) + "    (Verbus.Context.receiverCpu)");
        lines.add("  conductor CPU      " + cpuText(settings.conductorCpu()) + "    (Verbus.Context.conductorCpu)");
        lines.add("  hugepage rings     " + (settings.useHugePages() ? "yes, where hugetlbfs is mounted and sized" :
            "no") + "    (Verbus.Context.useHugePages)");
        lines.add("  pre-touch          logs: always (bus-core); heap: " +
            (settings.jvmFlags().isEmpty() ? "JVM default" : settings.jvmFlags() + " via VERBUS_JAVA_OPTS"));
        lines.add("  rdma channels      " + channelParameters(host) + " on this host (" + channelParameters() +
            " tries: " + String.join(", then ", PROVIDER_PREFERENCE) + "; shm only when named)");
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
        return index < cpus.length ? cpus[index] : Affinity.NO_CPU;
    }

    private static String cpuText(final int cpu)
    {
        return cpu < 0 ? "not pinned" : Integer.toString(cpu);
    }
}
