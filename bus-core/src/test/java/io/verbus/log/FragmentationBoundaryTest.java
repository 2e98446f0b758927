package io.verbus.log;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.Publication;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.UnsafeBufferPosition;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Fragmentation and reassembly at every boundary, read back through {@link LogImage}, for both publication kinds.
 */
class FragmentationBoundaryTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final int MTU = 1024;
    private static final int MAX_PAYLOAD = MTU - HEADER_LENGTH;

    @TempDir
    Path tempDir;

    private static LogPublication publication(final LogFixture log, final boolean exclusive)
    {
        return exclusive ? log.exclusive() : log.concurrent();
    }

    private static LogImage image(final LogFixture log)
    {
        final UnsafeBufferPosition position = new UnsafeBufferPosition(
            (UnsafeBuffer)log.countersManager.valuesBuffer(), log.countersManager.allocate("sub"), log.countersManager);
        return new LogImage(1, LogFixture.SESSION_ID, LogFixture.STREAM_ID, LogFixture.INITIAL_TERM_ID,
            log.logBuffers.termBuffers(), position, null, "test", Throwable::printStackTrace, (i) -> {});
    }

    private static UnsafeBuffer pattern(final int length, final int seed)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(Math.max(1, length)));
        for (int i = 0; i < length; i++)
        {
            buffer.putByte(i, (byte)(seed + i * 7));
        }
        return buffer;
    }

    private static long offerRetrying(final LogPublication publication, final UnsafeBuffer buffer, final int length)
    {
        long result = publication.offer(buffer, 0, length);
        if (Publication.ADMIN_ACTION == result)
        {
            result = publication.offer(buffer, 0, length);
        }
        return result;
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldFitExactlyMaxPayloadInOneFrameAndSplitMaxPayloadPlusOneIntoTwo(final boolean exclusive)
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final LogPublication publication = publication(log, exclusive);
            assertEquals(MAX_PAYLOAD, publication.maxPayloadLength());
            assertEquals(MTU, publication.offer(pattern(MAX_PAYLOAD, 1), 0, MAX_PAYLOAD));
            assertEquals(FrameDescriptor.UNFRAGMENTED, FrameDescriptor.frameFlags(log.term(0), 0));

            final long position = publication.offer(pattern(MAX_PAYLOAD + 1, 2), 0, MAX_PAYLOAD + 1);
            assertEquals(MTU + MTU + FrameWriter.align(1 + HEADER_LENGTH), position);
            assertEquals(FrameDescriptor.BEGIN_FRAG_FLAG, FrameDescriptor.frameFlags(log.term(0), MTU));
            assertEquals(MTU, FrameDescriptor.frameLength(log.term(0), MTU));
            assertEquals(FrameDescriptor.END_FRAG_FLAG, FrameDescriptor.frameFlags(log.term(0), 2 * MTU));
            assertEquals(1 + HEADER_LENGTH, FrameDescriptor.frameLength(log.term(0), 2 * MTU));

            final List<byte[]> messages = new ArrayList<>();
            final FragmentAssembler assembler = new FragmentAssembler((b, o, l, h) ->
            {
                final byte[] bytes = new byte[l];
                b.getBytes(o, bytes);
                messages.add(bytes);
            });
            final LogImage image = image(log);
            assertEquals(3, image.poll(assembler, 10));
            assertEquals(2, messages.size());
            assertArrayEquals(bytes(pattern(MAX_PAYLOAD, 1), MAX_PAYLOAD), messages.get(0));
            assertArrayEquals(bytes(pattern(MAX_PAYLOAD + 1, 2), MAX_PAYLOAD + 1), messages.get(1));
            assertEquals(position, image.position());
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldEndAMessageExactlyAtTermEndWithoutPaddingAndStartTheNextTermClean(final boolean exclusive)
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final LogPublication publication = publication(log, exclusive);
            final int frames = TERM_LENGTH / MTU;
            for (int i = 0; i < frames - 1; i++)
            {
                assertTrue(publication.offer(pattern(MAX_PAYLOAD, i), 0, MAX_PAYLOAD) > 0);
            }
            assertEquals(TERM_LENGTH, publication.offer(pattern(MAX_PAYLOAD, 99), 0, MAX_PAYLOAD),
                "the last frame ends exactly at the term end");
            assertEquals(Publication.ADMIN_ACTION, publication.offer(pattern(10, 1), 0, 10));
            assertEquals(TERM_LENGTH + 64, publication.offer(pattern(10, 1), 0, 10));

            final LogImage image = image(log);
            final int[] count = {0};
            int total = 0;
            for (int i = 0; i < 10 && total < frames + 1; i++)
            {
                total += image.poll((b, o, l, h) -> count[0]++, 1000);
            }
            assertEquals(frames + 1, count[0]);
            assertEquals(TERM_LENGTH + 64, image.position());
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldPadWhenAFragmentedMessageDoesNotFitAndDeliverItWholeInTheNextTerm(final boolean exclusive)
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final LogPublication publication = publication(log, exclusive);
            final UnsafeBuffer small = pattern(100, 3);
            final int framedSmall = FrameWriter.align(100 + HEADER_LENGTH);
            final int smallCount = (TERM_LENGTH - 2 * MTU) / framedSmall + 1;
            for (int i = 0; i < smallCount; i++)
            {
                assertTrue(publication.offer(small, 0, 100) > 0);
            }
            final int length = 3 * MAX_PAYLOAD;
            final UnsafeBuffer big = pattern(length, 5);
            final long position = offerRetrying(publication, big, length);
            assertEquals(TERM_LENGTH + 3L * MTU, position);

            final int paddingOffset = smallCount * framedSmall;
            assertTrue(FrameDescriptor.isPaddingFrame(log.term(0), paddingOffset));

            final List<byte[]> messages = new ArrayList<>();
            final FragmentAssembler assembler = new FragmentAssembler((b, o, l, h) ->
            {
                final byte[] bytes = new byte[l];
                b.getBytes(o, bytes);
                messages.add(bytes);
            });
            final LogImage image = image(log);
            for (int i = 0; i < 5 && image.position() < position; i++)
            {
                image.poll(assembler, 1000);
            }
            assertEquals(smallCount + 1, messages.size());
            assertArrayEquals(bytes(big, length), messages.get(smallCount));
            assertEquals(position, image.position());
        }
    }

    @ParameterizedTest
    @ValueSource(booleans = {false, true})
    void shouldAcceptMaxMessageLengthAndRejectBadLengthsWithoutTouchingTheLog(final boolean exclusive)
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final LogPublication publication = publication(log, exclusive);
            final int max = publication.maxMessageLength();
            assertEquals(TERM_LENGTH / 8, max);
            assertEquals(FrameWriter.framedLength(max, MAX_PAYLOAD), publication.offer(pattern(max, 1), 0, max));
            final long tail = publication.position();

            final UnsafeBuffer big = pattern(max + 1, 1);
            final IllegalArgumentException tooLong =
                assertThrows(IllegalArgumentException.class, () -> publication.offer(big, 0, max + 1));
            assertTrue(tooLong.getMessage().contains("exceeds maxMessageLength " + max), tooLong.getMessage());
            final IllegalArgumentException negative =
                assertThrows(IllegalArgumentException.class, () -> publication.offer(big, 0, -1));
            assertTrue(negative.getMessage().contains("must not be negative"), negative.getMessage());
            assertThrows(IllegalArgumentException.class, () -> publication.offer(big, 0, 10, big, 0, -5));
            final IllegalArgumentException claimTooLong = assertThrows(IllegalArgumentException.class,
                () -> publication.tryClaim(MAX_PAYLOAD + 1, new BufferClaim()));
            assertTrue(claimTooLong.getMessage().contains("maxPayloadLength " + MAX_PAYLOAD));
            assertThrows(IllegalArgumentException.class, () -> publication.tryClaim(-1, new BufferClaim()));

            assertEquals(tail, publication.position(), "rejected input must not move the tail");
            assertEquals(0, log.term(0).getInt((int)tail), "rejected input must not write a frame");

            assertEquals(tail + 32, publication.offer(big, 0, 0), "an empty message is a header-only frame");
            final int[] lengths = {-1};
            final LogImage image = image(log);
            image.poll((b, o, l, h) -> lengths[0] = l, 100);
            assertEquals(0, lengths[0]);
            assertEquals(tail + 32, image.position());
            assertEquals(0, LogBufferDescriptor.activeTermCount(log.logBuffers.metaDataBuffer()));
        }
    }

    private static byte[] bytes(final UnsafeBuffer buffer, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(0, bytes);
        return bytes;
    }
}
