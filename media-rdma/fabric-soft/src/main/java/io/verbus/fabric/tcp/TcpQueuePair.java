package io.verbus.fabric.tcp;

import io.verbus.common.VarHandles;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.IpGid;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.soft.SoftCompletionQueue;
import io.verbus.fabric.soft.SoftMemoryRegion;
import io.verbus.fabric.soft.SoftProtectionDomain;
import io.verbus.fabric.soft.SoftQueuePair;
import io.verbus.fabric.soft.SoftRegionTable;
import io.verbus.fabric.soft.SoftSharedReceiveQueue;
import org.agrona.ErrorHandler;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * An RC QP of the tcp provider: its identity and state, the engine lock, and the entry points that run the engine.
 * <p>
 * <b>The engine.</b> Everything after posting (framing and writing WRs, reading and applying the peer's requests,
 * acknowledging them, completing WRs on acknowledgement, timers, flushing on ERR) is done by whichever thread holds
 * this QP's engine lock, a CAS on one int that nobody ever waits for:
 * <ul>
 *     <li>the posting thread, in {@link #postSend}: it frames the new WRs and writes them to the socket itself
 *     (non-blocking), so the common path has no hand-off;</li>
 *     <li>a thread polling one of the QP's CQs, or calling {@link #progress()}: it reads the sockets, applies and
 *     acknowledges what arrived, completes WRs and runs the timers, so on a small host the application's own
 *     polling thread is the receiving NIC;</li>
 *     <li>the device's NIC thread, as the fallback when no application thread has made progress for the fallback
 *     grace ({@code tcpFallbackGraceNs}, several scheduler ticks: an application thread the scheduler preempted has
 *     not stopped polling, and a NIC thread that took the engine meanwhile and is preempted in turn would lock it out
 *     for a tick or more), or always, when the NIC thread has a CPU of its own to spin on.</li>
 * </ul>
 * A thread that finds the engine taken skips: the holder looks for new WRs after releasing it (each side writes its
 * own flag before reading the other's, with full fences), so a post is never stranded.
 * <p>
 * <b>The engine's parts</b>, each run only by the engine's holder: {@link TcpRequester} (this QP's WRs: framing,
 * responses, completions, timers), {@link TcpWriteCoalescer} (when the framed WRs are written: at once, or held
 * while the poster streams) and {@link TcpResponder} (the peer's requests: applying, receives, RNR,
 * acknowledgements). This class keeps what is the QP's as a whole: its connections, the engine's pass, connection
 * loss and the error flush.
 * <p>
 * <b>Reads while sending.</b> While the application posts between its polls, those polls read the sockets only
 * every {@link #SENDING_POLLS_PER_READ}th time, so a sender does not pay two reads per post.
 */
final class TcpQueuePair extends SoftQueuePair implements SoftCompletionQueue.Progress
{
    // What taking one frame (a request or a response) came to.
    static final int CONSUMED = 0;
    static final int HOLD = 1;
    static final int DROP = 2;
    static final int DISCARD = 3;

    /** No time: no such event yet, or none pending. */
    static final long NONE = Long.MIN_VALUE;

    /**
     * While the application posts on this QP between its polls (it is sending: a stream, an echo, frames held to
     * coalesce), its polls read the QP's sockets only every this many such polls and at most every
     * {@link #STREAM_READ_INTERVAL_NS}; a poll with no post since the last one (the application waits) reads every
     * time. Counted, not timed, so that a thread slowed down by a busy host does not read on every post.
     */
    static final int SENDING_POLLS_PER_READ = 16;
    /** See {@link #SENDING_POLLS_PER_READ}. */
    static final long STREAM_READ_INTERVAL_NS = TimeUnit.MICROSECONDS.toNanos(10);

    private static final VarHandle ENGINE = VarHandles.field(MethodHandles.lookup(), "engine", int.class);
    private static final VarHandle HELD_SENDS = VarHandles.field(MethodHandles.lookup(), "heldSends", boolean.class);
    private static final VarHandle LAST_APPLICATION_PROGRESS =
        VarHandles.field(MethodHandles.lookup(), "lastApplicationProgressNs", long.class);

    private final TcpNic nic;
    private final ErrorHandler errorHandler;
    /** The NIC thread leaves a QP to the application threads that made progress on it this recently. */
    private final long fallbackGraceNs;
    @SuppressWarnings("unused") private int engine;
    /** Set by the engine's holder as it releases it: see {@link #hasHeldSends()}. */
    @SuppressWarnings("unused") private boolean heldSends;
    @SuppressWarnings("unused") private long lastApplicationProgressNs;

    InetSocketAddress remoteNic;
    volatile TcpConnection outbound;
    volatile TcpConnection inbound;
    volatile long dialStartedNs = NONE;
    /** Status the head WR fails with when the QP errs for a reason that is not a completion (lost peer). */
    volatile WorkCompletionStatus headFailure;

    // Engine state from here on: only the engine lock's holder touches it.

    private final TcpRequester requester;
    private final TcpWriteCoalescer coalescer;
    private final TcpResponder responder;
    /** The application posted since its last progress pass on this QP. */
    private boolean postedSincePass;
    private int sendingPollsSinceRead;
    private long lastSendingReadNs;
    private boolean returnedEarly;
    /** Diagnostics, read by tests: NIC thread passes that found work. */
    private long nicPasses;

    TcpQueuePair(
        final TcpDevice device, final SoftProtectionDomain pd, final QueuePairConfig config, final int qpNumber)
    {
        super(device, pd, config, qpNumber);
        this.nic = device.nic();
        this.errorHandler = device.errorHandler();
        this.fallbackGraceNs = device.fallbackGraceNs();
        // "Long ago", in nanoTime's arithmetic (differences only): no post, no application progress yet.
        final long longAgoNs = System.nanoTime() - TimeUnit.SECONDS.toNanos(1) - fallbackGraceNs;
        this.lastApplicationProgressNs = longAgoNs;
        this.requester = new TcpRequester(this, device);
        this.coalescer = new TcpWriteCoalescer(this, device.coalesceNs(), longAgoNs);
        this.responder = new TcpResponder(this, device);
        sendCq.addProgress(this);
        if (receiveCq != sendCq)
        {
            receiveCq.addProgress(this);
        }
    }

    @Override
    protected void onReadyToReceive(final QueuePairConnectionInfo remote)
    {
        final byte[] gid = remote.gid();
        final boolean ipv4Mapped = IpGid.isIpv4Mapped(gid);
        try
        {
            final InetAddress address =
                InetAddress.getByAddress(ipv4Mapped ? Arrays.copyOfRange(gid, 12, 16) : gid);
            if (remote.lid() == 0)
            {
                throw new IllegalArgumentException("tcp peer info has no NIC port in its LID: " + remote);
            }
            remoteNic = new InetSocketAddress(address, remote.lid());
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException("tcp peer GID is not an IP address: " + remote, ex);
        }
    }

    /**
     * @return this QP's random starting PSN, which only the authenticated handshake carries to the peer: the part of
     * the hello ({@link TcpWire#HELLO_TARGET_PSN_OFFSET}) a third party cannot guess.
     */
    int localPsn()
    {
        return psn;
    }

    @Override
    protected void onReadyToSend()
    {
        nic.requestDial(this);
    }

    @Override
    protected void onError()
    {
    }

    @Override
    protected void onReceivePosted(final long index)
    {
    }

    @Override
    protected void onClose()
    {
        sendCq.removeProgress(this);
        receiveCq.removeProgress(this);
        nic.removeQueuePair(this);
    }

    // ---------------------------------------------------------------------------------------------------
    // The engine lock.

    boolean tryLock()
    {
        return 0 == (int)ENGINE.getOpaque(this) && ENGINE.compareAndSet(this, 0, 1);
    }

    /**
     * Take the engine for the NIC thread's control work (hello, drops, close): the holder releases it within one
     * pass, so spin.
     */
    void lockForNic()
    {
        while (!tryLock())
        {
            Thread.yield();
        }
    }

    /**
     * Release the engine, then transmit WRs a poster left while it was taken (the poster published its tail, fenced,
     * then found the lock held; this thread released the lock, with a full fence, and then reads the tail: one of
     * the two sees the other).
     */
    void unlock()
    {
        noteHeldSends();
        ENGINE.setVolatile(this, 0);
        while (sendTail() > requester.transmitted() && QueuePairState.RTS == state && tryLock())
        {
            int work = 0;
            try
            {
                final long nowNs = System.nanoTime();
                work = requester.transmit(nowNs);
                if (work > 0)
                {
                    coalescer.writeRequests(outbound);
                }
            }
            finally
            {
                noteHeldSends();
                ENGINE.setVolatile(this, 0);
            }
            if (0 == work)
            {
                break; // blocked (fence, full socket, not connected): the next progress pass transmits
            }
        }
    }

    /**
     * @return writes of request frames so far (fewer than posts when a streaming poster's writes were coalesced).
     */
    long requestWrites()
    {
        VarHandle.acquireFence();
        return coalescer.requestWrites();
    }

    /**
     * @return WRITE payloads read from the socket straight into their target region.
     */
    long directPlacements()
    {
        VarHandle.acquireFence();
        return responder.directPlacements();
    }

    /**
     * @return progress passes of the NIC thread that found work (it stepped in for the application).
     */
    long nicPasses()
    {
        VarHandle.acquireFence();
        return nicPasses;
    }

    // ---------------------------------------------------------------------------------------------------
    // Application threads.

    /**
     * The poster frames its WRs and writes them itself, unless another thread holds the engine (it then transmits
     * them when it releases it) or the poster is streaming (the frames wait to be coalesced).
     */
    @Override
    protected void onSendPosted()
    {
        VarHandle.fullFence(); // the tail before the engine flag: see unlock()
        if (!tryLock())
        {
            return;
        }
        try
        {
            if (isClosed() || faults.isKilled())
            {
                return;
            }
            final long nowNs = System.nanoTime();
            if (QueuePairState.ERR == state)
            {
                flushErrors();
                return;
            }
            postedSincePass = true;
            requester.transmit(nowNs);
            coalescer.onPostFramed(outbound, nowNs);
        }
        catch (final RuntimeException ex)
        {
            onEngineFailure(ex);
        }
        finally
        {
            unlock();
        }
    }

    /**
     * Frames held back to coalesce or blocked by a full socket, or WRs not yet framed: what only a later pass sends.
     * Written by the engine's holder just before it releases the engine, so a poster that took the engine itself reads
     * what its own post left; one that found the engine taken reads the holder's last word, which its release then
     * amends (a stale true costs the caller one pass more).
     */
    public boolean hasHeldSends()
    {
        return (boolean)HELD_SENDS.getAcquire(this);
    }

    private void noteHeldSends()
    {
        final TcpConnection connection = outbound;
        final boolean held = QueuePairState.RTS == state && ((null != connection && connection.isUsable() &&
            connection.hasPendingWrites()) || requester.transmitted() < sendTail());
        if (held != (boolean)HELD_SENDS.getOpaque(this))
        {
            HELD_SENDS.setRelease(this, held);
        }
    }

    /**
     * Progress from an application thread: a CQ poll (this is the CQ's {@link SoftCompletionQueue.Progress}) or an
     * explicit {@link io.verbus.fabric.QueuePair#progress()}.
     */
    @Override
    public int progress()
    {
        // Before the lock: an application thread that polls is active even when it finds the NIC thread holding the
        // engine, and the NIC thread should then leave the QP to it.
        final long nowNs = System.nanoTime();
        LAST_APPLICATION_PROGRESS.setOpaque(this, nowNs);
        if (!tryLock())
        {
            return 0;
        }
        try
        {
            return progress(nowNs, true);
        }
        catch (final RuntimeException ex)
        {
            onEngineFailure(ex);
            return 1;
        }
        finally
        {
            unlock();
        }
    }

    /**
     * The NIC thread's turn: only when no application thread has made progress lately, unless {@code eager}.
     */
    int nicDuty(final long nowNs, final boolean eager)
    {
        if (!eager && nowNs - (long)LAST_APPLICATION_PROGRESS.getOpaque(this) < fallbackGraceNs)
        {
            return 0;
        }
        if (!tryLock())
        {
            return 0;
        }
        try
        {
            final int work = progress(nowNs, false);
            if (work > 0)
            {
                nicPasses++;
            }
            return work;
        }
        catch (final RuntimeException ex)
        {
            onEngineFailure(ex);
            return 1;
        }
        finally
        {
            unlock();
        }
    }

    /**
     * The engine runs on application threads (a CQ poll, a post): a failure it did not expect must not surface in the
     * application's poll. Report it as the NIC thread's would be, and err the QP (its outstanding WRs complete with
     * LOC_QP_OP_ERR at the head, then WR_FLUSH_ERR), as a NIC that hits an internal error does.
     */
    private void onEngineFailure(final RuntimeException ex)
    {
        errorHandler.onError(ex);
        if (QueuePairState.ERR != state && null == headFailure)
        {
            headFailure = WorkCompletionStatus.LOC_QP_OP_ERR;
        }
        enterError();
    }

    // ---------------------------------------------------------------------------------------------------
    // Engine from here on.

    private int progress(final long nowNs, final boolean application)
    {
        if (isClosed() || faults.isKilled())
        {
            return 0;
        }
        // While the application sends (it posted since its last poll, or frames are held to coalesce), its own polls
        // would otherwise add reads to every post: see SENDING_POLLS_PER_READ. A full send queue stops the posts, so
        // a poster waiting for completions reads its responses on every poll again.
        boolean mayRead = true;
        if (application)
        {
            if (postedSincePass || coalescer.isHolding())
            {
                mayRead = ++sendingPollsSinceRead >= SENDING_POLLS_PER_READ &&
                    nowNs - lastSendingReadNs >= STREAM_READ_INTERVAL_NS;
            }
            if (mayRead)
            {
                sendingPollsSinceRead = 0;
                lastSendingReadNs = nowNs;
            }
            postedSincePass = false;
        }
        final long appliedBefore = responder.requestsApplied();
        int work = responder.receiveRequests(nowNs, mayRead, application);
        if (application && responder.requestsApplied() != appliedBefore && QueuePairState.ERR != state &&
            !returnedEarly)
        {
            // The application is waiting for what just landed: let it look before this thread makes more system
            // calls (responses, held frames); its next poll does them (at most one pass is cut short in a row, so a
            // receiver that gets data on every pass still reads its responses and writes what it holds).
            returnedEarly = true;
            return work + requester.timers(nowNs);
        }
        returnedEarly = false;
        work += requester.receiveResponses(nowNs, application, mayRead);
        if (QueuePairState.ERR == state)
        {
            work += flushErrors();
        }
        else
        {
            work += requester.transmit(nowNs);
            work += requester.timers(nowNs);
            releaseIdleWriteBuffer(outbound, nowNs);
            releaseIdleWriteBuffer(inbound, nowNs);
        }
        work += coalescer.writeHeldRequests(outbound, nowNs);
        return work;
    }

    private static void releaseIdleWriteBuffer(final TcpConnection connection, final long nowNs)
    {
        if (null != connection && connection.established && !connection.isClosed())
        {
            connection.releaseIdleWriteBuffer(nowNs);
        }
    }

    // ---------------------------------------------------------------------------------------------------
    // Errors.

    /**
     * A connection to or from the peer is gone (peer died, link dropped): the QP errs; the WR at the head
     * of the send queue, if any, fails with RETRY_EXC_ERR and the rest flush.
     */
    void onConnectionLost(final TcpConnection connection)
    {
        if (state != QueuePairState.ERR && requester.completed() < Math.max(requester.transmitted(), sendTail()) &&
            null == headFailure)
        {
            headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
        }
        enterError();
    }

    /**
     * Close a connection of this QP that failed, and err the QP if it was one of its two; engine holder only.
     */
    void lose(final TcpConnection connection)
    {
        if (null == connection || connection.isClosed())
        {
            return;
        }
        connection.close();
        if (outbound == connection || inbound == connection)
        {
            onConnectionLost(connection);
        }
    }

    /**
     * In ERR: complete the outstanding send WRs with errors and flush the receives.
     */
    private int flushErrors()
    {
        final int work = requester.flushSends();
        return work + responder.flushReceives();
    }

    // ---------------------------------------------------------------------------------------------------
    // For the requester and responder: SoftQueuePair's protected members, which Java lets only this subclass reach.

    long postedSends()
    {
        return sendTail();
    }

    long postedReceives()
    {
        return receiveTail();
    }

    boolean reportSend(final long index, final WorkCompletionStatus status, final int byteLength)
    {
        return completeSend(index, status, byteLength);
    }

    boolean reportReceive(
        final long index,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate,
        final boolean solicited)
    {
        return completeReceive(index, status, opcode, byteLength, immediate, hasImmediate, solicited);
    }

    boolean reportSharedReceive(
        final long srqIndex,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate,
        final boolean solicited)
    {
        return completeSharedReceive(srqIndex, status, opcode, byteLength, immediate, hasImmediate, solicited);
    }

    WorkCompletionStatus placeInSharedReceive(
        final long srqIndex, final MemorySegment source, final long sourceOffset, final int length)
    {
        return placeSharedReceive(srqIndex, source, sourceOffset, length);
    }

    SoftMemoryRegion sendRegion(final int slot, final int requiredAccess)
    {
        return localRegion(slot, requiredAccess);
    }

    boolean isInlineSend(final int slot)
    {
        return isInline(slot);
    }

    long retryTimeoutNs()
    {
        return retryTimeoutNs;
    }

    int rnrRetryCount()
    {
        return rnrRetryCount;
    }

    long rnrTimeoutNs()
    {
        return rnrTimeoutNs;
    }

    FaultInjection faults()
    {
        return faults;
    }

    SoftRegionTable localRegions()
    {
        return localRegions;
    }

    int protectionDomainId()
    {
        return protectionDomainId;
    }

    SoftSharedReceiveQueue srq()
    {
        return srq;
    }

    byte[] sqOpcode()
    {
        return sqOpcode;
    }

    int[] sqFlags()
    {
        return sqFlags;
    }

    int[] sqLength()
    {
        return sqLength;
    }

    long[] sqLocalAddress()
    {
        return sqLocalAddress;
    }

    long[] sqRemoteAddress()
    {
        return sqRemoteAddress;
    }

    int[] sqRkey()
    {
        return sqRkey;
    }

    int[] sqImmediate()
    {
        return sqImmediate;
    }

    long[] sqCompareAdd()
    {
        return sqCompareAdd;
    }

    long[] sqSwap()
    {
        return sqSwap;
    }

    MemorySegment sqInline()
    {
        return sqInline;
    }

    int[] rqLength()
    {
        return rqLength;
    }

    int[] rqLkey()
    {
        return rqLkey;
    }

    long[] rqAddress()
    {
        return rqAddress;
    }
}
