package io.verbus.driver;

import io.verbus.log.LogBuffers;
import io.verbus.log.LogUnblocker;
import io.verbus.media.PublicationLog;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.Position;

import java.util.Arrays;

/**
 * The conductor's view of one native log (an {@code ipc:} log or the local log of a media publication).
 * <p>
 * For {@code ipc:} the conductor is the flow control: the limit is the slowest subscriber position plus the window,
 * and terms are cleaned one term length behind that slowest position, before the limit is raised, so a partition
 * is zero before the publisher rotates into it again. For a media log the media sets the limit and the conductor
 * cleans one term length behind it, then publishes the clean position, which caps the limit the media may set: the
 * two threads never agree on timing, so the clean position is what keeps zeroing and writing apart.
 * <p>
 * The subscriber positions are a copy-on-write array the driver replaces under its lock; the conductor only
 * reads it.
 */
public final class NativeLog
{
    private final long registrationId;
    private final boolean ipc;
    private final PublicationLog publicationLog;
    private final LogBuffers logBuffers;
    private final Position publisherPosition;
    private final int termLength;
    private final int window;
    private final int limitUpdateThreshold;
    private volatile Position[] subscriberPositions = new Position[0];
    private long cleanPosition;
    private long committedPosition;
    private long lastCommittedPosition;
    private long committedStuckSinceNs;
    private long stuckTailPosition;
    private long lastReaderPosition = -1;
    private long readerStuckSinceNs;
    private int failedUnblocks;
    private int lastUnblockCount;
    private int lastUnblockResult = LogUnblocker.NO_ACTION;
    private int lastRepairedBytes;
    private volatile boolean isClosed;
    private long closedTimeNs;
    private long finalPosition;

    /**
     * @param registrationId    unique id of the log within the driver.
     * @param ipc               true when the conductor computes the limit from local subscribers.
     * @param publicationLog    the log, limit and connection state.
     * @param publisherPosition counter mirroring the tail for {@code ./verbus stat}.
     * @param window            bytes the publisher may run ahead of the slowest subscriber (ipc only).
     */
    public NativeLog(
        final long registrationId,
        final boolean ipc,
        final PublicationLog publicationLog,
        final Position publisherPosition,
        final int window)
    {
        this.registrationId = registrationId;
        this.ipc = ipc;
        this.publicationLog = publicationLog;
        this.logBuffers = publicationLog.logBuffers();
        this.publisherPosition = publisherPosition;
        this.termLength = publicationLog.termLength();
        this.window = window;
        this.limitUpdateThreshold = Math.max(window / 4, io.aeron.logbuffer.FrameDescriptor.FRAME_ALIGNMENT);
        this.committedPosition = publicationLog.producerPosition();
        this.lastCommittedPosition = committedPosition;
    }

    /** @return the driver-wide id of this log. */
    public long registrationId()
    {
        return registrationId;
    }

    /** @return true for an {@code ipc:} log. */
    public boolean isIpc()
    {
        return ipc;
    }

    /** @return the log handed to publications and media. */
    public PublicationLog publicationLog()
    {
        return publicationLog;
    }

    /** @return the publisher position counter. */
    public Position publisherPosition()
    {
        return publisherPosition;
    }

    /** @return the flow-control window in bytes. */
    public int window()
    {
        return window;
    }

    /** @return the current subscriber positions (ipc; the spies of a media log). */
    public Position[] subscriberPositions()
    {
        return subscriberPositions;
    }

    /** Adds a subscriber position; call under the driver's lock. */
    public void addSubscriberPosition(final Position position)
    {
        final Position[] old = subscriberPositions;
        final Position[] positions = Arrays.copyOf(old, old.length + 1);
        positions[old.length] = position;
        subscriberPositions = positions;
    }

    /** Removes a subscriber position; call under the driver's lock. */
    public void removeSubscriberPosition(final Position position)
    {
        final Position[] old = subscriberPositions;
        int count = 0;
        final Position[] positions = new Position[old.length];
        for (final Position p : old)
        {
            if (p != position)
            {
                positions[count++] = p;
            }
        }
        subscriberPositions = Arrays.copyOf(positions, count);
    }

    /**
     * Marks the log closed: its publication is gone.
     *
     * @param nowNs the current time, to time the linger.
     */
    public void close(final long nowNs)
    {
        finalPosition = publicationLog.producerPosition();
        // Images of the log see their end of stream once they have consumed up to here (Image.isEndOfStream).
        io.aeron.logbuffer.LogBufferDescriptor.endOfStreamPosition(logBuffers.metaDataBuffer(), finalPosition);
        closedTimeNs = nowNs;
        isClosed = true;
    }

    /** @return true once the publication closed. */
    public boolean isClosed()
    {
        return isClosed;
    }

    /** @return when it was closed. */
    public long closedTimeNs()
    {
        return closedTimeNs;
    }

