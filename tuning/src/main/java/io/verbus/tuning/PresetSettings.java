package io.verbus.tuning;

/**
 * Everything a preset sets, as plain values: what {@link Preset#applyTo} writes into a {@code Verbus.Context} and
 * the channel parameters it recommends.
 *
 * @param threadingMode     DEDICATED, SHARED or INVOKER.
 * @param idleStrategy      idle strategy name as bus-core knows it: busy-spin, noop, yielding, backoff, sleeping.
 * @param conductorCpu      CPU for the conductor agent, -1 for none.
 * @param senderCpu         CPU for the sender agent, -1 for none.
 * @param receiverCpu       CPU for the receiver agent, -1 for none.
 * @param hugePages         true to back logs and rings with hugepages (hugetlbfs) when the host has them.
 * @param preTouch          true to fault every page of a log in when it is mapped, not on first message.
 * @param channelParameters parameters to add to rdma channels, e.g. {@code provider=auto}.
 */
public record PresetSettings(
    String threadingMode,
    String idleStrategy,
    int conductorCpu,
    int senderCpu,
    int receiverCpu,
    boolean hugePages,
    boolean preTouch,
    String channelParameters)
{
}
