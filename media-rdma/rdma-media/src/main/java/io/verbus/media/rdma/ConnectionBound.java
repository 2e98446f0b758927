package io.verbus.media.rdma;

import io.verbus.media.ImageBound;

/**
 * The image bound of one connection as the receiver agent sees it: besides what the image asks ({@link ImageBound}),
 * the last accepted bound, the counters, and why the image closed itself. Each commit mode has its own:
 * {@link PositionBlockBound} (counter) and {@link ImmediateBound} (imm), both on {@link AcceptedBound}.
 */
interface ConnectionBound extends ImageBound
{
    /** @return the last accepted bound (any thread). */
    long bound();

    /** @return position blocks read half-written by the polling thread (any thread). */
    long tornReads();

    /** @return immediates reaped (commit=imm), 0 otherwise (any thread). */
    default long immediates()
    {
        return 0;
    }

    /**
     * @return how far the status may report consumption (any thread): under commit=imm, the position of the last
     * immediate whose RECV is posted again (a status past it would hand the publisher a credit the responder does not
     * hold yet); otherwise no limit.
     */
    default long creditedPosition()
    {
        return Long.MAX_VALUE;
    }

    /** @return times the polling thread blocked in {@code awaitAdvance} and was woken by a completion (idle=event). */
    default long wakeUps()
    {
        return 0;
    }

    /** @return why the image closed itself (corrupt frame or invalid position), or null (any thread). */
    String corruptReason();
}
