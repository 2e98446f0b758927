package io.verbus.media;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.common.VarHandles;
import io.verbus.log.LogBuffers;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.Position;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * What Verbus gives a media about one publication: its log, ids, tail, and the limit counter the media sets.
 * A publication starts NOT_CONNECTED with limit 0 until the media calls {@link #connected(boolean)} and raises
 * {@link #publisherLimit()} (with release semantics, e.g. {@link Position#setRelease(long)}).
 * <p>
 * The media must keep the limit at most the slowest remote consumer's position plus half a term length: the
 * driver's conductor zeroes the local log up to {@code publisherLimit - termLength}, so that a partition is clean
 * before the publisher rotates into it again, and that is only safe if everything below it was sent and consumed.
 * <p>
 * The media must also keep the limit at most {@link #maxPublisherLimit()}: the publisher and every reader of the
 * log rely on the bytes past the tail being zero (a frame whose length reads 0 is not committed yet), and the
 * conductor runs on its own thread, at its own pace. A limit raised past what the conductor has cleaned would let
 * the publisher write into a partition still holding the frames of three terms ago (a sender then takes a stale
 * length for a committed frame), and let the conductor's late zeroing erase frames just written.
 */
public final class PublicationLog
{
    private static final VarHandle MEDIA_SCAN_POSITION =
        VarHandles.field(MethodHandles.lookup(), "mediaScanPosition", long.class);

    private final LogBuffers logBuffers;
    private final int sessionId;
    private final int streamId;
    private final int initialTermId;
    private final int termLength;
    private final int positionBitsToShift;
    private final Position publisherLimit;
    private final long registrationId;
    private volatile long cleanPosition;
    @SuppressWarnings("unused") private long mediaScanPosition;

    /**
     * @param logBuffers     the mapped and initialised log.
     * @param sessionId      of the publication.
     * @param streamId       of the publication.
     * @param publisherLimit the counter {@code offer} checks; set by the media.
     */
    public PublicationLog(
        final LogBuffers logBuffers, final int sessionId, final int streamId, final Position publisherLimit)
    {
        this(logBuffers, sessionId, streamId, publisherLimit, io.aeron.Aeron.NULL_VALUE);
    }

    /**
     * @param logBuffers     the mapped and initialised log.
     * @param sessionId      of the publication.
     * @param streamId       of the publication.
     * @param publisherLimit the counter {@code offer} checks; set by the media.
     * @param registrationId the driver's id for the publication, or {@code Aeron.NULL_VALUE}.
     */
    public PublicationLog(
        final LogBuffers logBuffers,
        final int sessionId,
        final int streamId,
        final Position publisherLimit,
        final long registrationId)
    {
        this.registrationId = registrationId;
        this.logBuffers = logBuffers;
        this.sessionId = sessionId;
        this.streamId = streamId;
        this.initialTermId = LogBufferDescriptor.initialTermId(logBuffers.metaDataBuffer());
        this.termLength = logBuffers.termLength();
        this.positionBitsToShift = LogBufferDescriptor.positionBitsToShift(termLength);
        this.publisherLimit = publisherLimit;
    }

    /** @return the log: term buffers, metadata and the backing segment. */
    public LogBuffers logBuffers()
    {
        return logBuffers;
    }

    /** @return the driver's id for the publication this log belongs to, or {@code Aeron.NULL_VALUE}. */
    public long registrationId()
    {
        return registrationId;
    }

    /** @return the publication's session id. */
    public int sessionId()
    {
        return sessionId;
    }

    /** @return the stream id. */
    public int streamId()
    {
        return streamId;
    }

    /** @return the log's initial term id. */
    public int initialTermId()
    {
        return initialTermId;
    }

    /** @return the term length. */
    public int termLength()
    {
        return termLength;
    }

    /** @return log2 of the term length, to turn positions into term counts. */
    public int positionBitsToShift()
    {
        return positionBitsToShift;
    }

    /**
     * @return the position of the log's tail, read with volatile semantics. Frames below it may still be in the
     * middle of being written by a concurrent publisher: a sender must check each frame's length (acquire) before
     * sending it.
     */
    public long producerPosition()
    {
        return producerPosition(logBuffers.metaDataBuffer(), initialTermId, termLength, positionBitsToShift);
    }

    /** @return the limit counter offers are checked against; the media sets it with release semantics. */
    public Position publisherLimit()
    {
        return publisherLimit;
    }

    /**
     * Conductor: the log has been zeroed below {@code position} (from where it last stood), so every byte of a
     * position below {@code position + 3 * termLength} that the publisher has not written yet is zero. Volatile
     * store after the zeroing: a media that reads it and then raises the limit hands the zeroes to the publisher.
     *
     * @param position the clean position, only ever raised.
     */
    public void cleanPosition(final long position)
    {
        cleanPosition = position;
    }

    /**
     * Media's sending thread: every frame below {@code position} is committed (its length was seen stored). The
     * conductor's blocked-publisher check starts from here instead of walking each frame again; a release store, no
     * fence, so a sender can call it on every send.
     *
     * @param position only ever raised, frame-aligned, at most the producer position.
     */
    public void mediaScanPosition(final long position)
    {
        MEDIA_SCAN_POSITION.setRelease(this, position);
    }

    /** @return the position below which the media has seen every frame committed (0 if the media does not say). */
    public long mediaScanPosition()
    {
        return (long)MEDIA_SCAN_POSITION.getAcquire(this);
    }

    /** @return the position below which the conductor has zeroed the log for reuse (volatile read). */
    public long cleanPosition()
    {
        return cleanPosition;
    }

    /**
     * @return the highest publisher limit the media may set now: the clean position plus two terms. An append
     * starts below the limit and may end up to one message (or, with concurrent publishers, a few) past it, so this
     * keeps a full term of zeroed log beyond the limit, and nothing the conductor is about to zero (it cleans below
     * {@code limit - termLength}) can be written before the conductor has published that it is done.
     */
    public long maxPublisherLimit()
    {
        return cleanPosition + 2L * termLength;
    }

    /**
     * Stored in the log's metadata (Aeron's {@code LOG_IS_CONNECTED} field, volatile), so that a client process that
     * maps the log from a standalone driver sees what the driver set.
     *
     * @param connected true once a subscriber is admitted, false when the last one is gone.
     */
    public void connected(final boolean connected)
    {
        LogBufferDescriptor.isConnected(logBuffers.metaDataBuffer(), connected);
    }

    /** @return the connection state the media (or the driver) last set. */
    public boolean isConnected()
    {
        return LogBufferDescriptor.isConnected(logBuffers.metaDataBuffer());
    }

    /**
     * @return the tail position of a log from its metadata: active term count, then that partition's raw tail.
     */
    public static long producerPosition(
        final UnsafeBuffer metaDataBuffer, final int initialTermId, final int termLength, final int positionBitsToShift)
    {
        final int termCount = LogBufferDescriptor.activeTermCount(metaDataBuffer);
        final long rawTail = LogBufferDescriptor.rawTailVolatile(
            metaDataBuffer, LogBufferDescriptor.indexByTermCount(termCount));
        final int termId = LogBufferDescriptor.termId(rawTail);
        final int termOffset = LogBufferDescriptor.termOffset(rawTail, termLength);
        return LogBufferDescriptor.computePosition(termId, termOffset, positionBitsToShift, initialTermId);
    }
}
