package io.verbus.gateway;

import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The counts a part keeps, owned by the part's agent thread and readable by any thread. The agent counts in plain
 * fields and publishes them here with ordered writes once per duty cycle, as Aeron's agents do with their counters, so
 * the hot path pays for no fence per message.
 */
public final class PartCounters
{
    private final String[] names;
    private final AtomicLongArray values;

    /**
     * @param names of the counts, in index order.
     */
    public PartCounters(final String... names)
    {
        this.names = names.clone();
        this.values = new AtomicLongArray(names.length);
    }

    /**
     * Publish a count (owner thread only).
     *
     * @param index of the count.
     * @param value to publish.
     */
    public void publish(final int index, final long value)
    {
        values.lazySet(index, value);
    }

    /**
     * @param index of the count.
     * @return the last published value.
     */
    public long get(final int index)
    {
        return values.get(index);
    }

    /** @return the names, in index order. */
    public String name(final int index)
    {
        return names[index];
    }

    /** @return how many counts there are. */
    public int length()
    {
        return names.length;
    }
}
