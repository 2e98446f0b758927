package io.verbus;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;

/**
 * One publisher's stream as seen by one subscription: frames are read from the subscriber position forward.
 * Polled by one thread (the subscription's).
 */
public interface Image
{
    /** @return the publisher's session id. */
    int sessionId();

    /** @return the stream id. */
    int streamId();

    /** @return the initial term id of the log. */
    int initialTermId();

    /** @return the term length of the log in bytes. */
    int termBufferLength();

    /** @return the position at which this image joined the stream. */
    long joinPosition();

    /** @return the position up to which this image has consumed. */
    long position();

    /** @return where the stream came from, e.g. {@code "ipc"} or a remote address. */
    String sourceIdentity();

    /** @return true once the image has gone unavailable; polls then return 0. */
    boolean isClosed();

    /**
     * Reads up to {@code fragmentLimit} fragments into the handler and advances the position past them.
     *
     * @return the number of fragments delivered.
     */
    int poll(FragmentHandler fragmentHandler, int fragmentLimit);

    /**
     * Like {@link #poll} but the handler steers each fragment (ABORT, BREAK, COMMIT, CONTINUE).
     *
     * @return the number of fragments consumed.
     */
    int controlledPoll(ControlledFragmentHandler fragmentHandler, int fragmentLimit);
}
