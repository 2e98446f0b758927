package io.verbus;

import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.RawBlockHandler;

/**
 * One publisher's stream as seen by one subscription: frames are read from the subscriber position forward.
 * Polled by one thread (the subscription's).
 * <p>
 * <b>End of stream.</b> An {@code ipc} image reaches its end of stream when its publication has been closed and the
 * image has consumed everything the publication wrote: {@link #endOfStreamPosition()} is then the position the
 * publication had reached when it closed. An {@code rdma:} image is told the same way by a publication that closes
 * gracefully (its last position block is stamped end-of-stream, after every frame it covers); a publisher that is
 * lost (killed, timed out, cut off) leaves the end-of-stream position at {@link Long#MAX_VALUE} and
 * {@link #isEndOfStream()} false, as Aeron reports for a network image that timed out without an EOS. {@code aeron:}
 * images report what Aeron reports.
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

    /**
     * Like {@link #poll} but reads nothing at or past {@code limitPosition} (Aeron's {@code boundedPoll}).
     *
     * @param fragmentHandler to which fragments are delivered.
     * @param limitPosition   to read up to (exclusive).
     * @param fragmentLimit   the most fragments to deliver.
     * @return the number of fragments delivered.
     */
    int boundedPoll(FragmentHandler fragmentHandler, long limitPosition, int fragmentLimit);

    /**
     * Like {@link #controlledPoll} but reads nothing at or past {@code limitPosition}.
     *
     * @param fragmentHandler to which fragments are delivered.
     * @param limitPosition   to read up to (exclusive).
     * @param fragmentLimit   the most fragments to deliver.
     * @return the number of fragments consumed.
     */
    int boundedControlledPoll(ControlledFragmentHandler fragmentHandler, long limitPosition, int fragmentLimit);

    /**
     * Reads forward from {@code initialPosition} without moving this image's position: a look ahead. Padding is
     * skipped; ABORT stops before the fragment, BREAK after it.
     *
     * @param initialPosition to start at: from {@link #position()} to the end of its term, frame aligned.
     * @param fragmentHandler to which fragments are delivered.
     * @param limitPosition   to read up to (exclusive).
     * @return the position after the last whole message delivered (a fragment with the END flag), which is
     * {@code initialPosition} when none was.
     * @throws IllegalArgumentException when {@code initialPosition} is out of that range or not aligned.
     */
    long controlledPeek(long initialPosition, ControlledFragmentHandler fragmentHandler, long limitPosition);

    /**
     * Delivers a block of whole frames from {@link #position()} on, within its term and up to
     * {@code blockLengthLimit} bytes, and advances past it. Aeron's rule for padding: a padding frame first in the
     * block is delivered alone (its header is what matters); one later ends the block before it.
     *
     * @param blockHandler     to which the block is delivered, with its term id and this image's session id.
     * @param blockLengthLimit the most bytes to deliver.
     * @return the bytes consumed.
     */
    int blockPoll(BlockHandler blockHandler, int blockLengthLimit);

    /**
     * Like {@link #blockPoll} for handlers that copy the log's file, e.g. to a recording. The file channel is the log
     * file of an {@code ipc} image (unlinked from the dir but kept open; null when the log is on hugetlbfs, which
     * cannot be read as a file), and null for an {@code rdma:} image, whose ring is registered memory and not a file;
     * the term buffer and offset are always valid. The file offset is where the block starts in the log file.
     *
     * @param rawBlockHandler  to which the block is delivered.
     * @param blockLengthLimit the most bytes to deliver.
     * @return the bytes consumed.
     */
    int rawPoll(RawBlockHandler rawBlockHandler, int blockLengthLimit);

    /**
     * @return true when this image has consumed up to its end of stream (see the class comment for what that is on
     * each channel); once the image is closed, whether it had then.
     */
    boolean isEndOfStream();

    /**
     * @return the position at which the stream ends, {@link Long#MAX_VALUE} until it is known (for good when the
     * publisher was lost rather than closed); once the image is closed, the value it had then.
     */
    long endOfStreamPosition();

    /** @return the subscription this image belongs to. */
    Subscription subscription();

    /**
     * Moves the consumed position forward, e.g. after reading with {@link #controlledPeek}. Aeron's rules: from the
     * current position to the end of its term, frame aligned; ignored once the image is closed. An {@code rdma:}
     * image also refuses a position past what has been received, since its position is the credit sent to the
     * publisher.
     *
     * @param newPosition the new consumed position.
     * @throws IllegalArgumentException when the position is out of range or not aligned.
     */
    void position(long newPosition);

    /** @return the publisher's MTU: the largest frame, header included. */
    int mtuLength();

    /**
     * @return Aeron's count of active transports: 0 for {@code ipc} images (as Aeron's IPC images), 1 for an open
     * {@code rdma:} image (one connection), 0 once closed.
     */
    int activeTransportCount();
}
