package io.verbus.media.rdma;

import io.verbus.common.RateLimitedLog;
import io.verbus.common.SystemProperties;
import io.verbus.media.rdma.protocol.HandshakeException;
import io.verbus.media.rdma.protocol.HandshakeHeader;
import io.verbus.media.rdma.protocol.HandshakeValidator;
import io.verbus.media.rdma.protocol.HelloFlyweight;
import io.verbus.media.rdma.protocol.RejectFlyweight;
import io.verbus.media.rdma.protocol.SocketMessageTransport;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.SynchronousQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * One TCP control endpoint shared by every publication bound to the same {@code host:port}, as several streams
 * share one Aeron channel: it accepts connections, reads the HELLO and hands the connection to the publication
 * of the stream the HELLO names. A connection for no stream here, or whose first message is not a well-formed
 * HELLO, is rejected with a log line and gets nothing.
 * <p>
 * Under attack it stays bounded and keeps serving: at most {@link #maxPendingHandshakes} connections may be in
 * their handshake at once (beyond that a new one is closed at once: the subscriber retries with back-off), the
 * HELLO must arrive whole within {@link #HELLO_DEADLINE_MS_MAX} (or the channel timeout if shorter) and the whole
 * handshake within the HELLO deadline plus three channel timeouts, however slowly the bytes dribble; an accept that
 * fails (EMFILE: no file descriptor left) backs off instead of spinning; and every kind of line is rate-limited
 * ({@link RateLimitedLog}), with the number left out in the next one.
 */
final class ControlListener implements AutoCloseable
{
    /** Receives a connection whose HELLO names its stream; runs on one of the endpoint's connection threads. */
    interface Handler
    {
        /**
         * @param pending the connection's slot: call {@link PendingHandshake#finish()} once it is admitted; the
         *                endpoint finishes it when this method returns in any case.
         */
        void onConnection(SocketMessageTransport transport, byte[] hello, PendingHandshake pending);

        /**
         * The endpoint rejected a connection before it reached any publication (a bad first message, an unknown
         * stream, no free handshake slot): each publication on the endpoint counts it in its {@code rdma handshakes
         * rejected} counter, so the counters agree with the log.
         */
        default void onEndpointRejection()
        {
        }
    }

    /** Property: most connections in their handshake at once, per endpoint. */
    static final String MAX_PENDING_HANDSHAKES_PROP_NAME = "verbus.rdma.control.max.pending.handshakes";
    static final int MAX_PENDING_HANDSHAKES_DEFAULT = 64;
    /** A subscriber sends its HELLO as soon as it has connected: it gets at most this long to arrive whole. */
    static final long HELLO_DEADLINE_MS_MAX = 1000;
    /** How often the accept loop wakes to expire overdue handshakes while any is pending. */
    private static final long ACCEPT_POLL_MS = 100;
    /**
     * How often it wakes with no handshake pending, only to see whether it still runs (close() also closes the
     * socket, which ends the wait at once). Rare on purpose: on a host whose cores are given to spinning threads,
     * every wake-up of a control thread takes a core from one of them for a scheduler slice (at 1 s, about 0.2 ms of
     * CPU each time: the timeout is an exception with a stack trace).
     */
    private static final long IDLE_ACCEPT_POLL_MS = 60_000;
    private static final long ACCEPT_BACKOFF_MIN_MS = 10;
    private static final long ACCEPT_BACKOFF_MAX_MS = 1000;
    private static final long ACCEPT_THREAD_JOIN_MS = 5_000;
    /** A connection thread with no connection to serve ends after this long idle. */
    private static final long IDLE_CONNECTION_THREAD_KEEP_ALIVE_S = 30;

    private static final Map<String, ControlListener> LISTENERS = new HashMap<>();

    private final ServerSocket serverSocket;
    private final String key;
    private final long helloDeadlineMs;
    private final long handshakeDeadlineMs;
    /** Each stream's channel step timeout: its handshakes' budget once their HELLO named it. */
    private final Map<Integer, Long> stepTimeoutsMs = new ConcurrentHashMap<>();
    private final int maxPendingHandshakes;
    private final Map<Integer, Handler> handlers = new ConcurrentHashMap<>();
    private final Set<PendingHandshake> pending = ConcurrentHashMap.newKeySet();
    private final AtomicLong rejected = new AtomicLong();
    private final RateLimitedLog.ByKind rejectionLog =
        new RateLimitedLog.ByKind(PublisherControl.LOGGER, RateLimitedLog.DEFAULT_INTERVAL_NS);
    private final RateLimitedLog acceptErrorLog =
        new RateLimitedLog(PublisherControl.LOGGER, RateLimitedLog.DEFAULT_INTERVAL_NS);
    private final Thread acceptThread;
    private final ExecutorService connectionThreads;
    private volatile boolean running = true;

    private ControlListener(final String host, final int port, final long stepTimeoutMs)
    {
        this.helloDeadlineMs = Math.min(HELLO_DEADLINE_MS_MAX, stepTimeoutMs);
        this.handshakeDeadlineMs = helloDeadlineMs + 3 * stepTimeoutMs;
        this.maxPendingHandshakes =
            SystemProperties.intValue(MAX_PENDING_HANDSHAKES_PROP_NAME, MAX_PENDING_HANDSHAKES_DEFAULT);
        if (maxPendingHandshakes < 1)
        {
            throw new IllegalArgumentException(MAX_PENDING_HANDSHAKES_PROP_NAME + " must be at least 1: " +
                maxPendingHandshakes);
        }
        try
        {
            serverSocket = new ServerSocket();
            serverSocket.setReuseAddress(true);
            serverSocket.bind(new InetSocketAddress(host, port), 64);
            serverSocket.setSoTimeout((int)ACCEPT_POLL_MS);
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("rdma channel: cannot listen on endpoint " + host + ":" + port + ": " +
                ex.getMessage(), ex);
        }
        key = key(host, serverSocket.getLocalPort());
        // Reused, not one per connection: under a flood of hostile connections, creating and ending a platform thread
        // for each was most of what one cost the publisher. A thread is started only when none is idle, so there are
        // never more than the most connections served at once in the last 30 s (each bounded by the pending
        // handshakes plus the admitted subscribers).
        connectionThreads = new ThreadPoolExecutor(0, Integer.MAX_VALUE, IDLE_CONNECTION_THREAD_KEEP_ALIVE_S,
            TimeUnit.SECONDS, new SynchronousQueue<>(),
            Thread.ofPlatform().daemon().name("verbus-rdma-connection-" + port() + "-", 0).factory());
        acceptThread = Thread.ofPlatform().daemon().name("verbus-rdma-endpoint-" + serverSocket.getLocalPort())
            .unstarted(this::acceptLoop);
        // Resolve ControlThreads now: the accept loop calls it when accept fails for want of file descriptors, when
        // its class could no longer be loaded (that opens a file) and a failed resolution would stay failed for good.
        ControlThreads.sleep(0);
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
        final String host, final int port, final int streamId, final long stepTimeoutMs, final Handler handler)
    {
        ControlListener listener = 0 == port ? null : LISTENERS.get(key(host, port));
        final boolean created = null == listener;
        if (created)
        {
            listener = new ControlListener(host, port, stepTimeoutMs);
            LISTENERS.put(listener.key, listener);
        }
        if (null != listener.handlers.putIfAbsent(streamId, handler))
        {
            throw new IllegalArgumentException("rdma channel: endpoint " + listener.key +
                " already carries a publication on stream " + streamId + " (one publication per stream per endpoint)");
        }
        listener.stepTimeoutsMs.put(streamId, stepTimeoutMs);
        return listener;
    }

    /** Detach a stream; the last one closes the endpoint. */
    static synchronized void unregister(final ControlListener listener, final int streamId)
    {
        listener.handlers.remove(streamId);
        listener.stepTimeoutsMs.remove(streamId);
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

    /** @return connections refused before reaching any publication (bad first message, unknown stream, no slot). */
    long rejectedHandshakes()
    {
        return rejected.get();
    }

    /**
     * Logs a rejection, rate-limited per kind so that a flood of one kind cannot hide another or fill the disk; the
     * caller has counted it.
     */
    void logRejection(final String kind, final String message)
    {
        rejectionLog.log(kind, System.Logger.Level.WARNING, message);
    }

    private void acceptLoop()
    {
        long backoffMs = 0;
        while (running)
        {
            expireOverdueHandshakes();
            final Socket socket;
            try
            {
                serverSocket.setSoTimeout((int)(pending.isEmpty() ? IDLE_ACCEPT_POLL_MS : ACCEPT_POLL_MS));
                socket = serverSocket.accept();
                backoffMs = 0;
            }
            catch (final SocketTimeoutException ignore)
            {
                continue; // check running and deadlines
            }
            catch (final IOException ex)
            {
                if (running)
                {
                    // EMFILE and the like: the connection stays in the backlog and the next accept fails alike, so
                    // back off rather than spin (one core) and log (gigabytes) in a tight loop.
                    backoffMs = Math.min(ACCEPT_BACKOFF_MAX_MS, Math.max(ACCEPT_BACKOFF_MIN_MS, backoffMs * 2));
                    acceptErrorLog.log(System.Logger.Level.WARNING, "rdma endpoint " + key + ": accept failed: " + ex +
                        "; backing off up to " + ACCEPT_BACKOFF_MAX_MS + " ms");
                    ControlThreads.sleep(backoffMs);
                }
                continue;
            }
            admit(socket);
        }
    }

    private void admit(final Socket socket)
    {
        if (pending.size() >= maxPendingHandshakes)
        {
            // Full of handshakes in progress, most likely slow or silent clients: the oldest makes room (its own
            // thread reports it, as EVICTED). A real subscriber completes its handshake in milliseconds, so slow
            // or stalled connections no longer keep it out for their whole deadline, as refusing newcomers did
            // (about 10 s in an attacker's check). Never one whose peer proved the secret (see
            // PendingHandshake.markAuthenticated): a flood of bare connections would otherwise evict admitted ones.
            evictOldest();
        }
        if (pending.size() >= 2 * maxPendingHandshakes)
        {
            // Evicted handshakes whose threads have not yet let go, on top of a full table: refuse this one at
            // once, which bounds the threads serving handshakes.
            final String peer = String.valueOf(socket.getRemoteSocketAddress());
            ControlThreads.closeQuietly(socket);
            onRejected("TOO_MANY_PENDING", "rdma endpoint " + key + ": refused connection from " + peer + ": " +
                2 * maxPendingHandshakes + " handshakes in progress or closing (" + MAX_PENDING_HANDSHAKES_PROP_NAME +
                "); nothing registered for it");
            return;
        }
        final PendingHandshake handshake =
            new PendingHandshake(socket, System.nanoTime(), handshakeDeadlineMs, pending);
        // A platform thread (an idle one of the endpoint's, else a new one), not a virtual one: a virtual thread's
        // first blocking socket read initialises the JDK's poller, which needs file descriptors; failing that once
        // (EMFILE, exactly when under attack) breaks every later virtual-thread read in the process for good. Busy
        // threads are bounded by the pending handshakes plus the admitted connections (a publication's subscribers).
        try
        {
            connectionThreads.execute(() -> dispatch(socket, handshake));
        }
        catch (final RejectedExecutionException ex)
        {
            // closing: nobody will serve it
            handshake.finish();
            ControlThreads.closeQuietly(socket);
        }
    }

    /** @return true when the oldest handshake not yet authenticated was closed to make room. */
    private boolean evictOldest()
    {
        PendingHandshake oldest = null;
        for (final PendingHandshake handshake : pending)
        {
            if (handshake.isEvictable() && (null == oldest || handshake.deadlineNs() - oldest.deadlineNs() < 0))
            {
                oldest = handshake;
            }
        }
        return null != oldest && oldest.evict();
    }

    private void expireOverdueHandshakes()
    {
        if (pending.isEmpty())
        {
            return;
        }
        final long nowNs = System.nanoTime();
        for (final PendingHandshake handshake : pending)
        {
            handshake.expireIfDue(nowNs);
        }
    }

    private void dispatch(final Socket socket, final PendingHandshake handshake)
    {
        SocketMessageTransport transport = null;
        try
        {
            transport = new SocketMessageTransport(socket);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[HandshakeHeader.MAX_MESSAGE_LENGTH]);
            final int length = transport.receive(buffer, helloDeadlineMs);
            HandshakeValidator.validateHeader(buffer, 0, length, HandshakeHeader.HELLO_TYPE);
            if (HandshakeHeader.HELLO_TYPE != HandshakeHeader.type(buffer, 0))
            {
                throw new HandshakeException(HandshakeException.Reason.MALFORMED, "a connection must start with HELLO");
            }
            final int streamId = new HelloFlyweight().wrap(buffer, 0).streamId();
            final Handler handler = handlers.get(streamId);
            if (null == handler)
            {
                // Not which streams it does carry: the peer has proved nothing yet, and each stream id fetches a
                // CHALLENGE that tells its session, initial term id and term length.
                throw new HandshakeException(HandshakeException.Reason.STREAM_MISMATCH,
                    "HELLO.streamId=" + streamId + ": no publication of that stream on this endpoint");
            }
            final Long stepTimeoutMs = stepTimeoutsMs.get(streamId);
            if (null != stepTimeoutMs)
            {
                handshake.budget(helloDeadlineMs + 3 * stepTimeoutMs);
            }
            final byte[] hello = new byte[length];
            buffer.getBytes(0, hello);
            final SocketMessageTransport owned = transport;
            transport = null; // the publication owns it now
            handler.onConnection(owned, hello, handshake);
        }
        catch (final HandshakeException ex)
        {
            onRejected(ex.reason().name(), "rdma endpoint " + key + ": rejected handshake from " +
                socket.getRemoteSocketAddress() + ": " + describe(ex, handshake) + "; nothing registered for it");
            if (null != transport && ex.reason() != HandshakeException.Reason.CLOSED && !handshake.isExpired() &&
                !handshake.isEvicted())
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
        catch (final IOException | RuntimeException | LinkageError | InternalError ex)
        {
            // Whatever went wrong (the JDK's own classes can fail to initialise without file descriptors), it is one
            // rejected connection, counted and logged at a bounded rate, never a stack trace per connection.
            onRejected("FAILED", "rdma endpoint " + key + ": rejected connection from " +
                socket.getRemoteSocketAddress() + ": " + ex + "; nothing registered for it");
        }
        finally
        {
            handshake.finish();
            if (null != transport)
            {
                transport.close();
            }
        }
    }

    /** @return the failure, or that the endpoint's deadline closed the connection if that is what happened. */
    String describe(final HandshakeException ex, final PendingHandshake handshake)
    {
        if (handshake.isEvicted())
        {
            return "EVICTED: the oldest of " + maxPendingHandshakes + " handshakes in progress when another " +
                "connection came";
        }
        return handshake.isExpired() ?
            "TIMEOUT: the handshake did not complete within " + handshake.budgetMs() + " ms" : ex.getMessage();
    }

    private void onRejected(final String kind, final String message)
    {
        rejected.incrementAndGet();
        for (final Handler handler : handlers.values())
        {
            handler.onEndpointRejection();
        }
        logRejection(kind, message);
    }

    public void close()
    {
        running = false;
        ControlThreads.closeQuietly(serverSocket);
        ControlThreads.join(acceptThread, ACCEPT_THREAD_JOIN_MS);
        connectionThreads.shutdown(); // the connections still being served finish; idle threads end now
        rejectionLog.flush(System.Logger.Level.WARNING, "rdma endpoint " + key + " rejections");
        acceptErrorLog.flush(System.Logger.Level.WARNING, "rdma endpoint " + key + " accept failures");
    }
}