    /** @return true when every subscriber has consumed everything the closed publication wrote. */
    public boolean isDrained()
    {
        for (final Position position : subscriberPositions)
        {
            if (position.getVolatile() < finalPosition)
            {
                return false;
            }
        }
        return true;
    }

    /**
     * One conductor duty cycle for this log: mirror the tail, clean behind the slowest consumer, raise the limit.
     *
     * @return 1 when the limit or cleaning moved, else 0.
     */
    public int conductorDuty()
    {
        final long producerPosition = publicationLog.producerPosition();
        publisherPosition.setRelease(producerPosition);

        if (!ipc)
        {
            return cleanTo(mediaCleanTarget(producerPosition));
        }

        final Position[] positions = subscriberPositions;
        if (0 == positions.length)
        {
            // No one reads: keep the limit where it is so nothing is written into terms that cannot be cleaned.
            if (publicationLog.isConnected())
            {
                publicationLog.connected(false);
            }
            return 0;
        }

        long minSubscriberPosition = Long.MAX_VALUE;
        for (final Position position : positions)
        {
            minSubscriberPosition = Math.min(minSubscriberPosition, position.getVolatile());
        }
        // A subscriber's position is in a counter its client process writes: none is past what was written.
        minSubscriberPosition = Math.min(minSubscriberPosition, producerPosition);

        int work = cleanTo(minSubscriberPosition - termLength);
        final Position limit = publicationLog.publisherLimit();
        final long currentLimit = limit.get();
        final long proposedLimit = minSubscriberPosition + window;
        // Raise the limit in steps of a quarter window (or when the publisher is already at it), not per message:
        // fewer writes to a line the publisher reads on every offer, and the conductor can idle while traffic flows.
        if (!isClosed && proposedLimit > currentLimit &&
            (proposedLimit - currentLimit >= limitUpdateThreshold || producerPosition >= currentLimit))
        {
            limit.setRelease(proposedLimit);
            work = 1;
        }
        if (publicationLog.isConnected() == isClosed)
        {
            publicationLog.connected(!isClosed);
            work = 1;
        }
        return work;
    }

    /**
     * A media log is cleaned a term behind the writer, or behind the limit the media set if that is lower. Following
     * the writer rather than the limit zeroes each cycle about what was written since the last one: the limit moves
     * in the steps the subscribers report their positions in (up to a millisecond of traffic), and zeroing a whole
     * step at once held the duty cycle that did it for microseconds once a millisecond, which in invoker mode is the
     * application's own thread (it was the round trips' p99.9). It is never further than the limit's term behind, and
     * the cap it sets ({@link PublicationLog#maxPublisherLimit()}, two terms past the clean position) stays at least
     * half a term above any limit the media asks for, its window being at most half a term past what was consumed.
     * Its subscriber positions, if any, are spies (Aeron's {@code aeron-spy:}), local readers of the log the media
     * knows nothing of: the cleaning stops where the media's highest allowed limit is a window past the slowest spy,
     * so the publisher never laps a spy and nothing it has not read is zeroed.
     */
    private long mediaCleanTarget(final long producerPosition)
    {
        long target = Math.min(publicationLog.publisherLimit().getVolatile(), producerPosition) - termLength;
        final Position[] spies = subscriberPositions;
        for (final Position spy : spies)
        {
            target = Math.min(target, spy.getVolatile() + window - 2L * termLength);
        }
        return target;
    }

