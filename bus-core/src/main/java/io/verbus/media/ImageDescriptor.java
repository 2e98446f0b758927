package io.verbus.media;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.ChannelUri;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Objects;

/**
 * What a media tells Verbus about a new image: the stream's ids and geometry, the three term buffers over the
 * ring the remote publisher writes into, and the bound: the media's reader of the position the remote sender
 * writes after the data. The image consults it on its own polling thread and reads nothing at or past it.
 *
 * @param imageId        unique within the media, passed back in {@link ImageSink#onImageUnavailable(long)}.
 * @param sessionId      the publisher's session id.
 * @param streamId       the stream id.
 * @param initialTermId  of the publisher's log.
 * @param termLength     of the publisher's log, a power of two from 64 KiB to 1 GiB.
 * @param joinPosition   where the image starts reading; a multiple of the frame alignment.
 * @param termBuffers    the three partitions, each exactly {@code termLength} bytes.
 * @param bound          the media's validated reader of the remote position.
 * @param sourceIdentity where the stream comes from, e.g. {@code "rdma:10.0.0.2:40123"}.
 * @param mtuLength      the publisher's MTU, or 0 when the media does not say (the image then reports the MTU of
 *                       the subscription's channel, or of the Verbus context).
 */
public record ImageDescriptor(
    long imageId,
    int sessionId,
    int streamId,
    int initialTermId,
    int termLength,
    long joinPosition,
    UnsafeBuffer[] termBuffers,
    ImageBound bound,
    String sourceIdentity,
    int mtuLength)
{
    /**
     * A descriptor that does not say the publisher's MTU.
     */
    public ImageDescriptor(
        final long imageId,
        final int sessionId,
        final int streamId,
        final int initialTermId,
        final int termLength,
        final long joinPosition,
        final UnsafeBuffer[] termBuffers,
        final ImageBound bound,
        final String sourceIdentity)
    {
        this(imageId, sessionId, streamId, initialTermId, termLength, joinPosition, termBuffers, bound, sourceIdentity,
            0);
    }

    /**
     * Checks the geometry so that a bad descriptor fails here, never as an out-of-bounds read later.
     *
     * @throws IllegalArgumentException naming the inconsistent field.
     */
    public ImageDescriptor
    {
        ChannelUri.checkTermLength(termLength, "image descriptor");
        Objects.requireNonNull(termBuffers, "termBuffers");
        Objects.requireNonNull(bound, "bound");
        Objects.requireNonNull(sourceIdentity, "sourceIdentity");
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
        if (joinPosition < 0 || 0 != (joinPosition & (io.aeron.logbuffer.FrameDescriptor.FRAME_ALIGNMENT - 1)))
        {
            throw new IllegalArgumentException("join position " + joinPosition + " must be non-negative and aligned");
        }
        if (0 != mtuLength && (mtuLength < ChannelUri.MTU_MIN_LENGTH || mtuLength > ChannelUri.MTU_MAX_LENGTH))
        {
            throw new IllegalArgumentException("mtu length " + mtuLength + " must be 0 (unknown) or from " +
                ChannelUri.MTU_MIN_LENGTH + " to " + ChannelUri.MTU_MAX_LENGTH);
        }
    }
}
