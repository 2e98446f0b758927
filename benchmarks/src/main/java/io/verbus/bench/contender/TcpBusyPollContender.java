package io.verbus.bench.contender;

import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.Pinger;
import io.verbus.bench.Ponger;
import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;
import org.agrona.CloseHelper;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;

/**
 * TCP on the loopback interface through non-blocking NIO channels that the caller polls in a loop: the socket
 * variant of busy-polling, which trades a core for skipping the scheduler's wake-up.
 */
public final class TcpBusyPollContender implements Contender
{
    private static final int STREAM_READ_BUFFER_BYTES = 256 * 1024;

    private final boolean socketPerDirection;

    public TcpBusyPollContender()
    {
        this(false);
    }

    /**
     * @param socketPerDirection pings on one connection and pongs on another, as the rdma tcp provider's QPs carry
     *                           them (each of its connections carries one direction's data, so the kernel ACKs it
     *                           with segments of their own instead of on the reply's).
     */
    public TcpBusyPollContender(final boolean socketPerDirection)
    {
        this.socketPerDirection = socketPerDirection;
    }

    @Override
    public String name()
    {
        return socketPerDirection ? "tcp-nio-busy-poll-2sockets" : "tcp-nio-busy-poll";
    }

    @Override
    public String provider()
    {
        return "kernel TCP, loopback, non-blocking NIO polled, TCP_NODELAY" +
            (socketPerDirection ? ", one connection per direction" : "");
    }

    @Override
    public PingPongPair openPingPong(final int maxLength) throws IOException
    {
        final ChannelPair channels = ChannelPair.open();
        if (!socketPerDirection)
        {
            return new SimplePingPongPair(new PollingPinger(channels.client, channels.client, maxLength),
                new PollingPonger(channels.server, channels.server, maxLength), channels);
        }
        final ChannelPair pongChannels;
        try
        {
            pongChannels = ChannelPair.open();
        }
        catch (final IOException ex)
        {
            channels.close();
            throw ex;
        }
        return new SimplePingPongPair(new PollingPinger(channels.client, pongChannels.server, maxLength),
            new PollingPonger(channels.server, pongChannels.client, maxLength),
            () -> CloseHelper.quietCloseAll(channels, pongChannels));
    }

    @Override
    public StreamPair openStream(final int maxLength) throws IOException
    {
        final ChannelPair channels = ChannelPair.open();
        final ByteBuffer message = ByteBuffer.allocateDirect(maxLength);
        final StreamPublisher publisher = new StreamPublisher()
        {
            private boolean partial;

            @Override
            public boolean send(final int length)
            {
                // A partly written message is finished by the retries that follow its 'false', before any other.
                if (!partial)
                {
                    message.clear().limit(length);
                }
                write(channels.client, message);
                partial = message.hasRemaining();
                return !partial;
            }
        };
        final StreamSubscriber subscriber = new StreamSubscriber()
        {
            private final ByteBuffer readBuffer = ByteBuffer.allocateDirect(STREAM_READ_BUFFER_BYTES);
            private long carriedBytes;

            @Override
            public int poll(final int length)
            {
                readBuffer.clear();
                final int read = read(channels.server, readBuffer);
                if (read <= 0)
                {
                    return 0;
                }
                final long bytes = carriedBytes + read;
                carriedBytes = bytes % length;
                return (int)(bytes / length);
            }
        };
        return new SimpleStreamPair(publisher, subscriber, channels);
    }

