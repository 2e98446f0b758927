package io.verbus.log;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.media.CounterBound;
import io.verbus.media.ImageBound;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.UnsafeBufferPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An image bounded by a position counter, as the rdma media uses it: it never reads at or past the bound, and a
 * corrupt frame header makes it unavailable (error reported, listener told) without an exception or a read outside
 * the term.
 */
class BoundedImageTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final int BOUND_OFFSET = 8;

    @TempDir
    Path tempDir;

    private final UnsafeBuffer boundBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
    private final CounterBound bound = new CounterBound(boundBuffer, BOUND_OFFSET);
    private final List<Throwable> errors = new ArrayList<>();
    private final List<LogImage> corrupted = new ArrayList<>();

    /** Offers {@code count} 32-byte messages numbered from 0 (the int at offset 0) and returns their positions. */
    private static List<Long> offerNumbered(final ExclusiveLogPublication publication, final int count)
    {
        final UnsafeBuffer message = new UnsafeBuffer(new byte[32]);
        final List<Long> positions = new ArrayList<>();
        for (int i = 0; i < count; i++)
        {
            message.putInt(0, i);
            positions.add(publication.offer(message, 0, 32));
        }
        return positions;
    }

    private LogImage boundedImage(final LogFixture log)
    {
        return image(log, bound);
    }

    /** @return an image of the fixture's log, bounded by {@code imageBound}, or local (unbounded) when null. */
    private LogImage image(final LogFixture log, final ImageBound imageBound)
    {
        final UnsafeBufferPosition position = new UnsafeBufferPosition(
            (UnsafeBuffer)log.countersManager.valuesBuffer(), log.countersManager.allocate("sub"), log.countersManager);
        return new LogImage(9, LogFixture.SESSION_ID, LogFixture.STREAM_ID, LogFixture.INITIAL_TERM_ID,
            log.logBuffers.termBuffers(), position, imageBound, null == imageBound ? "ipc" : "remote", errors::add,
            corrupted::add);
    }

    @Test
    void shouldKeepTheAeronApiReadsBelowTheBoundToo()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final List<Long> positions = offerNumbered(log.exclusive(), 10);
            final long framed = positions.get(0);

            final LogImage image = boundedImage(log);
            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(2));
            final List<Integer> seen = new ArrayList<>();
            assertEquals(positions.get(2), image.controlledPeek(0, (b, o, l, h) ->
            {
                seen.add(b.getInt(o));
                return ControlledFragmentHandler.Action.CONTINUE;
            }, Long.MAX_VALUE), "a peek stops at the bound");
            assertEquals(List.of(0, 1, 2), seen);
            assertEquals(3, image.boundedPoll((b, o, l, h) -> seen.add(b.getInt(o)), Long.MAX_VALUE, 100));
            assertEquals(0, image.boundedControlledPoll(
                (b, o, l, h) -> ControlledFragmentHandler.Action.CONTINUE, Long.MAX_VALUE, 100));
            assertEquals(0, image.blockPoll((b, o, l, s, termId) -> seen.add(-1), 1 << 16), "no block past the bound");
            assertEquals(0, image.rawPoll((c, fo, b, o, l, s, termId) -> seen.add(-1), 1 << 16));

            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(5));
            assertEquals(3 * framed, image.blockPoll((b, o, l, s, termId) ->
            {
                assertEquals(LogFixture.SESSION_ID, s);
                assertEquals(LogFixture.INITIAL_TERM_ID, termId);
            }, 1 << 16), "a block ends at the bound");
            assertEquals(positions.get(5), image.position());

            final IllegalArgumentException beyond =
                assertThrows(IllegalArgumentException.class, () -> image.position(positions.get(7)));
            assertTrue(beyond.getMessage().contains("beyond what this image has received"), beyond.getMessage());
            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(9));
            image.position(positions.get(7));
            assertEquals(positions.get(7), image.position());
            assertEquals(1, image.activeTransportCount(), "a bounded image has one connection");
            assertEquals(Long.MAX_VALUE, image.endOfStreamPosition(), "a remote log has no end of stream");
            assertFalse(image.isEndOfStream());
            assertTrue(errors.isEmpty(), errors.toString());
        }
    }

    @Test
    void shouldNeverReadAtOrPastTheBound()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final List<Long> positions = offerNumbered(log.exclusive(), 10);

            final LogImage image = boundedImage(log);
            final List<Integer> seen = new ArrayList<>();
            boundBuffer.putLongRelease(BOUND_OFFSET, 0);
            assertEquals(0, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100), "bound 0: nothing readable");

            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(2));
            assertEquals(3, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100));
            assertEquals(positions.get(2), image.position());
            assertEquals(0, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100), "at the bound: nothing more");

            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(9));
            assertEquals(2, image.controlledPoll(
                (b, o, l, h) ->
                {
                    seen.add(b.getInt(o));
                    return seen.size() == 5 ? ControlledFragmentHandler.Action.BREAK :
                        ControlledFragmentHandler.Action.CONTINUE;
                }, 100));
            assertEquals(5, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100));
            assertEquals(List.of(0, 1, 2, 3, 4, 5, 6, 7, 8, 9), seen);
            assertEquals(positions.get(9), image.position());
            assertTrue(errors.isEmpty());
            assertFalse(image.isClosed());
        }
    }

    @Test
    void shouldLeaveWhateverLiesAtTheBoundUninterpretedWhilePollingIdle()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final List<Long> positions = offerNumbered(log.exclusive(), 3);

            // An idle poll touches the word at its position (to pull that line early): a frame length there that
            // would close the image if it were below the bound must change nothing while it is not.
            final int nextFrameOffset = (int)(long)positions.get(0);
            final int nextFrameLength = log.term(0).getInt(nextFrameOffset);
            log.term(0).putInt(nextFrameOffset, -64);

            final LogImage image = boundedImage(log);
            final List<Integer> seen = new ArrayList<>();
            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(0));
            assertEquals(1, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100));
            for (int i = 0; i < 3; i++)
            {
                assertEquals(0, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100));
                assertEquals(0, image.controlledPoll(
                    (b, o, l, h) -> ControlledFragmentHandler.Action.CONTINUE, 100));
            }
            assertTrue(errors.isEmpty());
            assertFalse(image.isClosed());

            log.term(0).putIntRelease(nextFrameOffset, nextFrameLength);
            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(2));
            assertEquals(2, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100));
            assertEquals(List.of(0, 1, 2), seen);
            assertTrue(errors.isEmpty());
        }
    }

    @Test
    void shouldGoUnavailableOnAFrameLengthPastTheTermEnd()
    {
        assertCorruptFrameMakesImageUnavailable(TERM_LENGTH + 64, "the term end");
    }

    @Test
    void shouldGoUnavailableOnANegativeFrameLengthBelowTheBound()
    {
        assertCorruptFrameMakesImageUnavailable(-64, "missing frame below the bound");
    }

    @Test
    void shouldGoUnavailableOnAFrameShorterThanAHeader()
    {
        assertCorruptFrameMakesImageUnavailable(12, "shorter than a header");
    }

    @Test
    void shouldGoUnavailableOnAFrameThatStraddlesTheBound()
    {
        assertCorruptFrameMakesImageUnavailable(1024, "the bound");
    }

    @Test
    void shouldGoUnavailableOnAHugeFrameLengthWhoseAlignmentOverflows()
    {
        // 0x7FFFFFF0 aligned to 32 wraps to a negative int: the check must compare the raw length, not the aligned.
        assertCorruptFrameMakesImageUnavailable(0x7FFF_FFF0, "the term end");
    }

    @Test
    void shouldCloseAndTellTheMediaWhenTheBoundGoesBackwards()
    {
        assertBackwardsBoundCloses((image, first) -> assertEquals(0, image.poll((b, o, l, h) -> {}, 100)));
    }

    @Test
    void shouldCloseWhenTheCallerMovesThePositionOverAnInvalidBound()
    {
        // The publisher's fault, not the caller's: no IllegalArgumentException, the image closes as a poll would.
        assertBackwardsBoundCloses(LogImage::position);
    }

    /** Delivers one frame, moves the bound back below it, then lets {@code meet} run into it. */
    private void assertBackwardsBoundCloses(final java.util.function.ObjLongConsumer<LogImage> meet)
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final UnsafeBuffer message = new UnsafeBuffer(new byte[32]);
            final long first = publication.offer(message, 0, 32);
            publication.offer(message, 0, 32);

            final LogImage image = boundedImage(log);
            boundBuffer.putLongRelease(BOUND_OFFSET, first);
            assertEquals(1, image.poll((b, o, l, h) -> {}, 100));
            boundBuffer.putLongRelease(BOUND_OFFSET, 0);
            meet.accept(image, first);

            assertTrue(image.isClosed());
            assertEquals(List.of(image), corrupted);
            assertTrue(errors.get(0).getMessage().contains("invalid position"), errors.get(0).getMessage());
            assertEquals(1, bound.corruptions(), "the media is told, so it drops the connection");
        }
    }

    @Test
    void shouldGoUnavailableOnAStaleFrameFromThreeTermsAgo()
    {
        // A ring is reused every three terms: a position moved past what was written reaches old, well-formed frames.
        assertMisplacedFrameMakesImageUnavailable(
            DataHeaderFlyweight.TERM_ID_FIELD_OFFSET, LogFixture.INITIAL_TERM_ID - 3);
    }

    @Test
    void shouldGoUnavailableOnAFrameWhoseHeaderNamesAnotherOffset()
    {
        assertMisplacedFrameMakesImageUnavailable(DataHeaderFlyweight.TERM_OFFSET_FIELD_OFFSET, 0);
    }

    @Test
    void shouldGoUnavailableOnAFrameOfAnotherSessionOrStream()
    {
        assertMisplacedFrameMakesImageUnavailable(
            DataHeaderFlyweight.SESSION_ID_FIELD_OFFSET, LogFixture.SESSION_ID + 1);
        errors.clear();
        corrupted.clear();
        assertMisplacedFrameMakesImageUnavailable(
            DataHeaderFlyweight.STREAM_ID_FIELD_OFFSET, LogFixture.STREAM_ID + 1);
    }

    @Test
    void shouldGoUnavailableOnAFrameOfAnUnknownType()
    {
        try (LogFixture log = new LogFixture(tempDir.resolve("unknown-type"), TERM_LENGTH, 1408))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final List<Long> positions = offerNumbered(publication, 3);
            final long first = positions.get(0);
            // A header sound in every other field, its type a status message's: not data, not padding.
            log.term(0).putShort((int)first + HeaderFlyweight.TYPE_FIELD_OFFSET, (short)HeaderFlyweight.HDR_TYPE_SM);
            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(2));

            final LogImage image = boundedImage(log);
            final List<Integer> seen = new ArrayList<>();
            assertEquals(1, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100), "frames before it arrive");
            assertEquals(List.of(0), seen, "the frame of another type is not delivered as data");
            assertEquals(first, image.position());
            assertTrue(image.isClosed());
            assertEquals(1, errors.size());
            assertTrue(errors.get(0).getMessage().contains("its type is 0x3"), errors.get(0).getMessage());
        }
    }

    /** The second frame's header gets {@code value} at {@code fieldOffset}; its length stays sound. */
    private void assertMisplacedFrameMakesImageUnavailable(final int fieldOffset, final int value)
    {
        try (LogFixture log = new LogFixture(tempDir.resolve("misplaced-" + fieldOffset), TERM_LENGTH, 1408))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final List<Long> positions = offerNumbered(publication, 3);
            final long first = positions.get(0);
            log.term(0).putInt((int)first + fieldOffset, value);
            boundBuffer.putLongRelease(BOUND_OFFSET, positions.get(2));

            final LogImage image = boundedImage(log);
            final List<Integer> seen = new ArrayList<>();
            assertEquals(1, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100), "frames before it arrive");
            assertEquals(List.of(0), seen);
            assertEquals(first, image.position(), "the position stops before the misplaced frame");
            assertTrue(image.isClosed());
            assertEquals(List.of(image), corrupted);
            assertEquals(1, errors.size());
            assertTrue(errors.get(0).getMessage().contains("a stale or misplaced frame"), errors.get(0).getMessage());
            assertEquals(0, image.poll((b, o, l, h) -> seen.add(b.getInt(o)), 100), "a closed image reads nothing");
        }
    }

    private void assertCorruptFrameMakesImageUnavailable(final int corruptLength, final String reason)
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final UnsafeBuffer message = new UnsafeBuffer(new byte[32]);
            final long first = publication.offer(message, 0, 32);
            final long second = publication.offer(message, 0, 32);
            final long third = publication.offer(message, 0, 32);

            // Corrupt the second frame's length, as a faulty or hostile remote writer could.
            log.term(0).putInt((int)first, corruptLength);
            boundBuffer.putLongRelease(BOUND_OFFSET, third);

            final LogImage image = boundedImage(log);
            final int[] delivered = {0};
            assertEquals(1, image.poll((b, o, l, h) -> delivered[0]++, 100), "frames before the corrupt one arrive");
            assertEquals(first, image.position(), "the position stops before the corrupt frame");
            assertTrue(image.isClosed());
            assertEquals(List.of(image), corrupted);
            assertEquals(1, errors.size());
            assertTrue(errors.get(0).getMessage().contains(reason), errors.get(0).getMessage());
            assertTrue(errors.get(0).getMessage().contains("frame length " + corruptLength));
            assertEquals(1, bound.corruptions(), "the media is told, so it drops the connection");

            assertEquals(0, image.poll((b, o, l, h) -> delivered[0]++, 100), "a closed image reads nothing");
            assertEquals(1, delivered[0]);
            assertEquals(second - first, 64);
        }
    }

    @Test
    void shouldTreatAMissingFrameInALocalLogAsNotYetWritten()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final UnsafeBufferPosition position = new UnsafeBufferPosition(
                (UnsafeBuffer)log.countersManager.valuesBuffer(),
                log.countersManager.allocate("s"),
                log.countersManager);
            final LogImage image = new LogImage(1, 1, 1, LogFixture.INITIAL_TERM_ID, log.logBuffers.termBuffers(),
                position, null, "ipc", errors::add, corrupted::add);
            assertEquals(0, image.poll((b, o, l, h) -> {}, 10));
            assertFalse(image.isClosed());
            assertTrue(errors.isEmpty());
        }
    }

    @Test
    void shouldWaitAtACorruptFrameInALocalLogUntilItIsPaddedOver()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final UnsafeBuffer message = new UnsafeBuffer(new byte[32]);
            final long first = publication.offer(message, 0, 32);
            final UnsafeBuffer term = log.logBuffers.termBuffers()[0];
            for (final int corruptLength : new int[]{ 200, 12, TERM_LENGTH })
            {
                // What a second thread on the exclusive publication leaves: a length over someone else's payload.
                term.putInt((int)first + 8, 77);
                term.putIntRelease((int)first, corruptLength);
                final LogImage image = image(log, null);
                final int[] delivered = {0};
                assertEquals(1, image.poll((b, o, l, h) -> delivered[0]++, 10));
                assertEquals(0, image.poll((b, o, l, h) -> delivered[0]++, 10), "length " + corruptLength);
                assertEquals(first, image.position(), "it waits at the corrupt frame");
                assertFalse(image.isClosed(), "a local image stays: the driver pads over the frame");
                assertTrue(errors.isEmpty());

                LogUnblocker.padCorrupt(log.logBuffers.termBuffers(), log.logBuffers.metaDataBuffer(),
                    LogFixture.INITIAL_TERM_ID, first, first + 256);
                assertEquals(0, image.poll((b, o, l, h) -> delivered[0]++, 10));
                assertEquals(first + 256, image.position(), "and reads on past the padding");
                assertEquals(1, delivered[0]);
                term.setMemory((int)first, 256, (byte)0);
            }
        }
    }

    @Test
    void shouldHandAHandlerExceptionToTheErrorHandlerAndCountTheFragmentAsConsumed()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, 1408))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final UnsafeBuffer message = new UnsafeBuffer(new byte[32]);
            final long first = publication.offer(message, 0, 32);
            final long second = publication.offer(message, 0, 32);

            final LogImage image = boundedImage(log);
            boundBuffer.putLongRelease(BOUND_OFFSET, second);
            final int[] calls = {0};
            assertEquals(1, image.poll((b, o, l, h) ->
            {
                calls[0]++;
                throw new IllegalStateException("application bug");
            }, 10), "the poll ends at the fragment whose handler threw, and returns normally");
            assertEquals(first, image.position(), "the fragment that threw counts as consumed");
            assertEquals(1, errors.size());
            assertEquals("application bug", errors.get(0).getMessage());
            assertEquals(1, image.poll((b, o, l, h) -> calls[0]++, 10), "the next poll carries on");
            assertEquals(2, calls[0]);
        }
    }
}
