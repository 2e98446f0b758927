package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.verbus.media.ImageBound;
import io.verbus.media.ImageDescriptor;
import io.verbus.media.ImageSink;
import io.verbus.test.MessageHandler;
import org.agrona.BitUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.ReadablePosition;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A subscription for media tests (bus-core owns the real one): bounded images that read only below the bound the
 * media publishes and check every frame against it and the term end.
 */
final class TestImageSink implements ImageSink
{
    final Map<Long, TestImage> images = new ConcurrentHashMap<>();
    final List<TestImage> history = new ArrayList<>();
    final AtomicInteger available = new AtomicInteger();
    final AtomicInteger unavailable = new AtomicInteger();

    public ReadablePosition onImageAvailable(final ImageDescriptor descriptor)
    {
        final TestImage image = new TestImage(descriptor);
        images.put(descriptor.imageId(), image);
        synchronized (history)
        {
            history.add(image);
        }
        available.incrementAndGet();
        return image.subscriberPosition;
    }

    public void onImageUnavailable(final long imageId)
    {
        final TestImage image = images.remove(imageId);
        if (null != image)
        {
            image.closed = true;
            unavailable.incrementAndGet();
        }
    }

    TestImage single()
    {
        return images.isEmpty() ? null : images.values().iterator().next();
    }

    static final class TestImage
    {
        final ImageDescriptor descriptor;
        final VolatilePosition subscriberPosition = new VolatilePosition();
        final int positionBitsToShift;
        volatile boolean closed;
        long position;
        long lastBound;
        String error;

        TestImage(final ImageDescriptor descriptor)
        {
            this.descriptor = descriptor;
            this.position = descriptor.joinPosition();
            this.lastBound = position;
            this.positionBitsToShift = Integer.numberOfTrailingZeros(descriptor.termLength());
            subscriberPosition.set(position);
        }

        /** @return the last bound the media accepted. */
        long bound()
        {
            return lastBound;
        }

        /** Asks the media's bound, as a LogImage does in poll: an invalid position closes the image. */
        long refreshBound()
        {
            final long bound = descriptor.bound().acquire(position);
            if (ImageBound.INVALID == bound)
            {
                error = "invalid position: " + descriptor.bound().invalidReason();
                descriptor.bound().onImageCorrupt(error);
                return lastBound;
            }
            lastBound = bound;
            return bound;
        }

        /** Hands each data fragment to {@code handler}: the term buffer, the payload offset and length. */
        int poll(final MessageHandler handler, final int fragmentLimit)
        {
            if (closed || null != error)
            {
                return 0;
            }
            final long bound = refreshBound();
            if (null != error)
            {
                return 0;
            }
            final int termLength = descriptor.termLength();
            int fragments = 0;
            while (position < bound && fragments < fragmentLimit)
            {
                final UnsafeBuffer term = descriptor.termBuffers()[(int)((position >>> positionBitsToShift) % 3)];
                final int termOffset = (int)(position & (termLength - 1));
                final int frameLength = term.getInt(termOffset);
                final int aligned = BitUtil.align(frameLength, FrameDescriptor.FRAME_ALIGNMENT);
                if (frameLength < DataHeaderFlyweight.HEADER_LENGTH || aligned > termLength - termOffset ||
                    position + aligned > bound)
                {
                    error = "bad frame length " + frameLength + " at position " + position + " bound " + bound;
                    break;
                }
                if (FrameDescriptor.PADDING_FRAME_TYPE != FrameDescriptor.frameType(term, termOffset))
                {
                    handler.onMessage(term, termOffset + DataHeaderFlyweight.HEADER_LENGTH,
                        frameLength - DataHeaderFlyweight.HEADER_LENGTH);
                    fragments++;
                }
                position += aligned;
            }
            subscriberPosition.setRelease(position);
            return fragments;
        }
    }

    static final class VolatilePosition extends ReadablePosition
    {
        private volatile long value;

        void set(final long value)
        {
            this.value = value;
        }

        void setRelease(final long value)
        {
            this.value = value;
        }

        public int id()
        {
            return 0;
        }

        public long get()
        {
            return value;
        }

        public long getVolatile()
        {
            return value;
        }

        public long getAcquire()
        {
            return value;
        }

        public long getOpaque()
        {
            return value;
        }

        public void close()
        {
        }
    }
}
