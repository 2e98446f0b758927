package io.verbus.fabric;

/**
 * A reliable-connected queue pair: a send queue and a receive queue tied to one peer QP.
 * <p>
 * Lifecycle as in verbs: created in {@link QueuePairState#RESET}; {@link #connect} (or the three steps
 * {@link #modifyToInit()}, {@link #modifyToReadyToReceive}, {@link #modifyToReadyToSend()}) brings it to RTS
 * with the peer's {@link QueuePairConnectionInfo}. WRs execute in posting order. Any failed WR moves the QP
 * to ERR; WRs outstanding then, and WRs posted afterwards, complete with WR_FLUSH_ERR.
 * <p>
 * Threading: {@link #postSend} and {@link #postReceive} are called by one owning thread each (the same or
 * different). Posting allocates nothing and takes no lock; shm makes no system call, tcp writes the new WRs to its
 * socket from the posting thread (non-blocking; it coalesces the writes of a poster that streams).
 * The send queue depth is enforced as on hardware: a slot is reclaimed only when a completion covering it
 * has been polled, so an unsignaled stream needs a signaled WR at least every {@code maxSendWorkRequests}.
 */
public interface QueuePair extends AutoCloseable
{
    /**
     * @return the 24-bit QP number.
     */
    int qpNumber();

    /**
     * @return the current state (ERR may be entered by the provider at any time).
     */
    QueuePairState state();

    /**
     * @return what the peer needs to connect to this QP.
     */
    QueuePairConnectionInfo localConnectionInfo();

    /**
     * @return the connection info given to {@link #modifyToReadyToReceive}, or null before that.
     */
    QueuePairConnectionInfo remoteConnectionInfo();

    /**
     * RESET -> INIT.
     *
     * @throws IllegalStateException if not in RESET.
     */
    void modifyToInit();

    /**
     * INIT -> RTR: bind to the peer's QP.
     *
     * @param remote the peer's connection info.
     * @throws IllegalStateException if not in INIT.
     * @throws IllegalArgumentException if the info names nothing this provider can reach.
     */
    void modifyToReadyToReceive(QueuePairConnectionInfo remote);

    /**
     * RTR -> RTS: the send queue starts executing.
     *
     * @throws IllegalStateException if not in RTR.
     */
    void modifyToReadyToSend();

    /**
     * Any state -> ERR: flush outstanding WRs (as {@code ibv_modify_qp} to IBV_QPS_ERR).
     */
    void modifyToError();

    /**
     * RESET -> INIT -> RTR -> RTS in one call.
     *
     * @param remote the peer's connection info.
     */
    default void connect(final QueuePairConnectionInfo remote)
    {
        modifyToInit();
        modifyToReadyToReceive(remote);
        modifyToReadyToSend();
    }

    /**
     * Post the batch's WRs in order with one doorbell.
     *
     * @param batch WRs to post; {@link WorkRequestBatch#postedCount()} tells how many were accepted.
     * @return {@link PostResult#OK} or the negative reason the first refused WR was refused.
     */
    int postSend(WorkRequestBatch batch);

    /**
     * Post one RECV: the next SEND or WRITE_WITH_IMM from the peer lands in {@code [address, address + length)}.
     *
     * @param wrId    returned in the RECV completion.
     * @param address absolute start of the buffer, inside a region with LOCAL_WRITE.
     * @param length  buffer length in bytes.
     * @param lkey    the region's lkey.
     * @return {@link PostResult#OK} or a negative reason ({@link PostResult#INVALID_REQUEST} on a QP that uses a
     * {@link SharedReceiveQueue}).
     */
    int postReceive(long wrId, long address, int length, int lkey);

    /**
     * Make progress on this QP from the calling thread: for a software provider, what its NIC would do
     * asynchronously (tcp: read the peer's requests and apply them to registered memory, acknowledge them, take
     * responses and complete WRs, write what is queued, run the timers). Polling either of the QP's CQs does the same,
     * so this is for a thread that waits on memory the peer WRITEs rather than on completions: a subscriber's poll
     * calling it when the position it watches has not moved lets that thread be the receiving NIC, with no other
     * thread on the path.
     * <p>
     * Never blocks, allocates nothing; any thread. A caller that finds another thread progressing the QP returns at
     * once. Hardware providers need no help and return 0; without calls the provider still makes progress by itself
     * (tcp: the NIC thread steps in for QPs no application thread has progressed within its fallback grace, 20 ms by
     * default).
     *
     * @return units of work done, 0 if none.
     */
    default int progress()
    {
        return 0;
    }

    /**
     * Whether WRs posted here wait for a later {@link #progress()} (or CQ poll) to leave: a software provider's
     * frames held back to coalesce with the posts that follow, or blocked by a full socket. A poster that stops
     * posting and sees true must have this QP progressed soon (it is not sent otherwise until the provider's fallback
     * steps in). Hardware providers hold nothing back: false. Any thread; it may be stale by one engine pass.
     *
     * @return true while posted WRs wait for this QP's progress.
     */
    default boolean hasHeldSends()
    {
        return false;
    }

    /**
     * @return send queue depth granted.
     */
    int maxSendWorkRequests();

    /**
     * @return receive queue depth granted.
     */
    int maxReceiveWorkRequests();

    /**
     * @return inline capacity granted; INLINE WRs longer than this are refused with INLINE_TOO_LONG.
     */
    int maxInlineData();

    /**
     * @return the shared receive queue this QP takes its receives from, or null if it has its own.
     */
    default SharedReceiveQueue sharedReceiveQueue()
    {
        return null;
    }

    /**
     * @return the CQ of the send queue.
     */
    CompletionQueue sendCompletionQueue();

    /**
     * @return the CQ of the receive queue.
     */
    CompletionQueue receiveCompletionQueue();

    /**
     * Destroy the QP. A connected peer then sees RETRY_EXC_ERR on its next request.
     */
    @Override
    void close();
}
