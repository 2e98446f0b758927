package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.verbus.common.VarHandles;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What the bound of every commit mode keeps the same way: the last accepted bound, in memory the remote side cannot
 * write (set only by the polling thread, with release, so the receiver agent may read it from any thread); the check a
 * new position from the wire passes before it is accepted (frame-aligned, at most two terms ahead of what the image
 * consumed: the ring holds three); and why a position or frame was refused, which closes the image.
 * <p>
 * Each mode's final subclass reads its own source (the position block, or the receive CQ) in {@code acquire}; the
 * methods here are final, so the polling thread's calls into them bind statically.
 */
abstract class AcceptedBound implements ConnectionBound
{
    private static final VarHandle BOUND = VarHandles.field(MethodHandles.lookup(), "bound", long.class);

    private final long maxAheadOfConsumer;
    @SuppressWarnings("unused") private long bound;
    private String invalidReason;
    private volatile String corruptReason;

    /**
     * @param termLength   of the log.
     * @param joinPosition where the image starts: the bound until the publisher sends one.
     */
    AcceptedBound(final int termLength, final long joinPosition)
    {
        this.maxAheadOfConsumer = 2L * termLength;
        BOUND.setRelease(this, joinPosition);
    }

    /** @return the accepted bound as the polling thread (its only writer) sees it. */
    final long current()
    {
        return (long)BOUND.getOpaque(this);
    }

    /** Polling thread: {@code position} passed {@link #isWithinReach} and becomes the bound. */
    final void accept(final long position)
    {
        BOUND.setRelease(this, position);
    }

    /** @return true when {@code position} is frame-aligned and at most two terms ahead of {@code consumerPosition}. */
    final boolean isWithinReach(final long position, final long consumerPosition)
    {
        return position - consumerPosition <= maxAheadOfConsumer &&
            0 == (position & (FrameDescriptor.FRAME_ALIGNMENT - 1));
    }

    /** Polling thread: the position source is corrupt; the image closes itself and the agent drops the connection. */
    final long reject(final String reason)
    {
        invalidReason = reason;
        corruptReason = reason;
        return INVALID;
    }

    public final String invalidReason()
    {
        return invalidReason;
    }

    public final void onImageCorrupt(final String reason)
    {
        corruptReason = reason;
    }

    /** @return the last accepted bound (any thread). */
    public final long bound()
    {
        return (long)BOUND.getAcquire(this);
    }

    /** @return why the image closed itself (corrupt frame or invalid position), or null (any thread). */
    public final String corruptReason()
    {
        return corruptReason;
    }
}
