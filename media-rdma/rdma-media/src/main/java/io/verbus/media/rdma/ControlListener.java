package io.verbus.media.rdma;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

import io.verbus.media.rdma.protocol.HandshakeException;
import io.verbus.media.rdma.protocol.HandshakeHeader;
import io.verbus.media.rdma.protocol.HandshakeValidator;
import io.verbus.media.rdma.protocol.HelloFlyweight;
import io.verbus.media.rdma.protocol.RejectFlyweight;
import io.verbus.media.rdma.protocol.SocketMessageTransport;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One TCP control endpoint shared by every publication bound to the same {@code host:port}, as several streams
 * share one Aeron channel: it accepts connections, reads the HELLO and hands the connection to the publication
 * of the stream the HELLO names. A connection for no stream here, or whose first message is not a well-formed
 * HELLO, is rejected with a log line and gets nothing.
 */
final class ControlListener implements AutoCloseable
{
    /** Receives a connection whose HELLO names its stream; runs on the connection's own virtual thread. */
    interface Handler
    {
        void onConnection(SocketMessageTransport transport, byte[] hello);

        /**
         * The endpoint rejected a connection before it reached any publication (a bad first message, an unknown
         * stream): each publication on the endpoint counts it in its {@code rdma handshakes rejected} counter, so the
         * counters agree with the log.
         */
        default void onEndpointRejection()
        {
        }
    }

    private static final Map<String, ControlListener> LISTENERS = new HashMap<>();

    private final ServerSocket serverSocket;
    private final String key;
    private final long helloTimeoutMs;
    private final Map<Integer, Handler> handlers = new ConcurrentHashMap<>();
    private final AtomicLong rejected = new AtomicLong();
    private final Thread acceptThread;
    private volatile boolean running = true;

    private ControlListener(final String host, final int port, final long helloTimeoutMs)
    {
        this.helloTimeoutMs = helloTimeoutMs;
        try
        {
            serverSocket = new ServerSocket();
            serverSocket.setReuseAddress(true);
            serverSocket.bind(new InetSocketAddress(host, port), 64);
            serverSocket.setSoTimeout(100);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("rdma channel: cannot listen on endpoint " + host + ":" + port + ": " +
                ex.getMessage(), ex);
        }
        key = key(host, serverSocket.getLocalPort());
        acceptThread = Thread.ofPlatform().daemon().name("verbus-rdma-endpoint-" + serverSocket.getLocalPort())
            .unstarted(this::acceptLoop);
        acceptThread.start();
    }

    private static String key(final String host, final int port)
    {
        return host + ":" + port;
    }

    /**
     * Attach a publication's stream to the endpoint, binding it on first use.
     *
     * @throws IllegalArgumentException if the endpoint already carries that stream.
     */
    static synchronized ControlListener register(
        final String host, final int port, final int streamId, final long helloTimeoutMs, final Handler handler)
    {
        ControlListener listener = 0 == port ? null : LISTENERS.get(key(host, port));
        final boolean created = null == listener;
        if (created)
        {
            listener = new ControlListener(host, port, helloTimeoutMs);
            LISTENERS.put(listener.key, listener);
        }
        if (null != listener.handlers.putIfAbsent(streamId, handler))
        {
            throw new IllegalArgumentException("rdma channel: endpoint " + listener.key +
                " already carries a publication on stream " + streamId + " (one publication per stream per endpoint)");
        }
        return listener;
    }

    /** Detach a stream; the last one closes the endpoint. */
    static synchronized void unregister(final ControlListener listener, final int streamId)
    {
        listener.handlers.remove(streamId);
        if (listener.handlers.isEmpty())
        {
            LISTENERS.remove(listener.key);
            listener.close();
        }
    }

    int port()
    {
        return serverSocket.getLocalPort();
    }

    /** @return connections refused before reaching any publication (bad first message, unknown stream). */
    long rejectedHandshakes()
    {
        return rejected.get();
    }

    private void acceptLoop()
    {
        while (running)
        {
            try
            {
                final Socket socket = serverSocket.accept();
                Thread.ofVirtual().name("verbus-rdma-connection-" + port()).start(() -> dispatch(socket));
            }
            catch (final SocketTimeoutException ignore)
            {
                // check running
            }
            catch (final IOException ex)
            {
                if (running)
                {
                    PublisherControl.LOGGER.log(System.Logger.Level.WARNING,
                        "rdma endpoint " + key + ": accept failed: " + ex);
                }
            }
        }
    }

    private void dispatch(final Socket socket)
    {
        SocketMessageTransport transport = null;
        try
        {
            transport = new SocketMessageTransport(socket);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HandshakeHeader.MAX_MESSAGE_LENGTH]);
            final int length = transport.receive(buffer, helloTimeoutMs);
            HandshakeValidator.validateHeader(buffer, 0, length, HandshakeHeader.HELLO_TYPE);
            if (HandshakeHeader.HELLO_TYPE != HandshakeHeader.type(buffer, 0))
            {
                throw new HandshakeException(HandshakeException.Reason.MALFORMED, "a connection must start with HELLO");
            }
            final int streamId = new HelloFlyweight().wrap(buffer, 0).streamId();
            final Handler handler = handlers.get(streamId);
            if (null == handler)
            {
                throw new HandshakeException(HandshakeException.Reason.STREAM_MISMATCH,
                    "HELLO.streamId=" + streamId + " but this endpoint carries streams " + handlers.keySet());
            }
            final byte[] hello = new byte[length];
            buffer.getBytes(0, hello);
            handler.onConnection(transport, hello);
            transport = null; // the publication owns it now
        }
        catch (final HandshakeException ex)
        {
            onRejected();
            PublisherControl.LOGGER.log(System.Logger.Level.WARNING, "rdma endpoint " + key +
                ": rejected handshake from " + socket.getRemoteSocketAddress() + ": " + ex.getMessage() +
                "; nothing registered for it");
            if (null != transport && ex.reason() != HandshakeException.Reason.CLOSED)
            {
                try
                {
                    final ExpandableArrayBuffer out = new ExpandableArrayBuffer(RejectFlyweight.MAX_LENGTH);
                    final int rejectLength = new RejectFlyweight().wrap(out, 0).encode(ex.reason(), ex.detail());
                    transport.send(out, 0, rejectLength);
                }
                catch (final HandshakeException ignore)
                {
                    // the peer is gone
                }
            }
        }
        catch (final IOException | RuntimeException ex)
        {
            onRejected();
            PublisherControl.LOGGER.log(System.Logger.Level.WARNING, "rdma endpoint " + key +
                ": rejected connection from " + socket.getRemoteSocketAddress() + ": " + ex +
                "; nothing registered for it");
        }
        finally
        {
            if (null != transport)
            {
                transport.close();
            }
        }
    }

    private void onRejected()
    {
        rejected.incrementAndGet();
        for (final Handler handler : handlers.values())
        {
            handler.onEndpointRejection();
        }
    }

    public void close()
    {
        running = false;
        try
        {
            serverSocket.close();
        }
        catch (final IOException ignore)
        {
        }
        try
        {
            acceptThread.join(5_000);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
