package io.verbus.log;

import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.HeaderFlyweight;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.lang.foreign.Arena;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * The unblocker on a hand-made log: each kind of hole becomes exactly one padding frame that readers skip, a
 * committed frame is never touched, and a term whose writer died before rotating is rotated.
 */
class LogUnblockerTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final int INITIAL_TERM_ID = 7;
    private static final int SESSION_ID = 11;
    private static final int STREAM_ID = 13;

    private Arena arena;
    private LogBuffers log;
    private UnsafeBuffer term;
    private UnsafeBuffer metaData;

    @BeforeEach
    void before()
    {
        arena = Arena.ofConfined();
        log = LogBuffers.wrap(arena.allocate(LogBuffers.logLength(TERM_LENGTH, 4096), 4096), TERM_LENGTH);
        log.initialise(SESSION_ID, STREAM_ID, INITIAL_TERM_ID, 1408,
            LogBufferDescriptor.LOG_BUFFER_TYPE_CONCURRENT_PUBLICATION);
        term = log.termBuffers()[0];
        metaData = log.metaDataBuffer();
    }

    @AfterEach
    void after()
    {
        arena.close();
    }

    @Test
    void shouldPadAClaimWhoseHeaderWasWrittenButNeverCommittedToExactlyItsLength()
    {
        FrameWriter.writeHeader(term, 0, 100 + HEADER_LENGTH, FrameDescriptor.UNFRAGMENTED,
            HeaderFlyweight.HDR_TYPE_DATA, SESSION_ID, STREAM_ID, INITIAL_TERM_ID);
        commit(160, 64);
        tail(224);

        assertEquals(LogUnblocker.UNBLOCKED, unblock(0));
        assertEquals(100 + HEADER_LENGTH, term.getInt(0));
        assertEquals(HeaderFlyweight.HDR_TYPE_PAD, term.getShort(HeaderFlyweight.TYPE_FIELD_OFFSET));
        assertEquals(SESSION_ID, term.getInt(12));
        assertEquals(64, term.getInt(160), "the next frame is untouched");
    }

    @Test
    void shouldPadANeverWrittenClaimUpToTheNextFrameThatHasALength()
    {
        commit(0, 64);
        commit(320, 64);
        tail(384);

        assertEquals(LogUnblocker.UNBLOCKED, unblock(64));
        assertEquals(256, term.getInt(64));
        assertEquals(HeaderFlyweight.HDR_TYPE_PAD, term.getShort(64 + HeaderFlyweight.TYPE_FIELD_OFFSET));
    }

    @Test
    void shouldPadANeverWrittenClaimUpToTheTailWhenNothingFollows()
    {
        commit(0, 64);
        tail(64 + 96);

        assertEquals(LogUnblocker.UNBLOCKED, unblock(64));
        assertEquals(96, term.getInt(64));
    }

    @Test
    void shouldLeaveACommittedFrameAndAPositionBeyondTheTailAlone()
    {
        commit(0, 64);
        tail(64);
        assertEquals(LogUnblocker.NO_ACTION, unblock(0));
        assertEquals(64, term.getInt(0));
        assertEquals(LogUnblocker.NO_ACTION, unblock(64));
        assertEquals(0, term.getInt(64));
    }

    @Test
    void shouldPadToTheTermEndAndRotateWhenTheWriterThatCrossedTheEndDied()
    {
        commit(0, 64);
        tail(TERM_LENGTH + 128); // a claim crossed the term end; its writer died before padding and rotating

        assertEquals(LogUnblocker.UNBLOCKED_TO_END, unblock(64));
        assertEquals(TERM_LENGTH - 64, term.getInt(64));
        assertEquals(1, LogBufferDescriptor.activeTermCount(metaData));
        assertEquals(INITIAL_TERM_ID + 1, LogBufferDescriptor.termId(LogBufferDescriptor.rawTailVolatile(metaData, 1)));
    }

    @Test
    void shouldRotateWhenTheTermWasPaddedButNotRotated()
    {
        FrameWriter.writePaddingToTermEnd(term, 0, SESSION_ID, STREAM_ID, INITIAL_TERM_ID);
        tail(TERM_LENGTH);

        assertEquals(LogUnblocker.UNBLOCKED_TO_END, unblock(TERM_LENGTH));
        assertEquals(1, LogBufferDescriptor.activeTermCount(metaData));
    }

    @Test
    void shouldTellASoundFrameFromOneWrittenOverAnothersPayload()
    {
        commit(0, 64);
        term.putInt(64, 200); // a second writer's payload where a header is due: a length, but no header
        term.putInt(64 + 8, 12345);
        tail(64 + 256);

        assertEquals(true, LogUnblocker.isSoundFrame(log.termBuffers(), INITIAL_TERM_ID, SESSION_ID, STREAM_ID, 0));
        assertEquals(false, LogUnblocker.isSoundFrame(log.termBuffers(), INITIAL_TERM_ID, SESSION_ID, STREAM_ID, 64));
        assertEquals(false, LogUnblocker.isSoundFrame(log.termBuffers(), INITIAL_TERM_ID, SESSION_ID, STREAM_ID, 320),
            "a hole is not a sound frame");
        assertEquals(LogUnblocker.NO_ACTION, unblock(64), "not a hole: the unblocker leaves it");
    }

    @Test
    void shouldPadACorruptStretchToTheTailWithOneSoundPaddingFrame()
    {
        commit(0, 64);
        term.putInt(64, 200);
        commit(352, 64); // a sound frame inside the stretch is padded over too: the stretch ends at the tail
        tail(512);

        assertEquals(512 - 64, LogUnblocker.padCorrupt(log.termBuffers(), metaData, INITIAL_TERM_ID, 64, 512));
        assertEquals(512 - 64, term.getInt(64));
        assertEquals(HeaderFlyweight.HDR_TYPE_PAD, term.getShort(64 + HeaderFlyweight.TYPE_FIELD_OFFSET));
        assertEquals(true, LogUnblocker.isSoundFrame(log.termBuffers(), INITIAL_TERM_ID, SESSION_ID, STREAM_ID, 64));
        assertEquals(64, term.getInt(0), "the frame before is untouched");
    }

    @Test
    void shouldPadACorruptStretchToTheTermEndWhenTheTailIsInTheNextTerm()
    {
        term.putInt(128, 100);

        assertEquals(TERM_LENGTH - 128,
            LogUnblocker.padCorrupt(log.termBuffers(), metaData, INITIAL_TERM_ID, 128, TERM_LENGTH + 256));
        assertEquals(TERM_LENGTH - 128, term.getInt(128));
        assertEquals(INITIAL_TERM_ID, term.getInt(128 + io.aeron.protocol.DataHeaderFlyweight.TERM_ID_FIELD_OFFSET),
            "the padding names its term");
    }

    @Test
    void shouldNotPadAStretchThreeTermsBehindTheTailWhosePartitionIsInUseAgain()
    {
        term.putInt(128, 100);

        assertEquals(0, LogUnblocker.padCorrupt(log.termBuffers(), metaData, INITIAL_TERM_ID, 128, 3L * TERM_LENGTH));
        assertEquals(100, term.getInt(128));
        assertEquals(0, LogUnblocker.padCorrupt(log.termBuffers(), metaData, INITIAL_TERM_ID, 128, 128),
            "nothing below the tail");
    }

    @Test
    void shouldRewindATailThatRanThreeTermsAheadOfTheReadersAndNoCloserOne()
    {
        final long blocked = 2L * TERM_LENGTH + 256;
        assertEquals(false, LogUnblocker.rewindTail(metaData, INITIAL_TERM_ID, TERM_LENGTH, blocked, 4L * TERM_LENGTH),
            "two terms ahead: padding still helps, the tail stays");

        assertEquals(true, LogUnblocker.rewindTail(metaData, INITIAL_TERM_ID, TERM_LENGTH, blocked, 5L * TERM_LENGTH));
        assertEquals(2, LogBufferDescriptor.activeTermCount(metaData));
        assertEquals(blocked, io.verbus.media.PublicationLog.producerPosition(metaData, INITIAL_TERM_ID, TERM_LENGTH,
            LogBufferDescriptor.positionBitsToShift(TERM_LENGTH)), "the log's tail is where the readers wait");
    }

    private int unblock(final long position)
    {
        return LogUnblocker.unblock(log.termBuffers(), metaData, INITIAL_TERM_ID, position);
    }

    private void commit(final int offset, final int frameLength)
    {
        FrameWriter.writeHeader(term, offset, frameLength, FrameDescriptor.UNFRAGMENTED, HeaderFlyweight.HDR_TYPE_DATA,
            SESSION_ID, STREAM_ID, INITIAL_TERM_ID);
        FrameWriter.publishFrameLength(term, offset, frameLength);
    }

    private void tail(final int offset)
    {
        LogBufferDescriptor.rawTailVolatile(metaData, 0, LogBufferDescriptor.packTail(INITIAL_TERM_ID, offset));
    }
}
