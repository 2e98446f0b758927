package io.verbus;

/**
 * A {@link Publication} with a single writer thread. Appends need no atomic read-modify-write, and a media
 * that supports it may send in the writer's own thread (direct mode) instead of handing off to a sender agent.
 * Calling its offer methods from more than one thread at a time is a programming error.
 */
public interface ExclusivePublication extends Publication
{
    /**
     * In direct mode (a media whose sender {@code supportsDirectSend()}), this thread owns the media sender: offers
     * send at once, but a {@code tryClaim} committed through its {@code BufferClaim} is sent by the next offer, claim
     * or flush, and connection set-up and flow control progress only inside these calls. Call flush after
     * committing a claim and while idle. Outside direct mode it does nothing.
     * <p>
     * (Verbus addition to the Aeron-shaped API, needed because {@code BufferClaim.commit()} cannot call back.)
     *
     * @return work done by the media sender, 0 outside direct mode.
     */
    int flush();
}
