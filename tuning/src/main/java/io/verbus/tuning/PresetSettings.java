package io.verbus.tuning;

import io.verbus.ThreadingMode;

/**
 * Everything a preset sets, as plain values: what {@link Preset#applyTo} writes into a {@code Verbus.Context}, plus
 * the channel parameters and JVM flags it recommends (which live outside the context).
 *
 * @param threadingMode     how the driver agents are threaded.
 * @param idleStrategy      idle strategy name as bus-core knows it: busy-spin, noop, yielding, backoff, sleeping.
 * @param conductorCpu      CPU for the conductor agent, -1 for none.
 * @param senderCpu         CPU for the sender agent, -1 for none.
 * @param receiverCpu       CPU for the receiver agent, -1 for none.
 * @param useHugePages      back logs and rings with hugetlbfs pages where mounted and sized (else /dev/shm, warned).
 * @param jvmFlags          JVM flags the preset recommends for the process (e.g. heap pre-touch); empty for none.
 * @param channelParameters parameters for rdma channels, e.g. {@code provider=auto}.
 */
public record PresetSettings(
    ThreadingMode threadingMode,
    String idleStrategy,
    int conductorCpu,
    int senderCpu,
    int receiverCpu,
    boolean useHugePages,
    String jvmFlags,
    String channelParameters)
{
}
