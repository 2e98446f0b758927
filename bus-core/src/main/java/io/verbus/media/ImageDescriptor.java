package io.verbus.media;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.ChannelUri;
import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Objects;

/**
 * What a media tells Verbus about a new image: the stream's ids and geometry, the three term buffers over the
 * ring the remote publisher writes into, and the bound: the 8-byte position counter the remote sender writes
 * after the data. The image reads nothing at or past the bound, which it reads with acquire semantics.
 *
 * @param imageId        unique within the media, passed back in {@link ImageSink#onImageUnavailable(long)}.
 * @param sessionId      the publisher's session id.
 * @param streamId       the stream id.
 * @param initialTermId  of the publisher's log.
 * @param termLength     of the publisher's log, a power of two from 64 KiB to 1 GiB.
 * @param joinPosition   where the image starts reading; a multiple of the frame alignment.
 * @param termBuffers    the three partitions, each exactly {@code termLength} bytes.
 * @param boundBuffer    holds the bound position counter.
 * @param boundOffset    of the 8-byte bound counter in {@code boundBuffer}, 8-byte aligned.
 * @param sourceIdentity where the stream comes from, e.g. {@code "rdma:10.0.0.2:40123"}.
 * @param corruptionListener told if the image closes itself on a corrupt frame, so the media drops the connection.
 */
public record ImageDescriptor(
    long imageId,
    int sessionId,
    int streamId,
    int initialTermId,
    int termLength,
    long joinPosition,
    UnsafeBuffer[] termBuffers,
    AtomicBuffer boundBuffer,
    int boundOffset,
    String sourceIdentity,
    ImageCorruptionListener corruptionListener)
{
    /**
     * Checks the geometry so that a bad descriptor fails here, never as an out-of-bounds read later.
     *
     * @throws IllegalArgumentException naming the inconsistent field.
     */
    public ImageDescriptor
    {
        ChannelUri.checkTermLength(termLength, "image descriptor");
        Objects.requireNonNull(termBuffers, "termBuffers");
        Objects.requireNonNull(boundBuffer, "boundBuffer");
        Objects.requireNonNull(sourceIdentity, "sourceIdentity");
        Objects.requireNonNull(corruptionListener, "corruptionListener");
        if (termBuffers.length != LogBufferDescriptor.PARTITION_COUNT)
        {
            throw new IllegalArgumentException(
                "expected " + LogBufferDescriptor.PARTITION_COUNT + " term buffers, got " + termBuffers.length);
        }
        for (int i = 0; i < termBuffers.length; i++)
        {
            if (null == termBuffers[i] || termBuffers[i].capacity() != termLength)
            {
                throw new IllegalArgumentException(
                    "term buffer " + i + " must have capacity " + termLength + ", has " +
                    (null == termBuffers[i] ? "null" : termBuffers[i].capacity()));
            }
        }
        if (boundOffset < 0 || boundOffset > boundBuffer.capacity() - Long.BYTES || 0 != (boundOffset & 7))
        {
            throw new IllegalArgumentException(
                "bound offset " + boundOffset + " must be 8-byte aligned within a buffer of " + boundBuffer.capacity());
        }
        if (joinPosition < 0 || 0 != (joinPosition & (io.aeron.logbuffer.FrameDescriptor.FRAME_ALIGNMENT - 1)))
        {
            throw new IllegalArgumentException("join position " + joinPosition + " must be non-negative and aligned");
        }
    }
}
