package io.verbus.media;

/**
 * How far an image of a remote log may read, as the media that fills the log judges it. The image consults it
 * itself, on the thread that polls it, so nothing sits between the remote writer's position WRITE and the
 * application's {@code poll}: no receiver duty cycle, no second copy of the position.
 * <p>
 * The media owns the validation (a consistency check against torn reads, monotonicity, alignment, how far ahead of
 * the consumer a position may be) and keeps whatever it accepted in memory the remote side cannot write, so a peer
 * can never widen what the image reads. Every method is called only by the image's polling thread, one call at a
 * time; implementations allocate nothing and make no system call in {@link #acquire(long)}.
 */
public interface ImageBound
{
    /** Returned by {@link #acquire(long)} when the remote position failed validation: the image closes. */
    long INVALID = -1;

    /**
     * The position below which every frame is complete, read with acquire semantics and validated.
     *
     * @param consumerPosition the image's current position.
     * @return the bound, at least {@code consumerPosition} while the stream is sound; {@link #INVALID} when the
     * remote side wrote a position that fails validation ({@link #invalidReason()} says why).
     */
    long acquire(long consumerPosition);

    /** @return why {@link #acquire(long)} last returned {@link #INVALID}, or null. */
    String invalidReason();

    /**
     * The image found a frame below the bound that fails validation and closed itself: the media drops the
     * connection that filled it, so flow control stops counting it and the publisher does not wait on it.
     *
     * @param reason what the image found.
     */
    void onImageCorrupt(String reason);

    /**
     * Where the remote publication ended, once it said so (it closed after sending everything): the image reports
     * it as {@code Image.endOfStreamPosition()}, and {@code isEndOfStream()} once it has consumed that far. May be
     * called by any thread.
     *
     * @return the end-of-stream position, or {@link Long#MAX_VALUE} while the stream is open.
     */
    default long endOfStreamPosition()
    {
        return Long.MAX_VALUE;
    }

    /**
     * @return true when {@link #awaitAdvance} can block the polling thread until the remote writer moves the bound
     * (an event-driven subscription, e.g. {@code rdma:...|idle=event}); false for a bound that can only be polled.
     */
    default boolean canAwait()
    {
        return false;
    }

    /**
     * Event-driven idle, called by the polling thread between polls when a poll found nothing: arm the media's
     * wake-up, look once more (closing the window where data lands between the last poll and the arm), and block
     * until the remote writer may have moved the bound or {@code timeoutNs} passed. Never called inside a poll.
     *
     * @param consumerPosition the image's current position.
     * @param timeoutNs        longest wait.
     * @return true when it was woken or found the bound already past {@code consumerPosition} (poll again), false
     * when the wait timed out or this bound cannot wait ({@link #canAwait()} false).
     */
    default boolean awaitAdvance(final long consumerPosition, final long timeoutNs)
    {
        return false;
    }
}
