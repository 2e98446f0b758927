package io.verbus.fabric.verbs;

/**
 * Receives the async events {@link VerbsDevice#pollAsyncEvents} reads.
 */
@FunctionalInterface
public interface VerbsAsyncEventHandler
{
    /**
     * @param eventType   {@code IBV_EVENT_*} in {@link IbvConstants}.
     * @param description libibverbs' name for it.
     * @param queuePair   the QP it concerns, or null.
     * @param portNumber  the port it concerns, or 0.
     */
    void onAsyncEvent(int eventType, String description, VerbsQueuePair queuePair, int portNumber);
}
