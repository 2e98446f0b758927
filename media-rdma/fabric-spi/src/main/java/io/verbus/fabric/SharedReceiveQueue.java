package io.verbus.fabric;

/**
 * A shared receive queue (SRQ): one pool of posted RECVs that several QPs of a PD take their receives from, as
 * {@code ibv_create_srq}. A QP created with {@link QueuePairConfig#sharedReceiveQueue} consumes the next RECV of the
 * pool for each SEND or WRITE_WITH_IMM it receives and reports it on its own receive CQ (the completion names the QP);
 * the QP's own {@link QueuePair#postReceive} is then refused. With the pool empty, the sender sees RNR exactly as
 * with an empty receive queue: it retries per its {@link QueuePairConfig#rnrRetryCount}.
 * <p>
 * A RECV's slot in the pool is free again once the RECV is consumed. An error on one QP flushes nothing from the
 * pool: the other QPs keep taking from it. Posting belongs to one thread; it allocates nothing.
 */
public interface SharedReceiveQueue extends AutoCloseable
{
    /**
     * Post one RECV to the pool.
     *
     * @param wrId    returned in the RECV completion, on the receive CQ of the QP that consumes it.
     * @param address absolute start of the buffer, inside a region of this SRQ's PD with LOCAL_WRITE.
     * @param length  buffer length in bytes.
     * @param lkey    the region's lkey.
     * @return {@link PostResult#OK}, or {@link PostResult#RECEIVE_QUEUE_FULL} when {@link #depth()} RECVs are
     * posted and not yet consumed, or another negative reason.
     */
    int postReceive(long wrId, long address, int length, int lkey);

    /**
     * @return the most RECVs the pool holds (at least the depth asked for).
     */
    int depth();

    /**
     * Destroy the SRQ; no QP may use it any more.
     */
    @Override
    void close();
}