    static int read(final SocketChannel channel, final ByteBuffer buffer)
    {
        try
        {
            final int read = channel.read(buffer);
            if (read < 0)
            {
                throw new IllegalStateException("peer closed the connection");
            }
            return read;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    static void write(final SocketChannel channel, final ByteBuffer buffer)
    {
        try
        {
            channel.write(buffer);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static final class PollingPinger implements Pinger
    {
        private final SocketChannel channel;
        private final SocketChannel pongChannel;
        private final ByteBuffer ping;
        private final ByteBuffer pong;
        private final UnsafeBuffer pingBuffer;
        private final UnsafeBuffer pongBuffer;

        PollingPinger(final SocketChannel channel, final SocketChannel pongChannel, final int maxLength)
        {
            this.channel = channel;
            this.pongChannel = pongChannel;
            ping = ByteBuffer.allocateDirect(maxLength);
            pong = ByteBuffer.allocateDirect(maxLength);
            pingBuffer = new UnsafeBuffer(ping);
            pongBuffer = new UnsafeBuffer(pong);
        }

        @Override
        public boolean send(final long sequence, final int length)
        {
            if (ping.position() == 0 || !ping.hasRemaining())
            {
                MessageHeader.write(pingBuffer, 0, sequence, length);
                ping.clear().limit(length);
                pong.clear().limit(length);
            }
            write(channel, ping);
            return !ping.hasRemaining();
        }

        @Override
        public boolean pollEcho(final long sequence)
        {
            read(pongChannel, pong);
            if (pong.hasRemaining())
            {
                return false;
            }
            if (!MessageHeader.isEchoOf(sequence, MessageHeader.sequence(pongBuffer, 0)))
            {
                pong.clear().limit(ping.limit()); // a late echo of an earlier message: read on for this one's
                return false;
            }
            ping.clear();
            return true;
        }
    }

    private static final class PollingPonger implements Ponger
    {
        private final SocketChannel channel;
        private final SocketChannel pongChannel;
        private final ByteBuffer frame;
        private final UnsafeBuffer frameBuffer;
        private boolean echoing;

        PollingPonger(final SocketChannel channel, final SocketChannel pongChannel, final int maxLength)
        {
            this.channel = channel;
            this.pongChannel = pongChannel;
            frame = ByteBuffer.allocateDirect(maxLength);
            frameBuffer = new UnsafeBuffer(frame);
            frame.limit(MessageHeader.HEADER_LENGTH);
        }

        @Override
        public int echo()
        {
            if (echoing)
            {
                return finishEcho();
            }
            read(channel, frame);
            if (frame.position() < MessageHeader.HEADER_LENGTH)
            {
                return 0;
            }
            final int length = MessageHeader.length(frameBuffer, 0);
            if (length < MessageHeader.HEADER_LENGTH || length > frame.capacity())
            {
                throw new IllegalStateException("frame length " + length + " out of range");
            }
            if (frame.limit() != length)
            {
                frame.limit(length);
                read(channel, frame);
            }
            if (frame.hasRemaining())
            {
                return 0;
            }
            frame.flip();
            echoing = true;
            return finishEcho();
        }

        private int finishEcho()
        {
            write(pongChannel, frame);
            if (frame.hasRemaining())
            {
                return 0;
            }
            echoing = false;
            frame.clear().limit(MessageHeader.HEADER_LENGTH);
            return 1;
        }
    }

    /** A connected pair of non-blocking loopback channels on an ephemeral port. */
    static final class ChannelPair implements AutoCloseable
    {
        final SocketChannel client;
        final SocketChannel server;

        private ChannelPair(final SocketChannel client, final SocketChannel server)
        {
            this.client = client;
            this.server = server;
        }

        static ChannelPair open() throws IOException
        {
            try (ServerSocketChannel listener = ServerSocketChannel.open())
            {
                listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                final SocketChannel client = SocketChannel.open();
                try
                {
                    client.connect(listener.getLocalAddress());
                    final SocketChannel server = listener.accept();
                    for (final SocketChannel channel : new SocketChannel[]{ client, server })
                    {
                        channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                        channel.configureBlocking(false);
                    }
                    return new ChannelPair(client, server);
                }
                catch (final IOException ex)
                {
                    CloseHelper.quietClose(client);
                    throw ex;
                }
            }
        }

        @Override
        public void close()
        {
            CloseHelper.quietCloseAll(client, server);
        }
    }
}
