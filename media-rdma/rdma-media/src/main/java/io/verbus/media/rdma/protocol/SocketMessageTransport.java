package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A {@link MessageTransport} over a blocking TCP socket with read timeouts (the control connection).
 * Used only by control threads: connection set-up, liveness of the socket and teardown, never the data path.
 */
public final class SocketMessageTransport implements MessageTransport
{
    /**
     * How often {@link #watch} re-checks whether the connection is still to be watched. Every way a watched
     * connection ends closes its socket (the peer's close or death, the owner's retire, the control's close), which
     * ends the wait at once, so this is a safety net, rare on purpose: on a host whose cores are given to spinning
     * threads, every wake-up of a control thread takes a core from one of them for a scheduler slice (at 50 ms, an
     * rdma/shm ping-pong's p50 went from about 2.4 us to 12.7 us in one run here). At 1 s each watching thread still
     * cost a spinner about 0.2 ms of CPU a second (the timeout is thrown as an exception, with its stack trace): the
     * demo's six control connections took 1.2 ms a second from its two spinning processes (perf sched, 2 CPUs).
     */
    public static final long WATCH_POLL_MS = 60_000;

    private final Socket socket;
    private final InputStream in;
    private final OutputStream out;
    private final String peer;
    private final byte[] bytes = new byte[HandshakeHeader.MAX_MESSAGE_LENGTH];
    private final UnsafeBuffer view = new UnsafeBuffer(bytes);
    private volatile boolean closed;

    public SocketMessageTransport(final Socket socket) throws IOException
    {
        this.socket = socket;
        socket.setTcpNoDelay(true);
        in = socket.getInputStream();
        out = socket.getOutputStream();
        peer = String.valueOf(socket.getRemoteSocketAddress());
    }

    public Socket socket()
    {
        return socket;
    }

    public void send(final DirectBuffer buffer, final int offset, final int length) throws HandshakeException
    {
        final byte[] frame = new byte[length];
        buffer.getBytes(offset, frame);
        try
        {
            out.write(frame);
            out.flush();
        }
        catch (final IOException ex)
        {
            throw new HandshakeException(HandshakeException.Reason.CLOSED, "send to " + peer + " failed: " + ex, ex);
        }
    }

    /**
     * Receives one whole message within {@code timeoutMs}: the timeout bounds the message, not each read, so a peer
     * that dribbles a byte at a time cannot hold the connection longer than that.
     */
    public int receive(final MutableDirectBuffer buffer, final long timeoutMs) throws HandshakeException
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(Math.max(1, timeoutMs));
        try
        {
            readFully(0, HandshakeHeader.LENGTH, deadlineNs);
            final int length = HandshakeHeader.length(view, 0);
            if (length < HandshakeHeader.LENGTH || length > HandshakeHeader.MAX_MESSAGE_LENGTH)
            {
                throw new HandshakeException(HandshakeException.Reason.MALFORMED, "message length " + length +
                    " from " + peer + " not in [" + HandshakeHeader.LENGTH + ", " +
                    HandshakeHeader.MAX_MESSAGE_LENGTH + "]");
            }
            readFully(HandshakeHeader.LENGTH, length - HandshakeHeader.LENGTH, deadlineNs);
            buffer.putBytes(0, bytes, 0, length);
            return length;
        }
        catch (final SocketTimeoutException ex)
        {
            throw new HandshakeException(HandshakeException.Reason.TIMEOUT, "no message from " + peer + " within " +
                timeoutMs + " ms", ex);
        }
        catch (final IOException ex)
        {
            throw new HandshakeException(HandshakeException.Reason.CLOSED, "receive from " + peer + " failed: " + ex,
                ex);
        }
    }

    /**
     * Wait for the peer to close or send anything (after the handshake nothing more is expected).
     *
     * @param timeoutMs how long to wait.
     * @return true when the connection ended (EOF, error or unexpected bytes), false on timeout.
     */
    public boolean awaitEnd(final long timeoutMs)
    {
        try
        {
            socket.setSoTimeout((int)Math.max(1, timeoutMs));
            final int read = in.read(bytes, 0, bytes.length);
            return true;
        }
        catch (final SocketTimeoutException ex)
        {
            return false;
        }
        catch (final IOException ex)
        {
            return true;
        }
    }

    /**
     * Watches an established connection from the thread that ran its handshake: blocks while {@code watching} holds
     * and runs {@code onEnd} when the peer closes the connection (or sends anything, see {@link #awaitEnd}).
     */
    public void watch(final BooleanSupplier watching, final Runnable onEnd)
    {
        while (watching.getAsBoolean())
        {
            if (awaitEnd(WATCH_POLL_MS))
            {
                onEnd.run();
            }
        }
    }

    private void readFully(final int offset, final int length, final long deadlineNs) throws IOException
    {
        int position = offset;
        final int end = offset + length;
        while (position < end)
        {
            final long remainingMs = TimeUnit.NANOSECONDS.toMillis(deadlineNs - System.nanoTime());
            if (remainingMs <= 0)
            {
                throw new SocketTimeoutException("message incomplete at its deadline");
            }
            socket.setSoTimeout((int)Math.min(Integer.MAX_VALUE, remainingMs));
            final int read = in.read(bytes, position, end - position);
            if (read < 0)
            {
                throw new EOFException("connection closed by " + peer);
            }
            position += read;
        }
    }

    public String peer()
    {
        return peer;
    }

    public boolean isClosed()
    {
        return closed;
    }

    public void close()
    {
        closed = true;
        try
        {
            socket.close();
        }
        catch (final IOException ignore)
        {
        }
    }
}
