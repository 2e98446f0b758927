package io.verbus.fabric.tcp;

import io.verbus.common.BoundedWait;
import io.verbus.common.RateLimitedLog;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.QueuePairConnectionInfo;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Consumer;

/**
 * The software NIC of one tcp device: a single agent that accepts and dials connections, reads hellos, drains
 * closed connections, and makes progress on the device's QPs as a fallback: each QP's data path is run by whichever
 * thread holds its engine (see {@link TcpQueuePair}), normally the application's posting and polling threads, and
 * this agent steps in for a QP no application thread has progressed lately (or always, when it is
 * {@code eager}: it has a CPU of its own to spin on). Other threads talk to it through its command queue.
 */
final class TcpNic implements Agent
{
    private final TcpDevice device;
    private final ServerSocketChannel server;
    private final Selector acceptSelector;
    private final FaultInjection faults;
    private final long connectTimeoutNs;
    private final boolean eager;
    private volatile Thread thread;
    private final ManyToOneConcurrentArrayQueue<Runnable> commands = new ManyToOneConcurrentArrayQueue<>(1024);
    private final Consumer<Runnable> runCommand = Runnable::run;
    private final List<TcpConnection> connections = new ArrayList<>();
    private TcpQueuePair[] queuePairs = new TcpQueuePair[0];
    private static final long ACCEPT_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * Most accepted connections held waiting for their hello: each holds a socket and two small buffers
     * ({@link TcpConnection#HELLO_BUFFER_BYTES}; the streaming ones only once its hello is proven) until its hello or
     * the connect timeout, and anyone who reaches the port can open them, so past this the oldest waiting one is
     * closed (a Verbus dialer writes its hello as soon as it connects, so only a stalled connection is ever that old).
     */
    static final int MAX_CONNECTIONS_AWAITING_HELLO = 64;
    /** A flood of bad hellos costs one log line per interval (with the count since the last), not one per hello. */
    static final long REFUSAL_LOG_INTERVAL_NS = RateLimitedLog.DEFAULT_INTERVAL_NS;
    private static final System.Logger LOGGER = System.getLogger(TcpNic.class.getName());

    private int seenConnectionDrops;
    private long nextAcceptNs;
    private boolean dead;
    /** Hellos refused since the device opened; written by the NIC thread only, read by tests. */
    private volatile long refusedHellos;
    private final RateLimitedLog refusalLog = new RateLimitedLog(LOGGER, REFUSAL_LOG_INTERVAL_NS);

    /**
     * @param eager true when the NIC thread busy-spins on a CPU of its own: it then makes progress on every QP on
     *              every duty cycle instead of only on those the application threads have left alone.
     */
    TcpNic(final TcpDevice device, final ServerSocketChannel server, final FabricContext context, final boolean eager)
    {
        this.eager = eager;
        this.device = device;
        this.server = server;
        try
        {
            this.acceptSelector = Selector.open();
            server.register(acceptSelector, SelectionKey.OP_ACCEPT);
        }
        catch (final IOException ex)
        {
            throw new io.verbus.fabric.FabricException("cannot watch the tcp listener: " + ex, ex);
        }
        this.faults = context.faultInjection();
        this.connectTimeoutNs = context.tcpConnectTimeoutNs();
        this.seenConnectionDrops = faults.connectionDropCount();
    }

    /**
     * @return connections closed because their hello was not one of this NIC's QPs' peers (bad magic or version,
     * unknown QP, wrong QPN or PSN, or no complete hello within the connect timeout).
     */
    long refusedHelloCount()
    {
        return refusedHellos;
    }

    boolean isEager()
    {
        return eager;
    }

    @Override
    public void onStart()
    {
        thread = Thread.currentThread();
    }

    @Override
    public String roleName()
    {
        return "verbus-tcp-nic-" + device.attributes().name();
    }

    void addQueuePair(final TcpQueuePair qp)
    {
        offer(() ->
        {
            final TcpQueuePair[] updated = java.util.Arrays.copyOf(queuePairs, queuePairs.length + 1);
            updated[queuePairs.length] = qp;
            queuePairs = updated;
        });
    }

    void removeQueuePair(final TcpQueuePair qp)
    {
        final CountDownLatch done = new CountDownLatch(1);
        offer(() ->
        {
            // Half-close after pending bytes: a reset could destroy responses the peer has not read yet. Under the
            // engine, so no other thread is using the connections; draining, they are this thread's again.
            final long nowNs = System.nanoTime();
            qp.lockForNic();
            try
            {
                if (null != qp.outbound)
                {
                    qp.outbound.closeGracefully(nowNs);
                }
                if (null != qp.inbound)
                {
                    qp.inbound.closeGracefully(nowNs);
                }
            }
            finally
            {
                qp.unlock();
            }
            final List<TcpQueuePair> kept = new ArrayList<>(List.of(queuePairs));
            kept.remove(qp);
            queuePairs = kept.toArray(new TcpQueuePair[0]);
            done.countDown();
        });
        // The QP's close frees what the NIC thread may still touch until this ran: an interrupt of the closing thread
        // does not cut the wait short (it is set again after).
        BoundedWait.await(done, TimeUnit.SECONDS.toNanos(2));
    }

    void requestDial(final TcpQueuePair qp)
    {
        offer(() -> dial(qp));
    }

    private void offer(final Runnable command)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
        while (!commands.offer(command))
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("tcp NIC command queue full for 2 s: is the NIC thread stuck?");
            }
            Thread.onSpinWait();
        }
        final Thread nicThread = thread;
        if (null != nicThread)
        {
            LockSupport.unpark(nicThread); // it may be parked for up to its longest idle park
        }
    }

    @Override
    public int doWork()
    {
        int work = commands.drain(runCommand);
        if (dead)
        {
            return work;
        }
        if (faults.isKilled())
        {
            die();
            return 1;
        }
        final int drops = faults.connectionDropCount();
        if (drops != seenConnectionDrops)
        {
            seenConnectionDrops = drops;
            for (final TcpConnection connection : new ArrayList<>(connections))
            {
                lose(connection);
            }
        }

        final long nowNs = System.nanoTime();
        if (nowNs - nextAcceptNs >= 0)
        {
            // accept() allocates even when nothing is pending: ask a selector first (allocation free when idle),
            // once a millisecond rather than every cycle.
            nextAcceptNs = nowNs + ACCEPT_INTERVAL_NS;
            work += accept(nowNs);
        }
        for (int i = 0; i < connections.size(); i++)
        {
            work += service(connections.get(i), nowNs);
        }
        for (final TcpQueuePair qp : queuePairs)
        {
            work += qp.nicDuty(nowNs, eager);
        }
        connections.removeIf(TcpConnection::isClosed);
        return work;
    }

    private int accept(final long nowNs)
    {
        int work = 0;
        try
        {
            if (acceptSelector.selectNow() == 0)
            {
                return 0;
            }
            acceptSelector.selectedKeys().clear();
            SocketChannel channel;
            while (null != (channel = server.accept()))
            {
                channel.configureBlocking(false);
                channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
                final TcpConnection connection = new TcpConnection(channel, false, nowNs);
                connection.connected = true;
                final TcpConnection evicted = oldestAwaitingHelloWhenFull(connection);
                if (evicted == connection)
                {
                    work += refuse(connection, "too many connections waiting for a QP (at most " +
                        MAX_CONNECTIONS_AWAITING_HELLO + " are held), each with a hello that names one");
                    continue;
                }
                if (null != evicted)
                {
                    work += refuse(evicted, "too many connections without a hello (at most " +
                        MAX_CONNECTIONS_AWAITING_HELLO + " are held); closed the oldest");
                }
                connections.add(connection);
                work++;
            }
        }
        catch (final IOException ex)
        {
            // A failed accept leaves the listener usable; the dialer times out and its QP errs.
        }
        return work;
    }

    private void dial(final TcpQueuePair qp)
    {
        if (dead || qp.isClosed())
        {
            return;
        }
        qp.dialStartedNs = System.nanoTime();
        try
        {
            final SocketChannel channel = SocketChannel.open();
            channel.configureBlocking(false);
            channel.setOption(StandardSocketOptions.TCP_NODELAY, true);
            final TcpConnection connection = new TcpConnection(channel, true, System.nanoTime());
            connection.queuePair = qp;
            qp.outbound = connection;
            connections.add(connection);
            if (channel.connect(qp.remoteNic))
            {
                onConnected(connection);
            }
        }
        catch (final IOException ex)
        {
            qp.headFailure = io.verbus.fabric.WorkCompletionStatus.RETRY_EXC_ERR;
            qp.enterError();
        }
    }

    /**
     * When {@link #MAX_CONNECTIONS_AWAITING_HELLO} accepted connections wait for their hello to be taken, the one to
     * close for a new one: the oldest whose hello (read now, if it has arrived) does not name a QP of this NIC with
     * that QP's own PSN. A legitimate dialer's hello can wait here (it may arrive before its QP is ready to receive),
     * and a stranger who cannot know the PSN must not be able to push it out by opening connections.
     *
     * @param incoming the connection just accepted, returned when every waiting one carries such a hello.
     * @return the connection to close, or null while there is room (control path: one walk of a short list).
     */
    private TcpConnection oldestAwaitingHelloWhenFull(final TcpConnection incoming)
    {
        int awaiting = 0;
        for (int i = 0; i < connections.size(); i++)
        {
            if (isAwaitingHello(connections.get(i)))
            {
                awaiting++;
            }
        }
        if (awaiting < MAX_CONNECTIONS_AWAITING_HELLO)
        {
            return null;
        }
        TcpConnection oldest = null;
        for (int i = 0; i < connections.size(); i++)
        {
            final TcpConnection connection = connections.get(i);
            if (isAwaitingHello(connection) && (null == oldest || connection.openedNs - oldest.openedNs < 0) &&
                !carriesHelloForALocalQp(connection))
            {
                oldest = connection;
            }
        }
        return null == oldest ? incoming : oldest;
    }

    /**
     * Reads what has arrived on a waiting connection and tells whether it starts with a whole hello naming a QP of
     * this NIC and that QP's PSN (what only the QP's peer learned in the handshake). Nothing is taken from the buffer.
     */
    private boolean carriesHelloForALocalQp(final TcpConnection connection)
    {
        try
        {
            if (connection.read() < 0)
            {
                return false;
            }
        }
        catch (final IOException ex)
        {
            return false;
        }
        final ByteBuffer in = connection.startReading();
        try
        {
            final int start = in.position();
            if (in.remaining() < TcpWire.HELLO_LENGTH || in.getInt(start + TcpWire.HELLO_MAGIC_OFFSET) != TcpWire.MAGIC)
            {
                return false;
            }
            final TcpQueuePair target = findDrainingCommands(in.getInt(start + TcpWire.HELLO_TARGET_QPN_OFFSET));
            return null != target && in.getInt(start + TcpWire.HELLO_TARGET_PSN_OFFSET) == target.localPsn();
        }
        finally
        {
            connection.doneReading(); // only absolute reads above: every byte stays for processHello
        }
    }

    private static boolean isAwaitingHello(final TcpConnection connection)
    {
        return !connection.dialed && !connection.established && !connection.isClosed() && !connection.isDraining();
    }

    private void onConnected(final TcpConnection connection) throws IOException
    {
        connection.connected = true;
        final int offset = connection.reserve(TcpWire.HELLO_LENGTH);
        final ByteBuffer out = connection.writeBuffer();
        out.putInt(offset + TcpWire.HELLO_MAGIC_OFFSET, TcpWire.MAGIC);
        out.putInt(offset + TcpWire.HELLO_VERSION_OFFSET, TcpWire.VERSION);
        final TcpQueuePair qp = connection.queuePair;
        final QueuePairConnectionInfo remote = qp.remoteConnectionInfo();
        out.putInt(offset + TcpWire.HELLO_TARGET_QPN_OFFSET, remote.qpNumber());
        out.putInt(offset + TcpWire.HELLO_SOURCE_QPN_OFFSET, qp.qpNumber());
        out.putInt(offset + TcpWire.HELLO_TARGET_PSN_OFFSET, remote.psn());
        out.putInt(offset + TcpWire.HELLO_SOURCE_PSN_OFFSET, qp.localPsn());
        connection.helloDone = true;
        connection.flush();
    }

    /**
     * The connections this thread owns: connecting, waiting for their hello, draining. An established one belongs
     * to its QP's engine.
     */
    private int service(final TcpConnection connection, final long nowNs)
    {
        if (connection.isClosed())
        {
            return 0;
        }
        if (connection.isDraining())
        {
            connection.drain(nowNs);
            return 0;
        }
        if (connection.established)
        {
            return 0;
        }
        try
        {
            if (!connection.connected)
            {
                if (connection.channel.finishConnect())
                {
                    onConnected(connection); // writes the hello; established only once it is answered
                    return 1;
                }
                return 0;
            }
            if (connection.dialed && connection.hasPendingWrites())
            {
                // The rest of the hello, and nothing else: nothing else is written before the answer.
                connection.flush();
            }
            final int read = connection.read();
            if (read < 0)
            {
                lose(connection);
                return 1;
            }
            return (connection.dialed ? processHelloAnswer(connection) : processHello(connection, nowNs)) +
                (read > 0 ? 1 : 0);
        }
        catch (final IOException ex)
        {
            lose(connection);
            return 1;
        }
    }

    /**
     * The first bytes of an accepted connection: which QP the peer calls, and proof that it is that QP's peer (see
     * {@link TcpWire#HELLO_TARGET_PSN_OFFSET}). Requests after it stay in the read buffer for the QP's engine, which
     * owns the connection once it is established. A hello that does not prove it closes this connection only: the
     * QP's own connections are untouched.
     */
    private int processHello(final TcpConnection connection, final long nowNs)
    {
        final ByteBuffer in = connection.startReading();
        final TcpQueuePair qp;
        final int sourceQpn;
        final int sourcePsn;
        try
        {
            final int start = in.position();
            if (in.remaining() >= TcpWire.HELLO_PREAMBLE_LENGTH &&
                (in.getInt(start + TcpWire.HELLO_MAGIC_OFFSET) != TcpWire.MAGIC ||
                in.getInt(start + TcpWire.HELLO_VERSION_OFFSET) != TcpWire.VERSION))
            {
                return refuse(connection, "not a tcp NIC hello of wire version " + TcpWire.VERSION);
            }
            final boolean timedOut = nowNs - connection.openedNs > connectTimeoutNs;
            if (in.remaining() < TcpWire.HELLO_LENGTH)
            {
                return timedOut ? refuse(connection, "no whole hello within the connect timeout") : 0;
            }
            final TcpQueuePair target = findDrainingCommands(in.getInt(start + TcpWire.HELLO_TARGET_QPN_OFFSET));
            // Unknown QP, or one that does not know its peer yet (the handshake that tells it may still be under
            // way: the dialer reached RTS before this side reached RTR): wait, then check.
            final QueuePairConnectionInfo remote = null == target ? null : target.remoteConnectionInfo();
            if (null == remote)
            {
                return timedOut ? refuse(connection, null == target ?
                    "no such QP within the connect timeout" : "QP not connected within the connect timeout") : 0;
            }
            sourceQpn = in.getInt(start + TcpWire.HELLO_SOURCE_QPN_OFFSET);
            sourcePsn = in.getInt(start + TcpWire.HELLO_SOURCE_PSN_OFFSET);
            if (in.getInt(start + TcpWire.HELLO_TARGET_PSN_OFFSET) != target.localPsn() ||
                sourceQpn != remote.qpNumber() || sourcePsn != remote.psn())
            {
                return refuse(connection, "QPNs and PSNs do not match a connected QP");
            }
            in.position(start + TcpWire.HELLO_LENGTH);
            qp = target;
        }
        finally
        {
            if (!connection.isClosed())
            {
                connection.doneReading();
            }
        }

        // Answer the hello while this thread still owns the connection: the answer is the first thing on the wire
        // back, before any response the engine writes once the connection is established.
        try
        {
            connection.growToStreamingBuffers(); // proven: now it may hold what a QP's traffic needs
            acknowledgeHello(connection, sourceQpn, sourcePsn, qp.qpNumber(), qp.localPsn());
            connection.flush(); // what the socket does not take stays in order; the engine flushes it with responses
        }
        catch (final IOException ex)
        {
            closeConnection(connection);
            return 1;
        }

        // Hand it to the QP's engine, under the engine: its holder may be using the connection this one replaces
        // (the same peer QP dialing again: it proved the same QPNs and PSNs).
        qp.lockForNic();
        try
        {
            if (null != qp.inbound && qp.inbound != connection)
            {
                closeConnection(qp.inbound);
            }
            connection.queuePair = qp;
            connection.helloDone = true;
            qp.inbound = connection;
            connection.established = true;
        }
        finally
        {
            qp.unlock();
        }
        return 1;
    }

    /**
     * The first bytes back on a dialed connection: the responder's answer to its hello, the same frame with targets
     * and sources swapped. Until it arrives the connection stays this thread's and nothing but the hello was written
     * to it; then it is established and handed to the QP's engine. Anything else (a port that is no Verbus NIC,
     * another QP, a QP that does not hold this one's PSN) and the connection is lost, so the QP errs.
     */
    private int processHelloAnswer(final TcpConnection connection)
    {
        final TcpQueuePair qp = connection.queuePair;
        final ByteBuffer in = connection.startReading();
        try
        {
            if (in.remaining() < TcpWire.HELLO_LENGTH)
            {
                return 0;
            }
            final int start = in.position();
            final QueuePairConnectionInfo remote = qp.remoteConnectionInfo();
            if (in.getInt(start + TcpWire.HELLO_MAGIC_OFFSET) != TcpWire.MAGIC ||
                in.getInt(start + TcpWire.HELLO_VERSION_OFFSET) != TcpWire.VERSION ||
                in.getInt(start + TcpWire.HELLO_TARGET_QPN_OFFSET) != qp.qpNumber() ||
                in.getInt(start + TcpWire.HELLO_SOURCE_QPN_OFFSET) != remote.qpNumber() ||
                in.getInt(start + TcpWire.HELLO_TARGET_PSN_OFFSET) != qp.localPsn() ||
                in.getInt(start + TcpWire.HELLO_SOURCE_PSN_OFFSET) != remote.psn())
            {
                // Not the Verbus NIC the peer announced: drop it, the QP errs, nothing was sent there but the hello.
                lose(connection);
                return 1;
            }
            in.position(start + TcpWire.HELLO_LENGTH);
        }
        finally
        {
            if (!connection.isClosed())
            {
                connection.doneReading();
            }
        }
        connection.helloAcknowledged = true;
        connection.established = true; // last: the volatile write hands the connection to the QP's engine
        return 1;
    }

    private static void acknowledgeHello(
        final TcpConnection connection,
        final int dialerQpn,
        final int dialerPsn,
        final int responderQpn,
        final int responderPsn) throws IOException
    {
        final int offset = connection.reserve(TcpWire.HELLO_LENGTH);
        if (offset < 0)
        {
            throw new IOException("no room for the hello answer on a new connection");
        }
        final ByteBuffer out = connection.writeBuffer();
        out.putInt(offset + TcpWire.HELLO_MAGIC_OFFSET, TcpWire.MAGIC);
        out.putInt(offset + TcpWire.HELLO_VERSION_OFFSET, TcpWire.VERSION);
        out.putInt(offset + TcpWire.HELLO_TARGET_QPN_OFFSET, dialerQpn);
        out.putInt(offset + TcpWire.HELLO_SOURCE_QPN_OFFSET, responderQpn);
        out.putInt(offset + TcpWire.HELLO_TARGET_PSN_OFFSET, dialerPsn);
        out.putInt(offset + TcpWire.HELLO_SOURCE_PSN_OFFSET, responderPsn);
    }

    /**
     * Close a connection whose hello failed (it never reached a QP, so no QP is touched), count it, and log it through
     * a {@link RateLimitedLog}: at most one WARNING per {@link #REFUSAL_LOG_INTERVAL_NS}, the next saying how many
     * were left out, since anyone who reaches the port can send bad hellos as fast as they like.
     *
     * @return work done: 1.
     */
    private int refuse(final TcpConnection connection, final String reason)
    {
        refusedHellos = refusedHellos + 1; // single writer: this thread
        refusalLog.log(System.Logger.Level.WARNING, "verbus tcp NIC " + device.attributes().name() +
            ": refused a connection from " + remoteAddressOf(connection) + ": " + reason);
        closeConnection(connection);
        return 1;
    }

    private static String remoteAddressOf(final TcpConnection connection)
    {
        try
        {
            return String.valueOf(connection.channel.getRemoteAddress());
        }
        catch (final IOException ex)
        {
            return "an unknown address";
        }
    }

    /** A hello's target: a QP may be created but its add command not yet drained, so look again after draining. */
    private TcpQueuePair findDrainingCommands(final int qpNumber)
    {
        final TcpQueuePair qp = find(qpNumber);
        if (null != qp)
        {
            return qp;
        }
        commands.drain(runCommand);
        return find(qpNumber);
    }

    private TcpQueuePair find(final int qpNumber)
    {
        for (final TcpQueuePair qp : queuePairs)
        {
            if (qp.qpNumber() == qpNumber && !qp.isClosed())
            {
                return qp;
            }
        }
        return null;
    }

    private void lose(final TcpConnection connection)
    {
        if (null == connection || connection.isClosed())
        {
            return;
        }
        final TcpQueuePair qp = connection.queuePair;
        if (null == qp)
        {
            closeConnection(connection);
            return;
        }
        qp.lockForNic();
        try
        {
            qp.lose(connection);
        }
        finally
        {
            qp.unlock();
        }
    }

    private void closeConnection(final TcpConnection connection)
    {
        if (null != connection)
        {
            connection.close();
        }
    }

    private void die()
    {
        dead = true;
        for (final TcpConnection connection : connections)
        {
            connection.close();
        }
        connections.clear();
        try
        {
            acceptSelector.close();
            server.close();
        }
        catch (final IOException ignore)
        {
            // dying anyway
        }
    }

    @Override
    public void onClose()
    {
        for (final TcpConnection connection : connections)
        {
            connection.close();
        }
        connections.clear();
        try
        {
            acceptSelector.close();
            server.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
    }

    static InetSocketAddress bind(final ServerSocketChannel server, final java.net.InetAddress address)
        throws IOException
    {
        server.bind(new InetSocketAddress(address, 0));
        server.configureBlocking(false);
        return (InetSocketAddress)server.getLocalAddress();
    }
}