    /**
     * Finds a publisher blocked by a hole and pads over it: when the log's committed frames have stopped at the same
     * position below the tail for {@code unblockTimeoutNs}, {@link LogUnblocker} pads the claimed but never
     * committed space there. Where there is no hole but a corrupt frame, or the position is still stuck a timeout
     * after the unblocker found nothing to pad, the log was written by two threads at once and
     * {@link LogUnblocker#padCorrupt} pads from there to the tail ({@link #lastUnblockResult()} says which).
     * Called by the conductor after {@link #conductorDuty()}.
     * <p>
     * The conductor follows the committed frames itself (a frame is committed once its length is positive) rather
     * than trusting a consumer position, so it works the same for {@code ipc} logs and for a media's local log whose
     * consumers are remote; for {@code ipc} it starts from the slowest subscriber when that is further on, as every
     * subscriber has read those frames already. It follows at most {@link #MAX_FRAMES_PER_CHECK} frames a cycle and
     * never runs behind the cleaning: the publisher cannot be more than a window (at most half a term) ahead of what
     * was consumed, and cleaning stays a term behind that.
     *
     * @param nowNs            the current time.
     * @param unblockTimeoutNs how long the committed frames may stop short of the tail.
     * @return the position that was unblocked, or -1.
     */
    public long checkForBlockedPublisher(final long nowNs, final long unblockTimeoutNs)
    {
        final long producerPosition = publicationLog.producerPosition();
        long position = committedPosition;
        final Position[] positions = subscriberPositions;
        // The slowest reader of the log: for ipc the slowest subscriber, for a media's log the media's own scan.
        long readerPosition = -1;
        if (ipc && positions.length > 0)
        {
            readerPosition = producerPosition;
            for (final Position subscriberPosition : positions)
            {
                readerPosition = Math.min(readerPosition, subscriberPosition.getVolatile());
            }
        }
        else if (!ipc)
        {
            readerPosition = Math.min(publicationLog.mediaScanPosition(), producerPosition);
        }
        if (readerPosition >= 0)
        {
            if (readerPosition != lastReaderPosition)
            {
                lastReaderPosition = readerPosition;
                readerStuckSinceNs = nowNs;
            }
            else if (readerPosition < position && nowNs - readerStuckSinceNs >= unblockTimeoutNs)
            {
                // The slowest reader has waited a whole timeout behind frames already followed: two writers
                // rewrote them after that. Follow again from the reader, and unblock at once where it waits.
                readerStuckSinceNs = nowNs;
                stuckTailPosition = position;
                position = readerPosition;
                committedPosition = position;
                lastCommittedPosition = position;
                committedStuckSinceNs = nowNs - unblockTimeoutNs;
            }
            position = Math.max(position, readerPosition);
        }
        position = followCommittedFrames(position, producerPosition);
        committedPosition = position;

        if (position >= producerPosition || position != lastCommittedPosition)
        {
            lastCommittedPosition = position;
            committedStuckSinceNs = nowNs;
            stuckTailPosition = producerPosition;
            failedUnblocks = 0;
            return -1;
        }
        if (nowNs - committedStuckSinceNs < unblockTimeoutNs)
        {
            return -1;
        }

        // Every hole below the tail as it was when the frames stopped has been claimed for the whole timeout, so
        // they are padded one after another now rather than one per timeout (a race of two writers leaves dozens).
        committedStuckSinceNs = nowNs;
        final long blockedPosition = position;
        final int firstResult = unblockAt(position, producerPosition);
        int result = firstResult;
        int holes = 0;
        boolean repaired = false;
        while (LogUnblocker.NO_ACTION != result)
        {
            holes++;
            repaired |= LogUnblocker.REPAIRED == result;
            position = followCommittedFrames(position, producerPosition);
            if (position >= stuckTailPosition || holes >= MAX_HOLES_PER_CHECK)
            {
                break;
            }
            result = unblockAt(position, producerPosition);
        }
        committedPosition = position;
        lastCommittedPosition = position;
        lastUnblockResult = repaired ? LogUnblocker.REPAIRED : firstResult;
        lastUnblockCount = holes;
        return 0 == holes ? -1 : blockedPosition;
    }

    /** Holes {@link #checkForBlockedPublisher} pads per call at most. */
    static final int MAX_HOLES_PER_CHECK = 1024;

    /**
     * One hole: {@link LogUnblocker#unblock}, else, at a committed frame that is not sound or where the unblocker
     * has now found nothing to pad twice, {@link LogUnblocker#padCorrupt}. No hole to pad and a sound frame means
     * the log is corrupt (two threads on one exclusive publication): padding over it to the tail beats leaving the
     * publication blocked for good.
     */
    private int unblockAt(final long position, final long producerPosition)
    {
        final UnsafeBuffer[] termBuffers = logBuffers.termBuffers();
        final int result = LogUnblocker.unblock(
            termBuffers, logBuffers.metaDataBuffer(), publicationLog.initialTermId(), position);
        if (LogUnblocker.NO_ACTION != result)
        {
            failedUnblocks = 0;
            return result;
        }
        final boolean corruptFrame = isCommitted(position) && !isSound(position);
        if (!corruptFrame && ++failedUnblocks < 2)
        {
            return LogUnblocker.NO_ACTION;
        }
        failedUnblocks = 0;
        lastRepairedBytes = LogUnblocker.padCorrupt(
            termBuffers, logBuffers.metaDataBuffer(), publicationLog.initialTermId(), position, producerPosition);
        if (0 == lastRepairedBytes &&
            LogUnblocker.rewindTail(logBuffers.metaDataBuffer(), publicationLog.initialTermId(), termLength, position,
                producerPosition))
        {
            lastRepairedBytes = (int)Math.min(Integer.MAX_VALUE, producerPosition - position);
            return LogUnblocker.REPAIRED;
        }
        return 0 == lastRepairedBytes ? LogUnblocker.NO_ACTION : LogUnblocker.REPAIRED;
    }

    /** @return how many holes the last unblock that returned a position padded. */
    public int lastUnblockCount()
    {
        return lastUnblockCount;
    }

