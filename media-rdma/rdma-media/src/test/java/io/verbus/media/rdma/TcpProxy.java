package io.verbus.media.rdma;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/** A TCP forwarder a test can cut: every accepted connection is piped to the target until {@link #dropAll()}. */
final class TcpProxy implements AutoCloseable
{
    private final ServerSocket serverSocket;
    private volatile InetSocketAddress target;
    private final Set<Socket> sockets = ConcurrentHashMap.newKeySet();
    private final Thread acceptor;
    private volatile boolean running = true;
    /** When positive: reset the client side once this many bytes came back from the target on a connection. */
    private volatile int resetClientAfterTargetBytes;

    TcpProxy(final InetSocketAddress target) throws IOException
    {
        this.target = target;
        serverSocket = new ServerSocket(0, 16, java.net.InetAddress.getLoopbackAddress());
        acceptor = Thread.ofPlatform().daemon().name("tcp-proxy").start(this::acceptLoop);
    }

    /**
     * Every connection from now on: once {@code bytes} have come back from the target, the proxy resets the client's
     * side (SO_LINGER 0), so the client's next write fails, as when the target's host dies right after answering.
     */
    void resetClientAfterTargetBytes(final int bytes)
    {
        this.resetClientAfterTargetBytes = bytes;
    }

    /** Connections accepted from now on go to {@code target} (say, a publisher restarted elsewhere). */
    void retarget(final InetSocketAddress target)
    {
        this.target = target;
    }

    int port()
    {
        return serverSocket.getLocalPort();
    }

    private void acceptLoop()
    {
        while (running)
        {
            try
            {
                final Socket client = serverSocket.accept();
                final Socket server = new Socket();
                server.connect(target, 2000);
                sockets.add(client);
                sockets.add(server);
                Thread.ofVirtual().start(() -> pump(client, server, 0));
                Thread.ofVirtual().start(() -> pump(server, client, resetClientAfterTargetBytes));
            }
            catch (final IOException ex)
            {
                // closed or target refused: keep accepting while running
            }
        }
    }

    private void pump(final Socket from, final Socket to, final int resetAfterBytes)
    {
        final byte[] bytes = new byte[4096];
        long pumped = 0;
        try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream())
        {
            int read;
            while ((read = in.read(bytes)) > 0)
            {
                out.write(bytes, 0, read);
                out.flush();
                pumped += read;
                if (resetAfterBytes > 0 && pumped >= resetAfterBytes)
                {
                    to.setSoLinger(true, 0);
                    break;
                }
            }
        }
        catch (final IOException ignore)
        {
        }
        finally
        {
            closeQuietly(from);
            closeQuietly(to);
        }
    }

    void dropAll()
    {
        for (final Socket socket : sockets)
        {
            closeQuietly(socket);
        }
        sockets.clear();
    }

    private static void closeQuietly(final Socket socket)
    {
        try
        {
            socket.close();
        }
        catch (final IOException ignore)
        {
        }
    }

    public void close()
    {
        running = false;
        closeQuietly(new Socket());
        try
        {
            serverSocket.close();
        }
        catch (final IOException ignore)
        {
        }
        dropAll();
    }
}
