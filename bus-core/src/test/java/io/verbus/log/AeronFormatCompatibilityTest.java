package io.verbus.log;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.logbuffer.TermReader;
import io.aeron.logbuffer.TermScanner;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Proves the native log is Aeron's format: Aeron's own {@link TermReader} and {@link TermScanner} read the frames
 * Verbus wrote, with the headers, flags, padding and positions Aeron expects.
 */
class AeronFormatCompatibilityTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final int MTU = 1408;

    @TempDir
    Path tempDir;

    @Test
    void shouldWriteFramesThatAeronsTermReaderDeliversWithMatchingHeaders()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final ConcurrentLogPublication publication = log.concurrent();
            final UnsafeBuffer message = new UnsafeBuffer(new byte[100]);
            final List<Long> positions = new ArrayList<>();
            for (int i = 0; i < 10; i++)
            {
                message.putInt(0, i);
                positions.add(publication.offer(message, 0, 20 + i));
            }

            final List<String> seen = new ArrayList<>();
            final Header header = new Header(
                LogFixture.INITIAL_TERM_ID, LogBufferDescriptor.positionBitsToShift(TERM_LENGTH));
            final long outcome = TermReader.read(log.term(0), 0, (buffer, offset, length, h) ->
                seen.add(buffer.getInt(offset) + ":" + length + ":" + h.sessionId() + ":" + h.streamId() + ":" +
                    h.termId() + ":" + h.flags() + ":" + h.type() + ":" + h.position()),
                100, header, Throwable::printStackTrace);

            assertEquals(10, TermReader.fragmentsRead(outcome));
            assertEquals(positions.get(9).intValue(), TermReader.offset(outcome));
            for (int i = 0; i < 10; i++)
            {
                assertEquals(i + ":" + (20 + i) + ":" + LogFixture.SESSION_ID + ":" + LogFixture.STREAM_ID + ":" +
                    LogFixture.INITIAL_TERM_ID + ":" + FrameDescriptor.UNFRAGMENTED + ":" +
                    HeaderFlyweight.HDR_TYPE_DATA + ":" + positions.get(i), seen.get(i));
            }
            assertEquals(0, log.term(0).getInt(TermReader.offset(outcome)), "nothing written past the tail");
        }
    }

    @Test
    void shouldFragmentSoThatAeronsFragmentAssemblerRejoinsTheMessage()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final int length = 5000;
            final byte[] bytes = new byte[length];
            for (int i = 0; i < length; i++)
            {
                bytes[i] = (byte)(i * 31);
            }
            final UnsafeBuffer header = new UnsafeBuffer(bytes, 0, 1000);
            final UnsafeBuffer payload = new UnsafeBuffer(bytes, 1000, length - 1000);
            assertTrue(publication.offer(header, 0, 1000, payload, 0, length - 1000) > 0);

            final List<Byte> flags = new ArrayList<>();
            TermReader.read(log.term(0), 0, (b, o, l, h) -> flags.add(h.flags()), 100,
                new Header(LogFixture.INITIAL_TERM_ID, 16), Throwable::printStackTrace);
            assertEquals(List.of(FrameDescriptor.BEGIN_FRAG_FLAG, (byte)0, (byte)0, FrameDescriptor.END_FRAG_FLAG),
                flags);

            final byte[][] assembled = new byte[1][];
            final FragmentAssembler assembler = new FragmentAssembler((b, o, l, h) ->
            {
                assembled[0] = new byte[l];
                b.getBytes(o, assembled[0]);
            });
            TermReader.read(log.term(0), 0, assembler, 100, new Header(LogFixture.INITIAL_TERM_ID, 16),
                Throwable::printStackTrace);
            assertArrayEquals(bytes, assembled[0]);
        }
    }

    @Test
    void shouldPadTheTermEndSoAeronsScannerStopsAtPaddingAndRotateToTheNextTermId()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final ConcurrentLogPublication publication = log.concurrent();
            final UnsafeBuffer message = new UnsafeBuffer(new byte[1000]);
            final int framed = FrameWriter.align(1000 + DataHeaderFlyweight.HEADER_LENGTH);
            final int fits = TERM_LENGTH / framed;
            for (int i = 0; i < fits; i++)
            {
                assertTrue(publication.offer(message, 0, 1000) > 0);
            }
            assertEquals(io.verbus.Publication.ADMIN_ACTION, publication.offer(message, 0, 1000));
            final long position = publication.offer(message, 0, 1000);
            assertEquals(TERM_LENGTH + framed, position);

            final int paddingOffset = fits * framed;
            assertTrue(FrameDescriptor.isPaddingFrame(log.term(0), paddingOffset));
            assertEquals(TERM_LENGTH - paddingOffset, FrameDescriptor.frameLength(log.term(0), paddingOffset));

            final long scan = TermScanner.scanForAvailability(log.term(0), 0, TERM_LENGTH);
            // Aeron's scanner counts a padding frame's header as available and the rest as padding to skip.
            assertEquals(paddingOffset + DataHeaderFlyweight.HEADER_LENGTH, TermScanner.available(scan));
            assertEquals(TERM_LENGTH - paddingOffset - DataHeaderFlyweight.HEADER_LENGTH, TermScanner.padding(scan));

            assertEquals(LogFixture.INITIAL_TERM_ID + 1, DataHeaderFlyweight.termId(log.term(1), 0));
            assertEquals(1, LogBufferDescriptor.activeTermCount(log.logBuffers.metaDataBuffer()));
            final List<Long> positions = new ArrayList<>();
            TermReader.read(log.term(1), 0, (b, o, l, h) -> positions.add(h.position()), 10,
                new Header(LogFixture.INITIAL_TERM_ID, LogBufferDescriptor.positionBitsToShift(TERM_LENGTH)),
                Throwable::printStackTrace);
            assertEquals(List.of(position), positions);
        }
    }

    @Test
    void shouldCommitAndAbortClaimsSoAeronReadsCommittedAndSkipsAborted()
    {
        try (LogFixture log = new LogFixture(tempDir, TERM_LENGTH, MTU))
        {
            final ExclusiveLogPublication publication = log.exclusive();
            final BufferClaim claim = new BufferClaim();
            assertTrue(publication.tryClaim(8, claim) > 0);
            claim.buffer().putLong(claim.offset(), 42L);
            claim.commit();
            assertTrue(publication.tryClaim(8, claim) > 0);
            claim.abort();
            assertTrue(publication.tryClaim(8, claim) > 0);
            claim.buffer().putLong(claim.offset(), 43L);
            claim.commit();

            final List<Long> values = new ArrayList<>();
            final long outcome = TermReader.read(log.term(0), 0, (b, o, l, h) -> values.add(b.getLong(o)), 10,
                new Header(LogFixture.INITIAL_TERM_ID, 16), Throwable::printStackTrace);
            assertEquals(List.of(42L, 43L), values);
            assertEquals(3 * 64, TermReader.offset(outcome));
        }
    }
}