    /**
     * @return what the last unblock that returned a position did: {@link LogUnblocker#REPAIRED} when it padded over
     * a corrupt stretch, else {@link LogUnblocker#UNBLOCKED} or {@link LogUnblocker#UNBLOCKED_TO_END}.
     */
    public int lastUnblockResult()
    {
        return lastUnblockResult;
    }

    /** @return the bytes the last corrupt stretch padded over ({@link LogUnblocker#REPAIRED}) held. */
    public int lastRepairedBytes()
    {
        return lastRepairedBytes;
    }

    private boolean isCommitted(final long position)
    {
        final UnsafeBuffer termBuffer = logBuffers.termBuffers()[io.aeron.logbuffer.LogBufferDescriptor.indexByPosition(
            position, publicationLog.positionBitsToShift())];
        return termBuffer.getIntVolatile((int)(position & (termLength - 1))) > 0;
    }

    private boolean isSound(final long position)
    {
        return LogUnblocker.isSoundFrame(logBuffers.termBuffers(), publicationLog.initialTermId(),
            publicationLog.sessionId(), publicationLog.streamId(), position);
    }

    /** Frames {@link #checkForBlockedPublisher} follows per call at most. */
    static final int MAX_FRAMES_PER_CHECK = 64 * 1024;

    private long followCommittedFrames(final long from, final long producerPosition)
    {
        final int positionBitsToShift = publicationLog.positionBitsToShift();
        final UnsafeBuffer[] termBuffers = logBuffers.termBuffers();
        final int initialTermId = publicationLog.initialTermId();
        final int sessionId = publicationLog.sessionId();
        final int streamId = publicationLog.streamId();
        long position = from;
        for (int frames = 0; position < producerPosition && frames < MAX_FRAMES_PER_CHECK; frames++)
        {
            final int termOffset = (int)(position & (termLength - 1));
            final UnsafeBuffer termBuffer = termBuffers[
                io.aeron.logbuffer.LogBufferDescriptor.indexByPosition(position, positionBitsToShift)];
            final int frameLength = termBuffer.getIntVolatile(termOffset);
            if (!io.verbus.log.FrameWriter.isSoundFrame(termBuffer, termOffset, frameLength, sessionId, streamId,
                initialTermId + (int)(position >>> positionBitsToShift)))
            {
                break; // a hole, or a corrupt frame: where the unblock check acts
            }
            position += io.verbus.log.FrameWriter.align(frameLength);
        }
        return position;
    }

    /** @return the position up to which the conductor has seen committed frames. */
    public long committedPosition()
    {
        return committedPosition;
    }

    /**
     * Zeroes the log from the clean position up to {@code position}, term by term.
     *
     * @return 1 when anything was cleaned.
     */
    private int cleanTo(final long position)
    {
        if (position <= cleanPosition)
        {
            return 0;
        }
        long cleaned = cleanPosition;
        final long logLength = (long)termLength * io.aeron.logbuffer.LogBufferDescriptor.PARTITION_COUNT;
        if (position - cleaned > logLength)
        {
            // Further ahead than the whole log: what lies below position - logLength shares its memory with what lies
            // above, which is zeroed now, so start there. Cleaning from the old position term by term once took the
            // conductor for 2^31 terms when a client wrote its log's tail (or a position) far ahead: every log stopped.
            cleaned = (position - logLength) & -(long)termLength;
        }
        while (cleaned < position)
        {
            final int termOffset = (int)(cleaned & (termLength - 1));
            final int length = (int)Math.min(termLength - termOffset, position - cleaned);
            final UnsafeBuffer termBuffer = logBuffers.termBuffers()[
                io.aeron.logbuffer.LogBufferDescriptor.indexByPosition(cleaned, publicationLog.positionBitsToShift())];
            termBuffer.setMemory(termOffset, length, (byte)0);
            cleaned += length;
        }
        cleanPosition = cleaned;
        // Only now may a media raise the limit over the zeroed bytes (PublicationLog#maxPublisherLimit).
        publicationLog.cleanPosition(cleaned);
        return 1;
    }

    /**
     * For a log whose tail was set to start at {@code position} (a standalone driver's copy of a media image): the
     * memory is fresh, so everything from the start of that term on is already zero. Call before the log is used.
     *
     * @param position where the log starts.
     */
    public void startAt(final long position)
    {
        cleanPosition = position - (position & (termLength - 1));
        publicationLog.cleanPosition(cleanPosition);
        committedPosition = position;
        lastCommittedPosition = position;
    }

    /** @return the position up to which the log has been zeroed for reuse. */
    public long cleanPosition()
    {
        return cleanPosition;
    }

    public String toString()
    {
        return "NativeLog{id=" + registrationId + ", ipc=" + ipc + ", session=" + publicationLog.sessionId() +
            ", stream=" + publicationLog.streamId() + ", closed=" + isClosed + '}';
    }
}
