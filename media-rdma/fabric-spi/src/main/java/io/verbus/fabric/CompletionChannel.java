package io.verbus.fabric;

/**
 * A completion channel, as {@code ibv_comp_channel}: a thread that has nothing to poll can block on it until a CQ
 * created with this channel ({@link Device#createCompletionQueue(int, CompletionChannel)}) and armed with
 * {@link #requestNotify} gets a completion.
 * <p>
 * An arm fires once: the first completion added to the CQ after {@link #requestNotify} queues one event on the
 * channel and disarms the CQ. The pattern that loses no wake-up is: arm, poll the CQ until it is empty, and only then
 * {@link #awaitEvent}; a completion that lands between the arm and the wait has already queued its event, so the wait
 * returns at once. Events may be stale (their completion was reaped by that poll): after an event, arm and poll
 * again. Every event returned must eventually be acknowledged with {@link #ackEvents} (verbs refuses to destroy a CQ
 * with events unacknowledged).
 * <p>
 * On verbs the channel's file descriptor is readable while events are queued. The soft providers have no kernel
 * object: a waiter parks and is unparked by the thread that adds the completion; while it waits it also makes the
 * soft NIC's progress for the armed CQs' QPs every {@link #SOFT_PROGRESS_INTERVAL_NS} (work that a poll would do,
 * e.g. taking shm deposits written by a peer process), so it never needs another thread polling for it.
 */
public interface CompletionChannel extends AutoCloseable
{
    /** How often a soft provider's waiter makes progress for its armed CQs while it waits. */
    long SOFT_PROGRESS_INTERVAL_NS = 50_000;

    /**
     * Arm {@code cq}: the next completion it gets queues an event on this channel ({@code ibv_req_notify_cq}).
     *
     * @param cq            a CQ created with this channel.
     * @param solicitedOnly true: only a receive completion of a SEND or WRITE_WITH_IMM posted with
     *                      {@link SendFlags#SOLICITED}, or an error completion, fires the event.
     * @throws IllegalArgumentException if the CQ was not created with this channel.
     */
    void requestNotify(CompletionQueue cq, boolean solicitedOnly);

    /**
     * Block until an event is queued, then take it ({@code ibv_get_cq_event}).
     *
     * An interrupted calling thread does not wait: it takes an event already queued, else gets null at once, and its
     * interrupt stays set (as {@code LockSupport.parkNanos} returns at once), so a loop that stops on an interrupt, an
     * {@code AgentRunner} closing its agent among them, is not held for the timeout.
     *
     * @param timeoutNs longest wait; 0 takes a queued event or returns at once.
     * @return the CQ whose arm fired, or null on timeout (or on an interrupted thread, with no event queued).
     */
    CompletionQueue awaitEvent(long timeoutNs);

    /**
     * Acknowledge events taken from {@link #awaitEvent} ({@code ibv_ack_cq_events}).
     *
     * @param cq    the CQ the events were for.
     * @param count how many.
     */
    void ackEvents(CompletionQueue cq, int count);

    /**
     * @return the file descriptor that is readable while events are queued (verbs), or -1 (soft providers).
     */
    int fileDescriptor();

    /**
     * Destroy the channel; its CQs must be closed first.
     */
    @Override
    void close();
}
