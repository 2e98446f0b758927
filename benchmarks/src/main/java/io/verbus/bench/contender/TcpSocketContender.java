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
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;

/**
 * Plain TCP sockets on the loopback interface, blocking, with TCP_NODELAY: what a Java service without a messaging
 * library does. A blocked read gives the core to the kernel, so this contender never spins; reads time out after
 * {@link #READ_TIMEOUT_MS} so that every wait stays bounded.
 */
public final class TcpSocketContender implements Contender
{
    static final int READ_TIMEOUT_MS = 100;
    private static final int STREAM_READ_BUFFER_BYTES = 256 * 1024;

    @Override
    public String name()
    {
        return "tcp-socket";
    }

    @Override
    public String provider()
    {
        return "kernel TCP, loopback, blocking, TCP_NODELAY";
    }

    @Override
    public PingPongPair openPingPong(final int maxLength) throws IOException
    {
        final Connection connection = Connection.open();
        final Pinger pinger = new BlockingPinger(connection.client, maxLength);
        final Ponger ponger = new BlockingPonger(connection.server, maxLength);
        return new SimplePingPongPair(pinger, ponger, connection);
    }

    @Override
    public StreamPair openStream(final int maxLength) throws IOException
    {
        final Connection connection = Connection.open();
        final OutputStream out = connection.client.getOutputStream();
        final InputStream in = connection.server.getInputStream();
        final byte[] message = new byte[maxLength];
        final StreamPublisher publisher = length ->
        {
            try
            {
                out.write(message, 0, length);
                return true;
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
        };
        final StreamSubscriber subscriber = new StreamSubscriber()
        {
            private final byte[] readBuffer = new byte[STREAM_READ_BUFFER_BYTES];
            private long carriedBytes;

            @Override
            public int poll(final int length)
            {
                final int read = read(in, readBuffer, 0, readBuffer.length);
                if (read <= 0)
                {
                    return 0;
                }
                final long bytes = carriedBytes + read;
                carriedBytes = bytes % length;
                return (int)(bytes / length);
            }
        };
        return new SimpleStreamPair(publisher, subscriber, connection);
    }

    /** @return bytes read, 0 when the read timed out. */
    static int read(final InputStream in, final byte[] buffer, final int offset, final int length)
    {
        try
        {
            final int read = in.read(buffer, offset, length);
            if (read < 0)
            {
                throw new IllegalStateException("peer closed the connection");
            }
            return read;
        }
        catch (final SocketTimeoutException ex)
        {
            return 0;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    private static final class BlockingPinger implements Pinger
    {
        private final byte[] ping;
        private final byte[] pong;
        private final UnsafeBuffer pingBuffer;
        private final UnsafeBuffer pongBuffer;
        private final InputStream in;
        private final OutputStream out;
        private int expectedLength;
        private int received;

        BlockingPinger(final Socket socket, final int maxLength) throws IOException
        {
            ping = new byte[maxLength];
            pong = new byte[maxLength];
            pingBuffer = new UnsafeBuffer(ping);
            pongBuffer = new UnsafeBuffer(pong);
            in = socket.getInputStream();
            out = socket.getOutputStream();
        }

        @Override
        public boolean send(final long sequence, final int length)
        {
            MessageHeader.write(pingBuffer, 0, sequence, length);
            expectedLength = length;
            received = 0;
            try
            {
                out.write(ping, 0, length);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            return true;
        }

        @Override
        public boolean pollEcho(final long sequence)
        {
            received += read(in, pong, received, expectedLength - received);
            if (received < expectedLength)
            {
                return false;
            }
            if (!MessageHeader.isEchoOf(sequence, MessageHeader.sequence(pongBuffer, 0)))
            {
                received = 0; // a late echo of an earlier message: read on for this one's
                return false;
            }
            return true;
        }
    }

    private static final class BlockingPonger implements Ponger
    {
        private final byte[] frame;
        private final UnsafeBuffer frameBuffer;
        private final InputStream in;
        private final OutputStream out;
        private int received;

        BlockingPonger(final Socket socket, final int maxLength) throws IOException
        {
            frame = new byte[maxLength];
            frameBuffer = new UnsafeBuffer(frame);
            in = socket.getInputStream();
            out = socket.getOutputStream();
        }

        @Override
        public int echo()
        {
            // Strict ping-pong: at most one frame is in flight, so read no further than the frame's end.
            final int wanted = received < MessageHeader.HEADER_LENGTH ?
                MessageHeader.HEADER_LENGTH - received : frameLength() - received;
            received += read(in, frame, received, wanted);
            if (received < MessageHeader.HEADER_LENGTH)
            {
                return 0;
            }
            final int length = frameLength();
            if (received < length)
            {
                return 0;
            }
            try
            {
                out.write(frame, 0, length);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            received = 0;
            return 1;
        }

        private int frameLength()
        {
            final int length = MessageHeader.length(frameBuffer, 0);
            if (length < MessageHeader.HEADER_LENGTH || length > frame.length)
            {
                throw new IllegalStateException("frame length " + length + " out of range");
            }
            return length;
        }
    }

    /** A connected pair of loopback sockets on an ephemeral port. */
    static final class Connection implements AutoCloseable
    {
        final Socket client;
        final Socket server;

        private Connection(final Socket client, final Socket server)
        {
            this.client = client;
            this.server = server;
        }

        static Connection open() throws IOException
        {
            try (ServerSocket listener = new ServerSocket())
            {
                listener.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                listener.setSoTimeout(10_000);
                final Socket client = new Socket();
                try
                {
                    client.connect(listener.getLocalSocketAddress(), 10_000);
                    final Socket server = listener.accept();
                    for (final Socket socket : new Socket[]{ client, server })
                    {
                        socket.setTcpNoDelay(true);
                        socket.setSoTimeout(READ_TIMEOUT_MS);
                    }
                    return new Connection(client, server);
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
