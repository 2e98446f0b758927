package io.verbus.media;

/**
 * Moves one publication's log to its subscribers. Owned by ONE thread at a time: the sender agent, or, in direct
 * mode, the exclusive publication's writer thread while it writes and the sender agent while the writer is idle
 * ({@link io.verbus.log.DirectSendHandOff}: every hand-over is a release/acquire pair). Verbus never calls it from
 * two threads at once.
 */
public interface MediaSender extends AutoCloseable
{
    /**
     * One duty cycle: send new data, process control traffic, update the publisher limit and connection state.
     *
     * @return work done (0 lets the idle strategy back off).
     */
    int doWork();

    /**
     * @return true when an exclusive publication may call {@link #sendNow()} from its writer thread after each
     * append instead of leaving the data to the sender agent.
     */
    boolean supportsDirectSend();

    /**
     * Sends what the log holds up to its tail, now, in the calling thread (direct mode).
     *
     * @return work done.
     */
    int sendNow();

    /**
     * Whether the last {@link #sendNow()} or {@link #doWork()} left committed data in the log that it could not post
     * (a full send queue, no receive credit at a subscriber, a post cut short), so the sender must run again soon
     * whether or not the writer calls again: in direct mode the agent then drives it at once instead of waiting for
     * the writer to go idle. Read by the thread that owns the sender, right after the call.
     *
     * @return true when some subscriber that is being sent to was not sent everything the log held.
     */
    default boolean hasUnsentData()
    {
        return false;
    }

    /** Releases the media's resources. Called once by the owning thread; the log is unmapped after it. */
    void close();
}
