package io.verbus.media;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.ChannelUri;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.ReadablePosition;

import java.nio.ByteBuffer;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicLong;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * A test media ({@code loop:name=N}) that exercises the SPI the way a remote media does, inside one JVM: the
 * sender copies complete frames from the publication's log into a separate "remote" ring, then publishes the
 * copied position in a bound counter with release semantics; the receiver announces a bounded image over that
 * ring; flow control comes back through the image's subscriber position. {@code direct=true} makes the sender
 * support direct sending.
 */
public final class LoopbackMediaFactory implements MediaFactory
{
    static final Map<String, Queue<Connection>> PENDING = new ConcurrentHashMap<>();
    static final Map<String, Connection> CONNECTIONS = new ConcurrentHashMap<>();
    static final AtomicLong IMAGE_IDS = new AtomicLong();

    /** One sender-to-receiver connection: the remote ring, its bound, and the credits coming back. */
    static final class Connection
    {
        final String name;
        final long imageId = IMAGE_IDS.incrementAndGet();
        final UnsafeBuffer[] ring = new UnsafeBuffer[LogBufferDescriptor.PARTITION_COUNT];
        final UnsafeBuffer bound = new UnsafeBuffer(ByteBuffer.allocateDirect(64));
        final PublicationLog log;
        volatile ReadablePosition subscriberPosition;
        volatile boolean unavailable;

        Connection(final String name, final PublicationLog log)
        {
            this.name = name;
            this.log = log;
            for (int i = 0; i < ring.length; i++)
            {
                ring[i] = new UnsafeBuffer(ByteBuffer.allocateDirect(log.termLength()));
            }
        }
    }

    public String scheme()
    {
        return "loop";
    }

    public Set<String> supportedKeys()
    {
        return Set.of("name", "direct");
    }

    public MediaSender newSender(final MediaContext context, final ChannelUri uri, final PublicationLog log)
    {
        return new LoopbackSender(uri.get("name", "default") + "/" + log.streamId(), log,
            Boolean.parseBoolean(uri.get("direct", "false")));
    }

    public MediaReceiver newReceiver(
        final MediaContext context, final ChannelUri uri, final int streamId, final ImageSink images)
    {
        return new LoopbackReceiver(uri.get("name", "default") + "/" + streamId, images);
    }

    static final class LoopbackSender implements MediaSender
    {
        final Connection connection;
        final boolean direct;
        volatile Thread lastSendThread;
        long sentPosition;

        LoopbackSender(final String name, final PublicationLog log, final boolean direct)
        {
            this.connection = new Connection(name, log);
            this.direct = direct;
            PENDING.computeIfAbsent(name, (k) -> new ConcurrentLinkedQueue<>()).add(connection);
        }

        public int doWork()
        {
            final ReadablePosition subscriberPosition = connection.subscriberPosition;
            if (null == subscriberPosition || connection.unavailable)
            {
                return 0;
            }
            final PublicationLog log = connection.log;
            log.publisherLimit().setRelease(
                Math.min(subscriberPosition.getVolatile() + log.termLength() / 2, log.maxPublisherLimit()));
            log.connected(true);
            return sendNow();
        }

        public boolean supportsDirectSend()
        {
            return direct;
        }

        public int sendNow()
        {
            if (null == connection.subscriberPosition)
            {
                return 0;
            }
            lastSendThread = Thread.currentThread();
            final PublicationLog log = connection.log;
            final long producerPosition = log.producerPosition();
            final int termLength = log.termLength();
            int work = 0;
            while (sentPosition < producerPosition)
            {
                final int index = LogBufferDescriptor.indexByPosition(sentPosition, log.positionBitsToShift());
                final int termOffset = (int)(sentPosition & (termLength - 1));
                final UnsafeBuffer term = log.logBuffers().termBuffers()[index];
                final int frameLength = term.getIntVolatile(termOffset);
                if (frameLength <= 0)
                {
                    break;
                }
                final int aligned = (frameLength + 31) & -32;
                connection.ring[index].putBytes(termOffset, term, termOffset, aligned);
                sentPosition += aligned;
                work++;
            }
            if (work > 0)
            {
                connection.bound.putLongRelease(0, sentPosition);
            }
            return work;
        }

        public void close()
        {
        }
    }

    static final class LoopbackReceiver implements MediaReceiver
    {
        final String name;
        final ImageSink images;

        LoopbackReceiver(final String name, final ImageSink images)
        {
            this.name = name;
            this.images = images;
        }

        public int doWork()
        {
            int work = 0;
            final Queue<Connection> pending = PENDING.get(name);
            Connection connection;
            while (null != pending && null != (connection = pending.poll()))
            {
                final PublicationLog log = connection.log;
                connection.subscriberPosition = images.onImageAvailable(new ImageDescriptor(
                    connection.imageId, log.sessionId(), log.streamId(), log.initialTermId(), log.termLength(), 0,
                    connection.ring, new CounterBound(connection.bound, 0), "loop:" + name));
                CONNECTIONS.put(name, connection);
                work++;
            }
            final Connection current = CONNECTIONS.get(name);
            if (null != current && current.unavailable && null != current.subscriberPosition)
            {
                images.onImageUnavailable(current.imageId);
                current.subscriberPosition = null;
                work++;
            }
            return work;
        }

        public void close()
        {
        }
    }

    /** Corrupts the frame at a position in a connection's ring, as a faulty remote writer could. */
    static void corrupt(final String name, final long position, final int frameLength)
    {
        final Connection connection = CONNECTIONS.get(name);
        final int termLength = connection.log.termLength();
        final int index = LogBufferDescriptor.indexByPosition(position, connection.log.positionBitsToShift());
        connection.ring[index].putInt((int)(position & (termLength - 1)), frameLength);
        connection.bound.putLongRelease(0, position + HEADER_LENGTH * 4);
    }
}
