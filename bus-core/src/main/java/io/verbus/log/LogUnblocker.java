package io.verbus.log;

import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import org.agrona.concurrent.UnsafeBuffer;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * Pads over space in a log that was claimed but never committed, so that the frames after it reach readers again.
 * <p>
 * A concurrent publication claims space with one atomic add and commits it later with a release store of the
 * frame length. If the committing never happens (a {@code BufferClaim} neither committed nor aborted, a writer
 * thread that died between claim and commit), readers stop at that frame for ever, the publisher limit stops
 * rising and every later offer is back pressured. The conductor calls {@link #unblock} once a log's committed
 * frames have stopped short of its tail for the unblock timeout (as Aeron's driver does).
 * <p>
 * What it finds at the blocked position:
 * <ul>
 *     <li>a negative length: a header written but not committed ({@link FrameWriter#writeHeader} stores the length
 *     negated first). It is turned into padding of exactly that length with one compare-and-set of the header's
 *     first word (length, version, flags, type), so a writer that commits at the same moment either wins (its
 *     frame stands) or commits into a padding frame of the same length (its message is skipped, no frame is
 *     damaged);</li>
 *     <li>zero: the header was never written. The padding then runs to the next frame that has a length, or to the
 *     tail read before the scan, and is set with a compare-and-set from zero; every aligned length word in between
 *     is checked to still be zero first;</li>
 *     <li>a positive length: committed in the meantime, nothing to do.</li>
 * </ul>
 * A term padded to its end whose writer died before rotating the log is rotated here.
 * <p>
 * The risk accepted (the same as Aeron's): a writer that is merely slow, and still writing after the timeout, loses
 * its message (it lands inside padding), and in the zero case a header it writes later replaces the padding, so
 * readers that had not yet passed it see that writer's frame followed by another hole (padded after another
 * timeout). Frames readers see stay well-formed; nothing is read out of bounds.
 */
public final class LogUnblocker
{
    /** Nothing to pad: the frame was committed meanwhile, or the position is not a hole. */
    public static final int NO_ACTION = 0;

    /** A padding frame now covers the hole. */
    public static final int UNBLOCKED = 1;

    /** The hole ran to the end of the term: it is padded, and the log rotated if no writer had. */
    public static final int UNBLOCKED_TO_END = 2;

    /** A corrupt stretch of the log (not a hole a writer left) is padded over: see {@link #padCorrupt}. */
    public static final int REPAIRED = 3;

    /**
     * How far behind the tail a corrupt stretch may start and still be padded, in terms: two terms back the
     * partition is neither the one being written nor the one just finished, three back it is the active one again.
     */
    private static final int MAX_REPAIR_TERMS_BEHIND = 2;

    private LogUnblocker()
    {
    }

    /**
     * Pads over the uncommitted space at {@code blockedPosition} if there is any.
     *
     * @param termBuffers     the three partitions.
     * @param metaDataBuffer  the log metadata (tails, active term count).
     * @param initialTermId   of the log.
     * @param blockedPosition where the committed frames stop, below the tail.
     * @return {@link #NO_ACTION}, {@link #UNBLOCKED} or {@link #UNBLOCKED_TO_END}.
     */
    public static int unblock(
        final UnsafeBuffer[] termBuffers,
        final UnsafeBuffer metaDataBuffer,
        final int initialTermId,
        final long blockedPosition)
    {
        final int termLength = termBuffers[0].capacity();
        final int positionBitsToShift = LogBufferDescriptor.positionBitsToShift(termLength);
        final int blockedTermCount = (int)(blockedPosition >>> positionBitsToShift);
        final int blockedOffset = (int)blockedPosition & (termLength - 1);
        final int activeTermCount = LogBufferDescriptor.activeTermCount(metaDataBuffer);

        if (0 == blockedOffset && activeTermCount == blockedTermCount - 1)
        {
            // The previous term is complete (padded to its end) but the writer that padded it never rotated.
            final int activeIndex = LogBufferDescriptor.indexByTermCount(activeTermCount);
            final int activeTermId =
                LogBufferDescriptor.termId(LogBufferDescriptor.rawTailVolatile(metaDataBuffer, activeIndex));
            LogBufferDescriptor.rotateLog(metaDataBuffer, activeTermCount, activeTermId);
            return UNBLOCKED_TO_END;
        }

        final int index = LogBufferDescriptor.indexByTermCount(blockedTermCount);
        final long rawTail = LogBufferDescriptor.rawTailVolatile(metaDataBuffer, index);
        final int termId = LogBufferDescriptor.termId(rawTail);
        if (termId != initialTermId + blockedTermCount)
        {
            return NO_ACTION; // the partition does not hold the blocked term (yet or any more)
        }
        final int tailOffset = LogBufferDescriptor.termOffset(rawTail, termLength);
        if (blockedOffset >= tailOffset)
        {
            return NO_ACTION; // nothing claimed at the position
        }

        final UnsafeBuffer termBuffer = termBuffers[index];
        final long firstWord = termBuffer.getLongVolatile(blockedOffset);
        final int frameLength = (int)firstWord;
        if (frameLength > 0)
        {
            return NO_ACTION;
        }

        final int paddingLength;
        final long expectedWord;
        if (frameLength < 0)
        {
            paddingLength = -frameLength;
            if (paddingLength < HEADER_LENGTH || FrameWriter.align(paddingLength) > tailOffset - blockedOffset)
            {
                return NO_ACTION; // not a header this log's writers wrote: leave it for the readers' checks
            }
            expectedWord = firstWord;
        }
        else
        {
            paddingLength = zeroRunLength(termBuffer, blockedOffset, tailOffset);
            if (0 == paddingLength)
            {
                return NO_ACTION;
            }
            expectedWord = 0;
        }

        // The fields after the first word carry the same values whoever writes them, so plain stores are enough.
        writeHeaderAfterFirstWord(termBuffer, blockedOffset, metaDataBuffer, termId);
        final long paddingWord =
            FrameWriter.firstHeaderWord(paddingLength, FrameDescriptor.UNFRAGMENTED, HeaderFlyweight.HDR_TYPE_PAD);
        if (!termBuffer.compareAndSetLong(blockedOffset, expectedWord, paddingWord))
        {
            return NO_ACTION; // the writer got there first: its frame stands
        }

        if (blockedOffset + FrameWriter.align(paddingLength) < termLength)
        {
            return UNBLOCKED;
        }
        if (LogBufferDescriptor.activeTermCount(metaDataBuffer) == blockedTermCount)
        {
            LogBufferDescriptor.rotateLog(metaDataBuffer, blockedTermCount, termId);
        }
        return UNBLOCKED_TO_END;
    }

    /**
     * Whether the frame at {@code position} is one this log's writers could have committed: a length of at least a
     * header that stays within the term, and a header naming that term offset, the term, and the log's session and
     * stream. A writer stores every other header field before it releases the length, so a committed frame that
     * fails this was not written by one writer at a time.
     *
     * @param termBuffers   the three partitions.
     * @param initialTermId of the log.
     * @param sessionId     of the log.
     * @param streamId      of the log.
     * @param position      of the frame, frame aligned.
     * @return true when the frame's length is positive and it is sound; false for a hole or a corrupt frame.
     */
    public static boolean isSoundFrame(
        final UnsafeBuffer[] termBuffers,
        final int initialTermId,
        final int sessionId,
        final int streamId,
        final long position)
    {
        final int termLength = termBuffers[0].capacity();
        final int positionBitsToShift = LogBufferDescriptor.positionBitsToShift(termLength);
        final UnsafeBuffer termBuffer = termBuffers[LogBufferDescriptor.indexByPosition(position, positionBitsToShift)];
        final int termOffset = (int)position & (termLength - 1);
        return FrameWriter.isSoundFrame(termBuffer, termOffset, termBuffer.getIntVolatile(termOffset), sessionId,
            streamId, initialTermId + (int)(position >>> positionBitsToShift));
    }

    /**
     * Pads over a corrupt stretch of the log, from {@code blockedPosition} to the tail (or to the end of the term when
     * the tail is in a later one), with one padding frame, so that readers and the media's sender move past it. For
     * a log that stays blocked where {@link #unblock} finds no hole to pad, or at a frame that fails
     * {@link #isSoundFrame}: never the case in a log whose writers keep to its rules, but what two threads offering
     * on one exclusive publication at once leave behind (interleaved frames, a frame over another's payload, lengths
     * that overrun). The frames in the stretch are lost, which they are already; the publication goes on from the
     * tail instead of staying blocked for good.
     * <p>
     * Only bytes below the tail are written, where a writer that keeps to the rules never writes again; the length
     * word is stored last with release semantics, so a reader that sees it sees a sound padding header.
     *
     * @param termBuffers      the three partitions.
     * @param metaDataBuffer   the log metadata (for the session and stream).
     * @param initialTermId    of the log.
     * @param blockedPosition  where the committed frames stop, frame aligned.
     * @param producerPosition the tail, read before the call.
     * @return the bytes padded, 0 when nothing could be (the stretch is empty, or too far behind the tail).
     */
    public static int padCorrupt(
        final UnsafeBuffer[] termBuffers,
        final UnsafeBuffer metaDataBuffer,
        final int initialTermId,
        final long blockedPosition,
        final long producerPosition)
    {
        final int termLength = termBuffers[0].capacity();
        final int positionBitsToShift = LogBufferDescriptor.positionBitsToShift(termLength);
        final long blockedTermCount = blockedPosition >>> positionBitsToShift;
        final long producerTermCount = producerPosition >>> positionBitsToShift;
        final int blockedOffset = (int)blockedPosition & (termLength - 1);
        if (0 != (blockedOffset & (FrameDescriptor.FRAME_ALIGNMENT - 1)) ||
            producerPosition <= blockedPosition ||
            producerTermCount - blockedTermCount > MAX_REPAIR_TERMS_BEHIND)
        {
            return 0;
        }

        final int endOffset = producerTermCount > blockedTermCount ?
            termLength : (int)producerPosition & (termLength - 1);
        final int paddingLength = endOffset - blockedOffset;
        if (paddingLength < HEADER_LENGTH)
        {
            return 0;
        }

        final UnsafeBuffer termBuffer = termBuffers[LogBufferDescriptor.indexByTermCount(blockedTermCount)];
        writeHeaderAfterFirstWord(termBuffer, blockedOffset, metaDataBuffer, initialTermId + (int)blockedTermCount);
        termBuffer.putLongRelease(blockedOffset,
            FrameWriter.firstHeaderWord(paddingLength, FrameDescriptor.UNFRAGMENTED, HeaderFlyweight.HDR_TYPE_PAD));
        return paddingLength;
    }

    /**
     * Moves the log's tail back to {@code blockedPosition} when the tail has run more than
     * {@link #MAX_REPAIR_TERMS_BEHIND} terms ahead of it: past the point where padding can help, as the partition
     * the readers wait in is being written again. Only threads racing on one exclusive publication get there (each
     * rotating from the other's fields skips terms). The exclusive writer, blocked at its limit, finds the log's
     * tail off its own on its next offer and goes on from here, over what the race left; readers read only what it
     * writes from then on.
     *
     * @param metaDataBuffer   the log metadata (tails, active term count).
     * @param initialTermId    of the log.
     * @param termLength       of the log.
     * @param blockedPosition  where the readers wait, frame aligned.
     * @param producerPosition the tail, read before the call.
     * @return true when the tail was moved back.
     */
    public static boolean rewindTail(
        final UnsafeBuffer metaDataBuffer,
        final int initialTermId,
        final int termLength,
        final long blockedPosition,
        final long producerPosition)
    {
        final int positionBitsToShift = LogBufferDescriptor.positionBitsToShift(termLength);
        final long blockedTermCount = blockedPosition >>> positionBitsToShift;
        if ((producerPosition >>> positionBitsToShift) - blockedTermCount <= MAX_REPAIR_TERMS_BEHIND ||
            0 != (blockedPosition & (FrameDescriptor.FRAME_ALIGNMENT - 1)))
        {
            return false;
        }
        final int termCount = (int)blockedTermCount;
        final int termOffset = (int)blockedPosition & (termLength - 1);
        LogBufferDescriptor.rawTailVolatile(metaDataBuffer, LogBufferDescriptor.indexByTermCount(termCount),
            LogBufferDescriptor.packTail(initialTermId + termCount, termOffset));
        LogBufferDescriptor.activeTermCountOrdered(metaDataBuffer, termCount);
        return true;
    }

    /** The header fields a padding frame names its place with: term offset, session, stream and term. */
    private static void writeHeaderAfterFirstWord(
        final UnsafeBuffer termBuffer, final int termOffset, final UnsafeBuffer metaDataBuffer, final int termId)
    {
        final UnsafeBuffer defaultHeader = LogBufferDescriptor.defaultFrameHeader(metaDataBuffer);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET, termOffset);
        termBuffer.putInt(termOffset + DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET,
            defaultHeader.getInt(DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET));
        termBuffer.putInt(termOffset + DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET,
            defaultHeader.getInt(DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET));
        termBuffer.putInt(termOffset + DataHeaderFlyweight.TERM_ID_FIELD_OFFSET, termId);
    }

    /**
     * @return the length of the run of never-written frames from {@code offset}: up to the first aligned slot with
     * a non-zero length, or to the tail when there is none; 0 when a slot in the run was written meanwhile.
     */
    private static int zeroRunLength(final UnsafeBuffer termBuffer, final int offset, final int tailOffset)
    {
        int end = offset + FrameDescriptor.FRAME_ALIGNMENT;
        while (end < tailOffset && 0 == termBuffer.getIntVolatile(end))
        {
            end += FrameDescriptor.FRAME_ALIGNMENT;
        }
        // Check back down: a writer that wrote a header inside the run while it was scanned keeps its frame.
        for (int slot = end - FrameDescriptor.FRAME_ALIGNMENT; slot > offset; slot -= FrameDescriptor.FRAME_ALIGNMENT)
        {
            if (0 != termBuffer.getIntVolatile(slot))
            {
                return 0;
            }
        }
        return Math.min(end, tailOffset) - offset;
    }
}
