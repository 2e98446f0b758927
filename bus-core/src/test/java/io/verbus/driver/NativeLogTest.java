package io.verbus.driver;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.log.LogBuffers;
import io.verbus.media.PublicationLog;
import io.verbus.memory.MemoryMapper;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.UnsafeBufferPosition;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;

class NativeLogTest
{
    private static final int TERM_LENGTH = 64 * 1024;
    private static final int INITIAL_TERM_ID = 3;

    @TempDir
    Path dir;

    @Test
    void shouldCleanAMediaLogOneTermBehindTheWriterAndTheLimitAndOnlyThenPublishTheCleanPositionThatCapsTheLimit()
    {
        try (LogBuffers logBuffers = LogBuffers.map(new MemoryMapper(dir, null, false), "media", TERM_LENGTH, false))
        {
            logBuffers.initialise(
                1, 2, INITIAL_TERM_ID, 1408, LogBufferDescriptor.LOG_BUFFER_TYPE_EXCLUSIVE_PUBLICATION);
            final CountersManager counters = new CountersManager(
                new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 512)),
                new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 128)));
            final UnsafeBufferPosition limit = new UnsafeBufferPosition(
                (UnsafeBuffer)counters.valuesBuffer(), counters.allocate("limit"), counters);
            final UnsafeBufferPosition position = new UnsafeBufferPosition(
                (UnsafeBuffer)counters.valuesBuffer(), counters.allocate("position"), counters);
            final PublicationLog publicationLog = new PublicationLog(logBuffers, 1, 2, limit);
            final NativeLog log = new NativeLog(1, false, publicationLog, position, TERM_LENGTH / 2);
            for (final UnsafeBuffer term : logBuffers.termBuffers())
            {
                term.setMemory(0, TERM_LENGTH, (byte)0x7F); // frames of an earlier lap
            }
            assertEquals(2L * TERM_LENGTH, publicationLog.maxPublisherLimit(), "a fresh log is zero for 3 terms");

            // The media raised the limit into the fourth term; the writer is still a quarter term short of it.
            final long mediaLimit = 3L * TERM_LENGTH + TERM_LENGTH / 2;
            limit.setRelease(mediaLimit);
            final long writer = mediaLimit - TERM_LENGTH / 4;
            moveWriterTo(logBuffers, writer);
            assertEquals(1, log.conductorDuty());
            assertCleanedTo(logBuffers, log, publicationLog, writer - TERM_LENGTH);
            assertEquals(0, log.conductorDuty(), "nothing more to clean until the writer moves");

            // The writer reaches the limit: cleaned a term behind it, which is a term behind the limit.
            moveWriterTo(logBuffers, mediaLimit);
            assertEquals(1, log.conductorDuty());
            assertCleanedTo(logBuffers, log, publicationLog, mediaLimit - TERM_LENGTH);

            // A frame that started below the limit ends past it: the cleaning still stops a term behind the limit.
            moveWriterTo(logBuffers, mediaLimit + 1024);
            assertEquals(0, log.conductorDuty());
            assertCleanedTo(logBuffers, log, publicationLog, mediaLimit - TERM_LENGTH);
        }
    }

    private static void moveWriterTo(final LogBuffers logBuffers, final long writerPosition)
    {
        final UnsafeBuffer metaData = logBuffers.metaDataBuffer();
        final int termCount = (int)(writerPosition / TERM_LENGTH);
        LogBufferDescriptor.rawTailVolatile(metaData, LogBufferDescriptor.indexByTermCount(termCount),
            LogBufferDescriptor.packTail(INITIAL_TERM_ID + termCount, (int)(writerPosition % TERM_LENGTH)));
        LogBufferDescriptor.activeTermCountOrdered(metaData, termCount);
    }

    private static void assertCleanedTo(
        final LogBuffers logBuffers, final NativeLog log, final PublicationLog publicationLog, final long cleanPosition)
    {
        assertEquals(cleanPosition, log.cleanPosition());
        assertEquals(cleanPosition, publicationLog.cleanPosition());
        assertEquals(cleanPosition + 2L * TERM_LENGTH, publicationLog.maxPublisherLimit());
        final UnsafeBuffer[] terms = logBuffers.termBuffers();
        for (long p = 0; p < 3L * TERM_LENGTH; p += 512)
        {
            final byte expected = p < cleanPosition ? 0 : (byte)0x7F;
            assertEquals(expected, terms[(int)(p / TERM_LENGTH)].getByte((int)(p % TERM_LENGTH)), "at " + p);
        }
    }
}
