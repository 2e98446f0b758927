package io.verbus.fabric;

/**
 * A reusable chain of send-queue {@link WorkRequest}s that {@link QueuePair#postSend(WorkRequestBatch)} posts
 * with one doorbell, in order.
 * <p>
 * Owned by one thread. Typical use per send: {@code batch.clear(); batch.add().write(...); batch.add().write(...);
 * qp.postSend(batch);}. Capacity is fixed at construction; nothing allocates afterwards.
 */
public final class WorkRequestBatch
{
    private final WorkRequest[] requests;
    private int size;
    private int postedCount;

    /**
     * @param capacity most WRs one post may chain.
     */
    public WorkRequestBatch(final int capacity)
    {
        if (capacity < 1)
        {
            throw new IllegalArgumentException("batch capacity must be >= 1, was " + capacity);
        }
        requests = new WorkRequest[capacity];
        for (int i = 0; i < capacity; i++)
        {
            requests[i] = new WorkRequest();
        }
    }

    /**
     * Empty the batch.
     *
     * @return this.
     */
    public WorkRequestBatch clear()
    {
        size = 0;
        postedCount = 0;
        return this;
    }

    /**
     * Append a WR, cleared, to be filled by the caller.
     *
     * @return the WR to fill.
     * @throws IllegalStateException if the batch is full.
     */
    public WorkRequest add()
    {
        if (size == requests.length)
        {
            throw new IllegalStateException("work request batch full, capacity=" + requests.length);
        }
        return requests[size++].clear();
    }

    /**
     * @param index 0 .. size - 1.
     * @return the WR at that position.
     */
    public WorkRequest get(final int index)
    {
        if (index >= size)
        {
            throw new IndexOutOfBoundsException("index " + index + " >= size " + size);
        }
        return requests[index];
    }

    /**
     * @return WRs in the batch.
     */
    public int size()
    {
        return size;
    }

    /**
     * @return most WRs the batch holds.
     */
    public int capacity()
    {
        return requests.length;
    }

    /**
     * How many WRs, from the front, the last post accepted; the one after them (if any) is the
     * verbs {@code bad_wr} and it and its successors were not posted.
     *
     * @return WRs posted by the last post of this batch.
     */
    public int postedCount()
    {
        return postedCount;
    }

    /**
     * Set by providers when they post this batch.
     *
     * @param postedCount WRs accepted.
     */
    public void postedCount(final int postedCount)
    {
        this.postedCount = postedCount;
    }
}
