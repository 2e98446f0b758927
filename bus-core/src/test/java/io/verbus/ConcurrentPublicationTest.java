package io.verbus;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.BufferClaim;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.zip.CRC32C;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Many threads publish into one concurrent log, across many term rotations, with messages carrying the publisher
 * id, a sequence number and a checksum; one subscriber checks none is lost, duplicated, reordered per publisher
 * or corrupted.
 */
class ConcurrentPublicationTest
{
    private static final int PUBLISHERS = 4;
    private static final int MESSAGES_PER_PUBLISHER = 15_000;
    private static final int HEADER_BYTES = 16;

    @TempDir
    Path tempDir;

    @Test
    void shouldLoseDuplicateReorderOrCorruptNothingAcrossTermRotations() throws Exception
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).idleStrategy("backoff")))
        {
            final Subscription subscription = verbus.addSubscription("ipc", 42);
            final Publication publication = verbus.addPublication("ipc:term-length=64k|mtu=1024", 42);
            TestSupport.await("connected", publication::isConnected);

            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            final AtomicReference<Throwable> failure = new AtomicReference<>();
            final List<Thread> threads = new ArrayList<>();
            for (int p = 0; p < PUBLISHERS; p++)
            {
                final int publisherId = p;
                final Thread thread = new Thread(() ->
                {
                    try
                    {
                        publish(publication, publisherId, deadlineNs);
                    }
                    catch (final Throwable ex)
                    {
                        failure.compareAndSet(null, ex);
                    }
                }, "publisher-" + p);
                threads.add(thread);
                thread.start();
            }

            final long[] nextSequence = new long[PUBLISHERS];
            final long[] received = {0};
            final List<String> problems = new ArrayList<>();
            final CRC32C crc = new CRC32C();
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
            {
                final int publisherId = buffer.getInt(offset);
                final long sequence = buffer.getLong(offset + 4);
                final int checksum = buffer.getInt(offset + 12);
                crc.reset();
                for (int i = HEADER_BYTES; i < length; i++)
                {
                    crc.update(buffer.getByte(offset + i));
                }
                if ((int)crc.getValue() != checksum)
                {
                    problems.add("bad checksum from " + publisherId + " seq " + sequence);
                }
                if (sequence != nextSequence[publisherId])
                {
                    problems.add("publisher " + publisherId + " expected seq " + nextSequence[publisherId] + " got " +
                        sequence);
                }
                nextSequence[publisherId] = sequence + 1;
                received[0]++;
            });

            final long total = (long)PUBLISHERS * MESSAGES_PER_PUBLISHER;
            while (received[0] < total && System.nanoTime() < deadlineNs && problems.size() < 10)
            {
                if (0 == subscription.poll(assembler, 100))
                {
                    Thread.yield();
                }
            }
            for (final Thread thread : threads)
            {
                thread.join(TimeUnit.SECONDS.toMillis(10));
            }

            assertNull(failure.get());
            assertEquals(List.of(), problems);
            assertEquals(total, received[0]);
            for (int p = 0; p < PUBLISHERS; p++)
            {
                assertEquals(MESSAGES_PER_PUBLISHER, nextSequence[p]);
            }
            assertTrue(publication.position() > 8L * 64 * 1024, "the run must cross several term rotations");
        }
    }

    private static long claimAndCommit(
        final Publication publication, final BufferClaim bufferClaim, final UnsafeBuffer buffer, final int length)
    {
        final long result = publication.tryClaim(length, bufferClaim);
        if (result > 0)
        {
            bufferClaim.buffer().putBytes(bufferClaim.offset(), buffer, 0, length);
            bufferClaim.commit();
        }
        return result;
    }

    private static void publish(final Publication publication, final int publisherId, final long deadlineNs)
    {
        final SplittableRandom random = new SplittableRandom(publisherId);
        final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
        final CRC32C crc = new CRC32C();
        final BufferClaim bufferClaim = new BufferClaim();
        for (long sequence = 0; sequence < MESSAGES_PER_PUBLISHER; sequence++)
        {
            // Mostly small messages, some spanning 2-3 frames so fragments of different publishers interleave.
            final int length = HEADER_BYTES + (random.nextInt(20) == 0 ? random.nextInt(3000) : random.nextInt(200));
            crc.reset();
            for (int i = HEADER_BYTES; i < length; i++)
            {
                final byte b = (byte)random.nextInt();
                buffer.putByte(i, b);
                crc.update(b);
            }
            buffer.putInt(0, publisherId);
            buffer.putLong(4, sequence);
            buffer.putInt(12, (int)crc.getValue());

            // Odd sequences that fit one frame go through tryClaim/commit, the rest through offer.
            final boolean claim = 1 == (sequence & 1) && length <= publication.maxPayloadLength();
            long result;
            int attempts = 0;
            while ((result = claim ? claimAndCommit(publication, bufferClaim, buffer, length) :
                publication.offer(buffer, 0, length)) < 0)
            {
                if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result ||
                    System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException("offer failed with " + result + " at seq " + sequence);
                }
                if (++attempts % 64 == 0)
                {
                    Thread.yield();
                }
            }
        }
    }
}
