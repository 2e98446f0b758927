package io.verbus.fabric;

/**
 * Where a device reports finished WRs, polled by one thread.
 */
public interface CompletionQueue extends AutoCloseable
{
    /**
     * Move up to {@code max} completions into {@code completions[0 .. n)}; never blocks, allocates nothing.
     * Soft providers also make progress for the QPs attached to this CQ while polling ({@link QueuePair#progress()}:
     * tcp reads and applies the peer's requests and takes responses; both detect a dead peer, retry an RNR-blocked
     * SEND), so a caller waiting for a completion must keep polling.
     *
     * @param completions reusable holders, see {@link WorkCompletion#newArray(int)}.
     * @param max         most completions to return, at most {@code completions.length}.
     * @return completions returned, 0 if none.
     */
    int poll(WorkCompletion[] completions, int max);

    /**
     * @return the number of entries the CQ holds.
     */
    int depth();

    /**
     * Destroy the CQ; it must have no QP left.
     */
    @Override
    void close();
}
