package io.verbus;

/**
 * A {@link Publication} with a single writer thread. Appends need no atomic read-modify-write, and a media
 * that supports it may send in the writer's own thread (direct mode) instead of handing off to a sender agent.
 * Calling its offer methods from more than one thread at a time is a programming error.
 */
public interface ExclusivePublication extends Publication
{
    /**
     * In direct mode (a media whose sender {@code supportsDirectSend()}), offers send at once from this thread, and a
     * {@code tryClaim} is sent by its {@code BufferClaim.commit()} (or {@code abort()}) before that returns. An idle
     * direct-mode publication needs no calls: the sender agent keeps it alive (heartbeats, new subscribers,
     * credits) while this thread is idle. Flush sends anything not sent yet (a send that met the sender agent
     * mid-cycle is otherwise sent by the agent) and runs the media's full duty cycle: credits, completions,
     * liveness. Outside direct mode it does nothing.
     * <p>
     * (Verbus addition to the Aeron-shaped API.)
     *
     * @return work done by the media sender, 0 outside direct mode (or while the sender agent holds it).
     */
    int flush();
}
