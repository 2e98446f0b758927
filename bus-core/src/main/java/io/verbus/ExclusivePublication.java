package io.verbus;

import org.agrona.MutableDirectBuffer;

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

    /** @return the term id the next append goes to (Aeron's {@code ExclusivePublication.termId()}). */
    int termId();

    /** @return the offset in the current term the next append goes to (may equal the term length before rotation). */
    int termOffset();

    /**
     * Appends a padding frame of {@code length} bytes of body (plus a header) that subscribers skip, e.g. to make the
     * stream reach a given position. Aeron's semantics: a frame that does not fit in the term pads the term to its
     * end instead and returns {@link #ADMIN_ACTION}.
     *
     * @param length of the padding body in bytes, from 0 to the framed length of a {@link #maxMessageLength()}
     *               message (Aeron's {@code maxFramedLength}).
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when the length is negative or above that framed length.
     */
    long appendPadding(int length);

    /**
     * Copies a block of already formatted frames (e.g. one {@code Image.blockPoll} delivered, or one read from a
     * recording) into the current term at {@link #termOffset()}. Aeron's semantics exactly: the first frame must be
     * a data frame whose term offset, session id, stream id and term id equal this publication's
     * {@link #termOffset()}, {@link #sessionId()}, {@link #streamId()} and {@link #termId()}; the block must fit in
     * what is left of the term; the first frame's header is written last, with release semantics, so readers see
     * the whole block at once.
     *
     * @param buffer holding the block.
     * @param offset of the block's first frame.
     * @param length of the block in bytes (whole aligned frames).
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when the block is longer than what is left of the term or its first frame
     *                                  does not match, naming each expected and found field.
     */
    long offerBlock(MutableDirectBuffer buffer, int offset, int length);
}
