package io.verbus.fabric.tcp;

import io.verbus.common.VarHandles;
import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestOpcode;
import io.verbus.fabric.soft.SoftCompletionQueue;
import io.verbus.fabric.soft.SoftMemoryPlacement;
import io.verbus.fabric.soft.SoftMemoryRegion;
import io.verbus.fabric.soft.SoftProtectionDomain;
import io.verbus.fabric.soft.SoftQueuePair;
import org.agrona.ErrorHandler;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * An RC QP of the tcp provider.
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
 * <b>Coalescing.</b> The second post in a row that comes sooner after the last write's end than a write costs (at
 * most {@link #HOLD_TRIGGER_MAX_NS}: a poster that streams; see {@link #HOLD_TRIGGER_POSTS}) holds its frames in
 * the connection's buffer while posts keep coming, for about {@link #HOLD_WRITE_COSTS} writes' cost (at least
 * {@link #MIN_HOLD_NS}, at most {@code tcpCoalesceNs}) or {@link #COALESCE_MAX_BYTES}; they go out in one write,
 * made by the next post or poll past that point (the NIC thread if the application stops calling). An isolated post
 * (a ping-pong, a request, a credit) is written at once. While the application posts between its polls, those polls
 * read the sockets only every {@link #SENDING_POLLS_PER_READ}th time, so a sender does not pay two reads per post.
 * <p>
 * <b>Acknowledgement.</b> Responses are cumulative ({@link TcpWire}): the responder answers at once what the
 * requester waits for (signaled WRs, READ, atomics, errors, RNR) and acknowledges unsignaled WRs together within
 * {@link #MAX_ACK_DELAY_NS}, so an unsignaled WRITE costs the responder no write system call.
 * <p>
 * <b>RNR.</b> A SEND or WRITE with immediate that finds no receive is held by the responder, which sends RNR NAKs
 * and, once the RNR budget the request carries is spent, drops it and answers RNR_RETRY_EXC_ERR: the responder
 * decides, so a request the requester reports as failed is never delivered to a receive posted later.
 */
final class TcpQueuePair extends SoftQueuePair implements SoftCompletionQueue.Progress
{
    static final int CONSUMED = 0;
    static final int HOLD = 1;
    static final int DROP = 2;
    static final int DISCARD = 3;

    /** Held frames are written once the poster has not posted for this long (or what a write costs, if more). */
    static final long STREAM_GAP_NS = TimeUnit.MICROSECONDS.toNanos(2);
    /**
     * A post starts holding only if it comes within this (or what a write costs, if less) of the last write's end:
     * never more, so that a slow host (writes inflated by preemption) does not make isolated posts wait.
     */
    static final long HOLD_TRIGGER_MAX_NS = TimeUnit.MICROSECONDS.toNanos(10);
    /**
     * Holding starts only at the this-many-th post in a row that came within a write's cost of the last write's end:
     * a stream. One such post is as often a coincidence (a heartbeat or a credit just before a ping): held, it would
     * wait for the next poll of its QP, which a ping-pong application makes only now and then while it waits.
     */
    static final int HOLD_TRIGGER_POSTS = 2;
    /** Frames are held for up to this many writes' cost (at least {@link #MIN_HOLD_NS}, at most coalesceNs). */
    static final int HOLD_WRITE_COSTS = 8;
    /** See {@link #HOLD_WRITE_COSTS}. */
    static final long MIN_HOLD_NS = TimeUnit.MICROSECONDS.toNanos(20);
    /** Most bytes held back to coalesce before they are written anyway. */
    static final int COALESCE_MAX_BYTES = 64 * 1024;
    /**
     * While the application posts on this QP between its polls (it is sending: a stream, an echo, frames held to
     * coalesce), its polls read the QP's sockets only every this many such polls and at most every
     * {@link #STREAM_READ_INTERVAL_NS}; a poll with no post since the last one (the application waits) reads every
     * time. Counted, not timed, so that a thread slowed down by a busy host does not read on every post.
     */
    static final int SENDING_POLLS_PER_READ = 16;
    /** See {@link #SENDING_POLLS_PER_READ}. */
    static final long STREAM_READ_INTERVAL_NS = TimeUnit.MICROSECONDS.toNanos(10);
    /** With no response awaited, an application poll still reads responses this often (NAKs, lost peers). */
    static final long IDLE_RESPONSE_READ_INTERVAL_NS = TimeUnit.MICROSECONDS.toNanos(250);
    /**
     * Unsignaled requests are acknowledged together at the latest this long after the first of them (or a quarter of
     * the retry timeout, if shorter): nobody waits for them, the acknowledgement only keeps the requester's retry
     * timer quiet, so one write system call a millisecond at most.
     */
    static final long MAX_ACK_DELAY_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** A loopback write of a few frames, before any is measured. */
    static final long INITIAL_WRITE_COST_NS = TimeUnit.MICROSECONDS.toNanos(2);
    /** A WRITE payload with at least this much still to arrive is read straight into the target region. */
    static final int DIRECT_PLACEMENT_MIN_BYTES = 16 * 1024;

    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long RNR_NAK_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /** The longest RNR budget a request carries: an int of microseconds (about 35 minutes). */
    private static final long MAX_RNR_BUDGET_NS = TimeUnit.MICROSECONDS.toNanos(Integer.MAX_VALUE);
    private static final long NONE = Long.MIN_VALUE;
    private static final VarHandle ENGINE = VarHandles.field(MethodHandles.lookup(), "engine", int.class);
    private static final VarHandle LAST_APPLICATION_PROGRESS =
        VarHandles.field(MethodHandles.lookup(), "lastApplicationProgressNs", long.class);

    private final TcpNic nic;
    private final ErrorHandler errorHandler;
    private final int maxFrameLength;
    private final long maxMessageLength;
    private final long connectTimeoutNs;
    private final long coalesceNs;
    /** The NIC thread leaves a QP to the application threads that made progress on it this recently. */
    private final long fallbackGraceNs;
    private final long ackDelayNs;
    /** How long this requester retries an RNR: its RNR timeout times its retry count (capped, when infinite). */
    private final long rnrBudgetNs;
    /** The same, as requests carry it: {@link TcpWire#REQUEST_RNR_BUDGET_US_OFFSET}. */
    private final int rnrBudgetUs;
    @SuppressWarnings("unused") private int engine;
    @SuppressWarnings("unused") private long lastApplicationProgressNs;

    InetSocketAddress remoteNic;
    volatile TcpConnection outbound;
    volatile TcpConnection inbound;
    volatile long dialStartedNs = Long.MIN_VALUE;
    /** Status the head WR fails with when the QP errs for a reason that is not a completion (lost peer). */
    volatile WorkCompletionStatus headFailure;

    // Engine state from here on: only the engine lock's holder touches it.

    // Requester.
    long sqTransmitted;
    long sqCompleted;
    long lastResponseNs;
    long rnrSinceNs = NONE;
    /** Index of a WR that failed a local check at transmit time, and why; -1 if none. */
    long localFailureIndex = -1;
    WorkCompletionStatus localFailureStatus;
    /** Last READ or atomic transmitted: a FENCE waits for its completion, as the verbs fence does. */
    private long lastFencingSequence = -1;
    /** Last WR transmitted whose response the requester waits for (signaled, READ, atomic). */
    private long lastAwaitedSequence = -1;
    private long lastPostEndNs;
    private long lastWriteEndNs;
    /**
     * What a write of requests costs, a moving average with outliers clamped (a write the scheduler preempted is not
     * what writes cost): posts closer together than this are coalesced.
     */
    private long writeCostNs = INITIAL_WRITE_COST_NS;
    /** When frames were first held back to coalesce, NONE if what is pending (if anything) is not held back. */
    private long coalescingSinceNs = NONE;
    /** Posts in a row that came within a write's cost of the last write's end. */
    private int closePosts;
    /** The application posted since its last progress pass on this QP. */
    private boolean postedSincePass;
    private int sendingPollsSinceRead;
    private long lastSendingReadNs;

    // Diagnostics, read by tests (opaque: exact once the engine is quiet).
    private long requestWrites;
    private long directPlacements;
    private long nicPasses;

    // Responder.
    long rqConsumed;
    /** With an SRQ: the RECV claimed for the SEND / WRITE_WITH_IMM at the head of the requests, or -1. */
    private long claimedSrqIndex = -1;
    /** Requests applied: the sequence of the next one expected. */
    private long requestsApplied;
    /** Requests acknowledged: every one before this has been answered, singly or cumulatively. */
    private long requestsAcknowledged;
    private long unacknowledgedSinceNs;
    /** Receive pass in which a request the requester awaits was applied, NONE if none is unacknowledged. */
    private long acknowledgementDuePass = NONE;
    private long receivePasses;
    private boolean returnedEarly;

    TcpQueuePair(
        final TcpDevice device, final SoftProtectionDomain pd, final QueuePairConfig config, final int qpNumber)
    {
        super(device, pd, config, qpNumber);
        this.nic = device.nic();
        this.errorHandler = device.errorHandler();
        this.maxFrameLength = device.maxFrameLength();
        this.maxMessageLength = device.attributes().maxMessageLength();
        this.connectTimeoutNs = device.connectTimeoutNs();
        this.coalesceNs = device.coalesceNs();
        this.fallbackGraceNs = device.fallbackGraceNs();
        this.ackDelayNs = Math.max(1, Math.min(MAX_ACK_DELAY_NS, retryTimeoutNs / 4));
        final boolean rnrForever = rnrRetryCount == QueuePairConfig.RNR_RETRY_INFINITE;
        this.rnrBudgetNs = rnrForever ? MAX_RNR_BUDGET_NS :
            rnrTimeoutNs >= MAX_RNR_BUDGET_NS / Math.max(1, rnrRetryCount) ? MAX_RNR_BUDGET_NS :
                rnrTimeoutNs * rnrRetryCount;
        this.rnrBudgetUs = rnrForever ? TcpWire.RNR_BUDGET_INFINITE :
            (int)((rnrBudgetNs + TimeUnit.MICROSECONDS.toNanos(1) - 1) / TimeUnit.MICROSECONDS.toNanos(1));
        // "Long ago", in nanoTime's arithmetic (differences only): no post, no application progress yet.
        final long longAgoNs = System.nanoTime() - TimeUnit.SECONDS.toNanos(1) - fallbackGraceNs;
        this.lastPostEndNs = longAgoNs;
        this.lastWriteEndNs = longAgoNs;
        this.lastApplicationProgressNs = longAgoNs;
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
        final boolean ipv4Mapped = isIpv4Mapped(gid);
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

    static boolean isIpv4Mapped(final byte[] gid)
    {
        for (int i = 0; i < 10; i++)
        {
            if (gid[i] != 0)
            {
                return false;
            }
        }
        return gid[10] == (byte)0xFF && gid[11] == (byte)0xFF;
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
        ENGINE.setVolatile(this, 0);
        while (sendTail() > sqTransmitted && QueuePairState.RTS == state && tryLock())
        {
            int work = 0;
            try
            {
                final long nowNs = System.nanoTime();
                work = transmit(nowNs);
                if (work > 0)
                {
                    writeRequests(outbound);
                }
            }
            finally
            {
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
        return requestWrites;
    }

    /**
     * @return WRITE payloads read from the socket straight into their target region.
     */
    long directPlacements()
    {
        VarHandle.acquireFence();
        return directPlacements;
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
            transmit(nowNs);
            final boolean wrote = writeAfterPost(nowNs);
            lastPostEndNs = wrote ? System.nanoTime() : nowNs;
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
            if (postedSincePass || NONE != coalescingSinceNs)
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
        final long appliedBefore = requestsApplied;
        int work = receiveRequests(nowNs, mayRead, application);
        if (application && requestsApplied != appliedBefore && QueuePairState.ERR != state && !returnedEarly)
        {
            // The application is waiting for what just landed: let it look before this thread makes more system
            // calls (responses, held frames); its next poll does them (at most one pass is cut short in a row, so a
            // receiver that gets data on every pass still reads its responses and writes what it holds).
            returnedEarly = true;
            return work + timers(nowNs);
        }
        returnedEarly = false;
        work += receiveResponses(nowNs, application, mayRead);
        if (QueuePairState.ERR == state)
        {
            work += flushErrors();
        }
        else
        {
            work += transmit(nowNs);
            work += timers(nowNs);
        }
        work += writeHeldRequests(nowNs);
        return work;
    }

    /**
     * Write what was just framed, or hold it to coalesce with what follows: the {@link #HOLD_TRIGGER_POSTS}th post in a
     * row that comes within what a write costs (at most {@link #HOLD_TRIGGER_MAX_NS}) of the last write's end starts
     * holding, so an isolated post, whose predecessor is long written, goes out at once; holding lasts while posts
     * keep coming, up to {@link #holdNs()} (about {@link #HOLD_WRITE_COSTS} writes' cost) or
     * {@link #COALESCE_MAX_BYTES}.
     *
     * @return true if it wrote.
     */
    private boolean writeAfterPost(final long nowNs)
    {
        final TcpConnection connection = outbound;
        if (null == connection || !connection.isUsable() || !connection.hasPendingWrites())
        {
            return false;
        }
        if (coalesceNs > 0 && connection.pendingWriteBytes() < COALESCE_MAX_BYTES)
        {
            if (NONE != coalescingSinceNs)
            {
                if (nowNs - coalescingSinceNs < holdNs() && nowNs - lastPostEndNs < flushGapNs())
                {
                    return false;
                }
            }
            else if (nowNs - lastWriteEndNs < Math.min(writeCostNs, HOLD_TRIGGER_MAX_NS))
            {
                if (++closePosts >= HOLD_TRIGGER_POSTS)
                {
                    coalescingSinceNs = nowNs;
                    return false;
                }
            }
            else
            {
                closePosts = 0;
            }
        }
        writeRequests(connection);
        return true;
    }

    /**
     * @return how long after the last post held frames wait for another: the poster has stopped streaming.
     */
    private long flushGapNs()
    {
        return Math.max(STREAM_GAP_NS, Math.min(writeCostNs, HOLD_TRIGGER_MAX_NS));
    }

    /**
     * @return how long frames may be held: enough posts to spend about one part in {@link #HOLD_WRITE_COSTS} of the
     * time in writes (when a write costs 2-3 us on an idle host: {@link #MIN_HOLD_NS}), within coalesceNs.
     */
    private long holdNs()
    {
        return Math.min(coalesceNs, Math.max(MIN_HOLD_NS, HOLD_WRITE_COSTS * writeCostNs));
    }

    /**
     * Write held-back or blocked request frames, unless the poster is still streaming within its coalescing time.
     */
    private int writeHeldRequests(final long nowNs)
    {
        final TcpConnection connection = outbound;
        if (null == connection || !connection.isUsable() || !connection.hasPendingWrites())
        {
            return 0;
        }
        if (NONE != coalescingSinceNs && nowNs - coalescingSinceNs < holdNs() &&
            nowNs - lastPostEndNs < flushGapNs() && connection.pendingWriteBytes() < COALESCE_MAX_BYTES)
        {
            return 0;
        }
        writeRequests(connection);
        return 1;
    }

    private void writeRequests(final TcpConnection connection)
    {
        if (null == connection || !connection.isUsable())
        {
            return;
        }
        coalescingSinceNs = NONE;
        requestWrites++;
        final long startNs = System.nanoTime();
        try
        {
            connection.flush();
        }
        catch (final IOException ex)
        {
            lose(connection);
        }
        final long endNs = System.nanoTime();
        final long costNs = writeCostNs;
        writeCostNs = costNs + ((Math.min(endNs - startNs, 4 * costNs) - costNs) >> 3);
        lastWriteEndNs = endNs;
    }

    /**
     * Frame posted WRs in order into the outbound connection's buffer, checking the lkeys first.
     */
    private int transmit(final long nowNs)
    {
        if (QueuePairState.RTS != state || localFailureIndex >= 0)
        {
            return 0;
        }
        final TcpConnection connection = outbound;
        if (null == connection || !connection.isUsable())
        {
            return 0;
        }
        int work = 0;
        final long tail = sendTail();
        try
        {
            while (sqTransmitted < tail)
            {
                final int slot = (int)(sqTransmitted % sqDepth);
                final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[slot]];
                final int length = sqLength[slot];
                final int flags = sqFlags[slot];
                if ((flags & SendFlags.FENCE) != 0 && lastFencingSequence >= sqCompleted)
                {
                    break;
                }
                if (length > maxMessageLength)
                {
                    localFailureIndex = sqTransmitted;
                    localFailureStatus = WorkCompletionStatus.LOC_LEN_ERR;
                    break;
                }
                MemorySegment source = sqInline;
                long sourceOffset = (long)slot * maxInlineData;
                final boolean atomic = opcode.isAtomic();
                final boolean carriesPayload = !atomic && opcode != WorkRequestOpcode.RDMA_READ;
                if (length > 0 && (!carriesPayload || !isInline(slot)))
                {
                    final SoftMemoryRegion region = localRegion(slot, carriesPayload ? 0 : AccessFlags.LOCAL_WRITE);
                    if (null == region)
                    {
                        localFailureIndex = sqTransmitted;
                        localFailureStatus = WorkCompletionStatus.LOC_PROT_ERR;
                        break;
                    }
                    source = region.segment();
                    sourceOffset = region.offsetOf(sqLocalAddress[slot]);
                }
                final int payloadLength = carriesPayload ? length : 0;
                final int headerLength = atomic ? TcpWire.ATOMIC_REQUEST_HEADER_LENGTH : TcpWire.REQUEST_HEADER_LENGTH;
                final int frameLength = headerLength + payloadLength;
                final int offset = connection.reserve(frameLength);
                if (offset < 0)
                {
                    break;
                }
                final ByteBuffer out = connection.writeBuffer();
                out.putInt(offset + TcpWire.FRAME_LENGTH_OFFSET, frameLength);
                out.put(offset + TcpWire.FRAME_TYPE_OFFSET, TcpWire.TYPE_REQUEST);
                out.put(offset + TcpWire.REQUEST_OPCODE_OFFSET, sqOpcode[slot]);
                out.putShort(offset + TcpWire.REQUEST_FLAGS_OFFSET, (short)flags);
                out.putLong(offset + TcpWire.REQUEST_SEQUENCE_OFFSET, sqTransmitted);
                out.putLong(offset + TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET, sqRemoteAddress[slot]);
                out.putInt(offset + TcpWire.REQUEST_RKEY_OFFSET, sqRkey[slot]);
                out.putInt(offset + TcpWire.REQUEST_LENGTH_OFFSET, length);
                out.putInt(offset + TcpWire.REQUEST_IMMEDIATE_OFFSET, sqImmediate[slot]);
                out.putInt(offset + TcpWire.REQUEST_RNR_BUDGET_US_OFFSET, rnrBudgetUs);
                if (atomic)
                {
                    out.putLong(offset + TcpWire.REQUEST_COMPARE_ADD_OFFSET, sqCompareAdd[slot]);
                    out.putLong(offset + TcpWire.REQUEST_SWAP_OFFSET, sqSwap[slot]);
                }
                if (payloadLength > 0)
                {
                    MemorySegment.copy(source, sourceOffset, connection.writeSegment(), offset + headerLength,
                        payloadLength);
                }
                if (sqCompleted == sqTransmitted)
                {
                    lastResponseNs = nowNs;
                }
                if (!carriesPayload)
                {
                    lastFencingSequence = sqTransmitted;
                    lastAwaitedSequence = sqTransmitted;
                }
                else if ((flags & SendFlags.SIGNALED) != 0)
                {
                    lastAwaitedSequence = sqTransmitted;
                }
                sqTransmitted++;
                work++;
            }
        }
        catch (final IOException ex)
        {
            lose(connection);
            return work + 1;
        }
        return work;
    }

    /**
     * Fail a silent or RNR-exhausted peer, a dial that never connected, a WR that failed its local checks.
     */
    private int timers(final long nowNs)
    {
        if (QueuePairState.RTS != state)
        {
            return 0;
        }
        final TcpConnection connection = outbound;
        if (null == connection || !connection.established)
        {
            final long dialStarted = dialStartedNs;
            if (dialStarted != NONE && nowNs - dialStarted > connectTimeoutNs && sendTail() > sqCompleted)
            {
                headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                enterError();
                return 1;
            }
            return 0;
        }
        if (localFailureIndex >= 0 && sqCompleted == localFailureIndex)
        {
            // ERR first, so the error completion is never seen on a QP that still reads RTS; flushErrors() reports
            // the failed WR with localFailureStatus.
            enterError();
            return 1;
        }
        if (sqCompleted < sqTransmitted)
        {
            if (rnrSinceNs != NONE)
            {
                // The responder ends an RNR wait (it NAKs RNR_RETRY_EXC_ERR when the budget is spent), so that a
                // request given up on is never delivered; a responder that stays silent well past the budget is
                // a peer that stopped answering.
                if (rnrRetryCount != QueuePairConfig.RNR_RETRY_INFINITE &&
                    nowNs - rnrSinceNs - rnrBudgetNs >= retryTimeoutNs)
                {
                    headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                    enterError();
                    return 1;
                }
            }
            else if (nowNs - lastResponseNs > retryTimeoutNs)
            {
                headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                enterError();
                return 1;
            }
        }
        return 0;
    }

    // ---------------------------------------------------------------------------------------------------
    // Responder: the peer's requests on the connection it dialed.

    private int receiveRequests(final long nowNs, final boolean mayRead, final boolean application)
    {
        final TcpConnection connection = inbound;
        if (null == connection || !connection.isUsable())
        {
            return 0;
        }
        receivePasses++;
        int work = 0;
        try
        {
            if (mayRead)
            {
                connection.lastReadNs = nowNs;
                if (connection.isPlacingDirectly())
                {
                    final int read = placeDirectlyFromSocket(connection);
                    if (read < 0)
                    {
                        lose(connection);
                        return 1;
                    }
                    if (connection.isPlacingDirectly())
                    {
                        return read > 0 ? 1 : 0;
                    }
                    if (QueuePairState.ERR != state)
                    {
                        onRequestApplied(connection.directSequence, connection.directFlags, nowNs);
                    }
                    work++;
                }
                if (connection.isSkipping())
                {
                    final int read = connection.skip();
                    if (read < 0)
                    {
                        lose(connection);
                        return 1;
                    }
                    if (connection.isSkipping())
                    {
                        return read > 0 ? 1 : 0;
                    }
                    work++;
                }
                final int read = connection.read();
                if (read < 0)
                {
                    lose(connection);
                    return work + 1;
                }
                if (read > 0)
                {
                    work++;
                }
            }
            if (connection.hasBufferedInput())
            {
                work += processRequests(connection, nowNs);
            }
            if (!connection.isClosed())
            {
                work += acknowledge(connection, nowNs, application);
                if (connection.hasPendingWrites())
                {
                    connection.flush();
                }
            }
        }
        catch (final IOException ex)
        {
            lose(connection);
            work++;
        }
        return work;
    }

    private int processRequests(final TcpConnection connection, final long nowNs) throws IOException
    {
        final ByteBuffer in = connection.startReading();
        int work = 0;
        try
        {
            while (in.remaining() >= 8)
            {
                final int frame = in.position();
                final int frameLength = in.getInt(frame + TcpWire.FRAME_LENGTH_OFFSET);
                if (frameLength < TcpWire.REQUEST_HEADER_LENGTH || frameLength > maxFrameLength ||
                    in.get(frame + TcpWire.FRAME_TYPE_OFFSET) != TcpWire.TYPE_REQUEST)
                {
                    lose(connection);
                    return work + 1;
                }
                if (in.remaining() < frameLength)
                {
                    if (placeDirectly(connection, in, frame, frameLength, nowNs))
                    {
                        work++;
                    }
                    else
                    {
                        connection.ensureReadCapacity(frameLength);
                    }
                    break;
                }
                final int outcome = onRequest(connection, in, frame, frameLength, nowNs);
                if (outcome == HOLD)
                {
                    break;
                }
                if (outcome == DROP)
                {
                    lose(connection);
                    return work + 1;
                }
                in.position(frame + frameLength);
                work++;
            }
        }
        finally
        {
            if (!connection.isClosed())
            {
                connection.doneReading();
            }
        }
        return work;
    }

    /**
     * Read more of a directly placed payload, unless its region was deregistered meanwhile: then, as a NIC would
     * for the rest of a WRITE whose rkey went away, NAK it with REM_ACCESS_ERR and err (the rest of the payload is
     * dropped so the stream stays framed).
     *
     * @return bytes read, -1 at end of stream.
     */
    private int placeDirectlyFromSocket(final TcpConnection connection) throws IOException
    {
        if (connection.isDirectRegionRegistered())
        {
            try
            {
                return connection.readDirect();
            }
            catch (final IllegalStateException ex)
            {
                // the region's memory was freed between the check and the read: as deregistered
            }
        }
        final long sequence = connection.directSequence;
        connection.abandonDirect();
        final int offset = connection.reserve(TcpWire.RESPONSE_HEADER_LENGTH);
        if (offset >= 0)
        {
            writeResponseHeader(connection, offset, TcpWire.TYPE_RESPONSE, WorkCompletionStatus.REM_ACCESS_ERR,
                sequence, 0, TcpWire.RESPONSE_HEADER_LENGTH);
        }
        requestsApplied = sequence + 1;
        requestsAcknowledged = sequence + 1;
        acknowledgementDuePass = NONE;
        enterError();
        return 0;
    }

    /**
     * One copy for a large WRITE: once its header has arrived and passed the responder checks, copy what the read
     * buffer holds of its payload and have the socket read the rest straight into the target region. Only for a
     * plain WRITE placed in order with nothing held back: anything else waits for the whole frame in the buffer.
     *
     * @return true if the placement started (the buffer is then consumed).
     */
    private boolean placeDirectly(
        final TcpConnection connection, final ByteBuffer in, final int frame, final int frameLength, final long nowNs)
    {
        final int available = in.remaining();
        if (frameLength - available < DIRECT_PLACEMENT_MIN_BYTES ||
            available < TcpWire.REQUEST_HEADER_LENGTH ||
            in.get(frame + TcpWire.REQUEST_OPCODE_OFFSET) != WorkRequestOpcode.RDMA_WRITE.ordinal() ||
            faults.writePlacement() != FaultInjection.WritePlacement.IN_ORDER || faults.crossWriteFraction() > 0 ||
            faults.operationDelayNs() > 0)
        {
            return false;
        }
        final QueuePairState current = state;
        if ((current != QueuePairState.RTR && current != QueuePairState.RTS) || connection.discardingRequests)
        {
            return false;
        }
        final long sequence = in.getLong(frame + TcpWire.REQUEST_SEQUENCE_OFFSET);
        final long remoteAddress = in.getLong(frame + TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET);
        final int rkey = in.getInt(frame + TcpWire.REQUEST_RKEY_OFFSET);
        final int length = in.getInt(frame + TcpWire.REQUEST_LENGTH_OFFSET);
        if (sequence != requestsApplied || length != frameLength - TcpWire.REQUEST_HEADER_LENGTH)
        {
            return false; // the whole-frame path reports it
        }
        final SoftMemoryRegion region = localRegions.lookup(rkey);
        if (null == region || !region.permits(protectionDomainId, remoteAddress, length, AccessFlags.REMOTE_WRITE))
        {
            return false; // the whole-frame path NAKs it
        }
        final ByteBuffer view = connection.viewOf(region);
        if (null == view)
        {
            return false;
        }
        final int targetOffset = (int)region.offsetOf(remoteAddress);
        final int buffered = available - TcpWire.REQUEST_HEADER_LENGTH;
        // Every byte of earlier WRITEs before any byte of this one; the kernel's copy into the region comes after
        // this fence in this thread's order.
        VarHandle.releaseFence();
        MemorySegment.copy(connection.readSegment(), frame + TcpWire.REQUEST_HEADER_LENGTH, region.segment(),
            targetOffset, buffered);
        connection.startDirect(region, view, targetOffset + buffered, length - buffered, sequence,
            in.getShort(frame + TcpWire.REQUEST_FLAGS_OFFSET));
        connection.holdSinceNs = NONE;
        directPlacements++;
        in.position(in.limit());
        return true;
    }

    /**
     * Apply one request from the peer, in order, after the responder checks.
     *
     * @return {@link #CONSUMED}, {@link #HOLD} to retry the same frame later (RNR, not yet RTR, delay fault,
     * full CQ or write buffer), {@link #DROP} for a malformed frame, or {@link #DISCARD} to drop it unanswered (a
     * responder in ERR is silent, so the requester times out as it would against hardware; after an ended RNR wait
     * the requester is in ERR and what it sent behind the failed request is dropped).
     */
    int onRequest(
        final TcpConnection connection, final ByteBuffer in, final int frame, final int frameLength, final long nowNs)
        throws IOException
    {
        final QueuePairState current = state;
        if (current == QueuePairState.ERR || isClosed() || connection.discardingRequests)
        {
            return DISCARD;
        }
        if (current != QueuePairState.RTR && current != QueuePairState.RTS)
        {
            return HOLD;
        }
        if (isDelayedByFault(connection, nowNs))
        {
            return HOLD;
        }

        final int opcodeOrdinal = in.get(frame + TcpWire.REQUEST_OPCODE_OFFSET);
        if (opcodeOrdinal < 0 || opcodeOrdinal >= WR_OPCODES.length)
        {
            return DROP;
        }
        final WorkRequestOpcode opcode = WR_OPCODES[opcodeOrdinal];
        final int flags = in.getShort(frame + TcpWire.REQUEST_FLAGS_OFFSET);
        final long sequence = in.getLong(frame + TcpWire.REQUEST_SEQUENCE_OFFSET);
        final long remoteAddress = in.getLong(frame + TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET);
        final int rkey = in.getInt(frame + TcpWire.REQUEST_RKEY_OFFSET);
        final int length = in.getInt(frame + TcpWire.REQUEST_LENGTH_OFFSET);
        final int immediate = in.getInt(frame + TcpWire.REQUEST_IMMEDIATE_OFFSET);
        final boolean atomic = opcode.isAtomic();
        final boolean carriesPayload = !atomic && opcode != WorkRequestOpcode.RDMA_READ;
        final int headerLength = atomic ? TcpWire.ATOMIC_REQUEST_HEADER_LENGTH : TcpWire.REQUEST_HEADER_LENGTH;
        if (sequence != requestsApplied || length < 0 ||
            frameLength != headerLength + (carriesPayload ? length : 0))
        {
            return DROP;
        }
        final long payload = frame + headerLength;

        if (opcode.consumesReceive() && !receiveAvailable())
        {
            return awaitReceive(connection, sequence, in.getInt(frame + TcpWire.REQUEST_RNR_BUDGET_US_OFFSET), nowNs);
        }
        final int responsePayload = opcode == WorkRequestOpcode.RDMA_READ ? length : 0;
        if (!connection.canReserve(TcpWire.RESPONSE_HEADER_LENGTH + responsePayload))
        {
            return HOLD;
        }

        WorkCompletionStatus status = WorkCompletionStatus.SUCCESS;
        long value = 0;
        SoftMemoryRegion readRegion = null;
        switch (opcode)
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM ->
            {
                status = applyWrite(
                    connection, in, frame, frameLength, opcode, flags, remoteAddress, rkey, length, immediate, payload);
                if (null == status)
                {
                    return HOLD;
                }
            }
            case SEND, SEND_WITH_IMM ->
            {
                status = applySend(connection, opcode, flags, length, immediate, payload);
                if (null == status)
                {
                    return HOLD;
                }
            }
            case RDMA_READ ->
            {
                if (length > 0)
                {
                    readRegion = readableRegion(rkey, remoteAddress, length);
                    if (null == readRegion)
                    {
                        status = WorkCompletionStatus.REM_ACCESS_ERR;
                    }
                }
            }
            case ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP ->
            {
                final SoftMemoryRegion region = localRegions.lookup(rkey);
                status = atomicStatus(region, remoteAddress);
                if (status == WorkCompletionStatus.SUCCESS)
                {
                    value = applyAtomic(in, frame, opcode, region, remoteAddress);
                }
            }
            default -> status = WorkCompletionStatus.REM_INV_REQ_ERR;
        }
        connection.holdSinceNs = NONE;
        connection.lastRnrNakNs = NONE;
        connection.rnrHeldSinceNs = NONE;

        if (status == WorkCompletionStatus.SUCCESS && carriesPayload)
        {
            onRequestApplied(sequence, flags, nowNs);
            return CONSUMED;
        }

        respond(connection, status, sequence, value, readRegion, remoteAddress, length);
        return CONSUMED;
    }

    /**
     * The operation delay fault: the first frame held starts the clock, and frames are held until the delay has
     * passed since then.
     *
     * @return true to hold the frame.
     */
    private boolean isDelayedByFault(final TcpConnection connection, final long nowNs)
    {
        final long delayNs = faults.operationDelayNs();
        if (delayNs > 0)
        {
            if (connection.holdSinceNs == NONE)
            {
                connection.holdSinceNs = nowNs;
            }
            return nowNs - connection.holdSinceNs < delayNs;
        }
        return false;
    }

    /**
     * @return the local region the rkey names when it permits a remote read of the range, else null.
     */
    private SoftMemoryRegion readableRegion(final int rkey, final long remoteAddress, final int length)
    {
        final SoftMemoryRegion region = localRegions.lookup(rkey);
        if (null == region ||
            !region.permits(protectionDomainId, remoteAddress, length, AccessFlags.REMOTE_READ))
        {
            return null;
        }
        return region;
    }

    /**
     * A SEND or WRITE with immediate found no receive: hold it and send RNR NAKs, until its requester's RNR budget is
     * spent.
     *
     * @return {@link #HOLD}, or {@link #CONSUMED} once the wait is over and the request dropped.
     */
    private int awaitReceive(final TcpConnection connection, final long sequence, final int budgetUs, final long nowNs)
        throws IOException
    {
        if (isRnrBudgetSpent(connection, budgetUs, nowNs))
        {
            return endRnrWait(connection, sequence);
        }
        sendRnrNakIfDue(connection, sequence, nowNs);
        return HOLD;
    }

    /**
     * @return true when the request at the head has waited for a receive longer than its requester retries (the
     * budget it carries, {@link TcpWire#REQUEST_RNR_BUDGET_US_OFFSET}), counted from when it first found none.
     */
    private static boolean isRnrBudgetSpent(final TcpConnection connection, final int budgetUs, final long nowNs)
    {
        if (connection.rnrHeldSinceNs == NONE)
        {
            connection.rnrHeldSinceNs = nowNs;
        }
        return budgetUs >= 0 && nowNs - connection.rnrHeldSinceNs >= TimeUnit.MICROSECONDS.toNanos(budgetUs);
    }

    /**
     * The requester's RNR retries are spent: drop the request, as a NIC drops an RNR-NAKed request that is not sent
     * again, and tell the requester (RNR_RETRY_EXC_ERR; it errs). This responder stays usable, as on hardware; what
     * the requester sent behind the request is dropped unanswered. The NAK waits for room in the write buffer.
     */
    private int endRnrWait(final TcpConnection connection, final long sequence) throws IOException
    {
        final int offset = connection.reserve(TcpWire.RESPONSE_HEADER_LENGTH);
        if (offset < 0)
        {
            return HOLD;
        }
        writeResponseHeader(connection, offset, TcpWire.TYPE_RESPONSE, WorkCompletionStatus.RNR_RETRY_EXC_ERR,
            sequence, 0, TcpWire.RESPONSE_HEADER_LENGTH);
        requestsApplied = sequence + 1;
        requestsAcknowledged = sequence + 1;
        acknowledgementDuePass = NONE;
        connection.discardingRequests = true;
        connection.lastRnrNakNs = NONE;
        connection.rnrHeldSinceNs = NONE;
        return CONSUMED;
    }

    /**
     * Answer a SEND or WRITE with immediate that found no posted receive with an RNR NAK, at most once per
     * {@link #RNR_NAK_INTERVAL_NS} and only when the write buffer has room; the frame itself is held.
     */
    private void sendRnrNakIfDue(final TcpConnection connection, final long sequence, final long nowNs)
        throws IOException
    {
        if (connection.lastRnrNakNs == NONE || nowNs - connection.lastRnrNakNs >= RNR_NAK_INTERVAL_NS)
        {
            final int offset = connection.reserve(TcpWire.RESPONSE_HEADER_LENGTH);
            if (offset >= 0)
            {
                writeResponseHeader(connection, offset, TcpWire.TYPE_RNR_NAK, WorkCompletionStatus.SUCCESS,
                    sequence, 0, TcpWire.RESPONSE_HEADER_LENGTH);
                connection.lastRnrNakNs = nowNs;
                requestsAcknowledged = sequence; // an RNR NAK acknowledges every earlier request
            }
        }
    }

    /**
     * Apply an RDMA WRITE or WRITE with immediate: place the payload in the local region the rkey names, then for
     * the immediate consume a receive (flushed when the access check failed).
     *
     * @return the completion status, or {@code null} to hold the frame (the receive could not be completed yet).
     */
    private WorkCompletionStatus applyWrite(
        final TcpConnection connection,
        final ByteBuffer in,
        final int frame,
        final int frameLength,
        final WorkRequestOpcode opcode,
        final int flags,
        final long remoteAddress,
        final int rkey,
        final int length,
        final int immediate,
        final long payload)
    {
        WorkCompletionStatus status = WorkCompletionStatus.SUCCESS;
        if (length > 0)
        {
            final SoftMemoryRegion region = localRegions.lookup(rkey);
            if (null == region ||
                !region.permits(protectionDomainId, remoteAddress, length, AccessFlags.REMOTE_WRITE))
            {
                status = WorkCompletionStatus.REM_ACCESS_ERR;
            }
            else
            {
                if (opcode == WorkRequestOpcode.RDMA_WRITE && faults.crossWriteFraction() > 0)
                {
                    placeNextWriteFirstIfFaulted(connection, in, frame + frameLength);
                }
                SoftMemoryPlacement.place(connection.readSegment(), payload, region.segment(),
                    region.offsetOf(remoteAddress), length, faults.writePlacement());
            }
        }
        if (opcode == WorkRequestOpcode.RDMA_WRITE_WITH_IMM &&
            !consumeReceive(status == WorkCompletionStatus.SUCCESS ? status : WorkCompletionStatus.WR_FLUSH_ERR,
                WorkCompletionOpcode.RECV_RDMA_WITH_IMM, length, immediate, true, flags))
        {
            return null;
        }
        return status;
    }

    /**
     * Apply a SEND or SEND with immediate: place the payload in the next posted receive and complete it.
     *
     * @return the completion status for the requester, or {@code null} to hold the frame (the receive could not be
     * completed yet).
     */
    private WorkCompletionStatus applySend(
        final TcpConnection connection,
        final WorkRequestOpcode opcode,
        final int flags,
        final int length,
        final int immediate,
        final long payload)
    {
        WorkCompletionStatus status = WorkCompletionStatus.SUCCESS;
        final WorkCompletionStatus receiveStatus = placeReceive(connection, payload, length);
        if (receiveStatus == WorkCompletionStatus.LOC_LEN_ERR)
        {
            status = WorkCompletionStatus.REM_INV_REQ_ERR;
        }
        else if (receiveStatus != WorkCompletionStatus.SUCCESS)
        {
            status = WorkCompletionStatus.REM_OP_ERR;
        }
        if (!consumeReceive(receiveStatus, WorkCompletionOpcode.RECV, length, immediate,
            opcode == WorkRequestOpcode.SEND_WITH_IMM, flags))
        {
            return null;
        }
        return status;
    }

    /**
     * The checks an atomic must pass: an 8-byte aligned address in a region that permits remote atomics.
     */
    private WorkCompletionStatus atomicStatus(final SoftMemoryRegion region, final long remoteAddress)
    {
        if ((remoteAddress & (Long.BYTES - 1)) != 0)
        {
            return WorkCompletionStatus.REM_INV_REQ_ERR;
        }
        if (null == region ||
            !region.permits(protectionDomainId, remoteAddress, Long.BYTES, AccessFlags.REMOTE_ATOMIC))
        {
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
        return WorkCompletionStatus.SUCCESS;
    }

    /**
     * Apply a checked FETCH_AND_ADD or CMP_AND_SWP to the region.
     *
     * @return the value the location held before.
     */
    private static long applyAtomic(
        final ByteBuffer in,
        final int frame,
        final WorkRequestOpcode opcode,
        final SoftMemoryRegion region,
        final long remoteAddress)
    {
        final long compareAdd = in.getLong(frame + TcpWire.REQUEST_COMPARE_ADD_OFFSET);
        final long offset = region.offsetOf(remoteAddress);
        return opcode == WorkRequestOpcode.ATOMIC_FETCH_AND_ADD ?
            (long)LONG.getAndAdd(region.segment(), offset, compareAdd) :
            (long)LONG.compareAndExchange(region.segment(), offset, compareAdd,
                in.getLong(frame + TcpWire.REQUEST_SWAP_OFFSET));
    }

    /**
     * A response of its own: READ data, an atomic result, or a NAK; the request counts as applied and acknowledged,
     * and a responder that NAKs goes to ERR.
     */
    private void respond(
        final TcpConnection connection,
        final WorkCompletionStatus status,
        final long sequence,
        final long value,
        final SoftMemoryRegion readRegion,
        final long remoteAddress,
        final int length)
        throws IOException
    {
        final int payloadLength = null != readRegion ? length : 0;
        final int responseLength = TcpWire.RESPONSE_HEADER_LENGTH + payloadLength;
        final int offset = connection.reserve(responseLength);
        writeResponseHeader(connection, offset, TcpWire.TYPE_RESPONSE, status, sequence, value, responseLength);
        if (payloadLength > 0)
        {
            VarHandle.acquireFence();
            MemorySegment.copy(readRegion.segment(), readRegion.offsetOf(remoteAddress),
                connection.writeSegment(), offset + TcpWire.RESPONSE_HEADER_LENGTH, payloadLength);
        }
        requestsApplied = sequence + 1;
        requestsAcknowledged = sequence + 1;
        acknowledgementDuePass = NONE;
        if (status != WorkCompletionStatus.SUCCESS)
        {
            // A responder that NAKs an access or invalid request goes to ERR, as on RC hardware.
            enterError();
        }
    }

    /**
     * @return true if a RECV is there for the SEND or WRITE_WITH_IMM at the head: the QP's own, or one of its SRQ,
     * claimed now and kept for that request until it is consumed.
     */
    private boolean receiveAvailable()
    {
        if (null == srq)
        {
            return receiveTail() > rqConsumed;
        }
        if (claimedSrqIndex < 0)
        {
            claimedSrqIndex = srq.claim();
        }
        return claimedSrqIndex >= 0;
    }

    /**
     * Copy a SEND's payload into the RECV it consumes, after the local checks.
     *
     * @return SUCCESS, LOC_LEN_ERR or LOC_PROT_ERR.
     */
    private WorkCompletionStatus placeReceive(final TcpConnection connection, final long payload, final int length)
    {
        if (null != srq)
        {
            return placeSharedReceive(claimedSrqIndex, connection.readSegment(), payload, length);
        }
        final int slot = (int)(rqConsumed % rqDepth);
        if (length > rqLength[slot])
        {
            return WorkCompletionStatus.LOC_LEN_ERR;
        }
        if (length > 0)
        {
            final SoftMemoryRegion region = localRegions.lookup(rqLkey[slot]);
            if (null == region ||
                !region.permits(protectionDomainId, rqAddress[slot], length, AccessFlags.LOCAL_WRITE))
            {
                return WorkCompletionStatus.LOC_PROT_ERR;
            }
            VarHandle.releaseFence();
            MemorySegment.copy(connection.readSegment(), payload, region.segment(),
                region.offsetOf(rqAddress[slot]), length);
        }
        return WorkCompletionStatus.SUCCESS;
    }

    /**
     * Report the RECV the request at the head consumed (see {@link #receiveAvailable()}).
     *
     * @return false if the receive CQ is full: hold the request and retry.
     */
    private boolean consumeReceive(
        final WorkCompletionStatus status, final WorkCompletionOpcode opcode, final int length, final int immediate,
        final boolean hasImmediate, final int flags)
    {
        final boolean solicited = (flags & SendFlags.SOLICITED) != 0;
        if (null != srq)
        {
            if (!completeSharedReceive(claimedSrqIndex, status, opcode, length, immediate, hasImmediate, solicited))
            {
                return false;
            }
            claimedSrqIndex = -1;
            return true;
        }
        if (status == WorkCompletionStatus.WR_FLUSH_ERR)
        {
            return true; // a failed WRITE_WITH_IMM consumes no RECV of the QP's own queue
        }
        if (!completeReceive(rqConsumed, status, opcode, length, immediate, hasImmediate, solicited))
        {
            return false;
        }
        rqConsumed++;
        return true;
    }

    /**
     * The cross-WRITE placement fault on the responder: when it picks the plain WRITE being applied and the next
     * request, already whole in the read buffer at {@code next}, is a WRITE or WRITE_WITH_IMM that passes its checks,
     * place the next one's bytes first and hold. The next request is still applied normally afterwards, so its
     * immediate (and every completion) stays in order.
     */
    private void placeNextWriteFirstIfFaulted(final TcpConnection connection, final ByteBuffer in, final int next)
    {
        if (in.limit() - next < TcpWire.REQUEST_HEADER_LENGTH || in.get(next + TcpWire.FRAME_TYPE_OFFSET) !=
            TcpWire.TYPE_REQUEST)
        {
            return;
        }
        final int frameLength = in.getInt(next + TcpWire.FRAME_LENGTH_OFFSET);
        final int opcode = in.get(next + TcpWire.REQUEST_OPCODE_OFFSET);
        final int length = in.getInt(next + TcpWire.REQUEST_LENGTH_OFFSET);
        if (in.limit() - next < frameLength || length <= 0 || frameLength != TcpWire.REQUEST_HEADER_LENGTH + length ||
            (opcode != WorkRequestOpcode.RDMA_WRITE.ordinal() &&
            opcode != WorkRequestOpcode.RDMA_WRITE_WITH_IMM.ordinal()))
        {
            return;
        }
        final long remoteAddress = in.getLong(next + TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET);
        final SoftMemoryRegion region = localRegions.lookup(in.getInt(next + TcpWire.REQUEST_RKEY_OFFSET));
        if (null == region || !region.permits(protectionDomainId, remoteAddress, length, AccessFlags.REMOTE_WRITE) ||
            !faults.delayThisWrite())
        {
            return;
        }
        SoftMemoryPlacement.place(connection.readSegment(), next + TcpWire.REQUEST_HEADER_LENGTH, region.segment(),
            region.offsetOf(remoteAddress), length, faults.writePlacement());
        SoftMemoryPlacement.hold(faults.crossWriteHoldNs());
    }

    private void onRequestApplied(final long sequence, final int flags, final long nowNs)
    {
        if (requestsAcknowledged == sequence)
        {
            unacknowledgedSinceNs = nowNs; // the oldest unacknowledged request
        }
        requestsApplied = sequence + 1;
        if ((flags & SendFlags.SIGNALED) != 0 && NONE == acknowledgementDuePass)
        {
            acknowledgementDuePass = receivePasses; // the requester waits for this completion
        }
    }

    /**
     * Acknowledge every applied request at once when one of them is awaited, or when the oldest unacknowledged one
     * has waited {@link #MAX_ACK_DELAY_NS} (or a quarter of the retry timeout). An application thread acknowledges
     * an awaited request on its pass after the one that applied it: first it looks at what landed.
     */
    private int acknowledge(final TcpConnection connection, final long nowNs, final boolean application)
        throws IOException
    {
        final long duePass = acknowledgementDuePass;
        final boolean due = NONE != duePass && (!application || receivePasses > duePass);
        if (requestsApplied <= requestsAcknowledged || QueuePairState.ERR == state ||
            (!due && nowNs - unacknowledgedSinceNs < ackDelayNs))
        {
            return 0;
        }
        final int offset = connection.reserve(TcpWire.RESPONSE_HEADER_LENGTH);
        if (offset < 0)
        {
            return 0;
        }
        writeResponseHeader(connection, offset, TcpWire.TYPE_ACK, WorkCompletionStatus.SUCCESS,
            requestsApplied - 1, 0, TcpWire.RESPONSE_HEADER_LENGTH);
        requestsAcknowledged = requestsApplied;
        acknowledgementDuePass = NONE;
        return 1;
    }

    private static void writeResponseHeader(
        final TcpConnection connection,
        final int offset,
        final byte type,
        final WorkCompletionStatus status,
        final long sequence,
        final long value,
        final int frameLength)
    {
        final ByteBuffer out = connection.writeBuffer();
        out.putInt(offset + TcpWire.FRAME_LENGTH_OFFSET, frameLength);
        out.put(offset + TcpWire.FRAME_TYPE_OFFSET, type);
        out.put(offset + TcpWire.RESPONSE_STATUS_OFFSET, (byte)status.ordinal());
        out.putLong(offset + TcpWire.RESPONSE_SEQUENCE_OFFSET, sequence);
        out.putLong(offset + TcpWire.RESPONSE_VALUE_OFFSET, value);
    }

    // ---------------------------------------------------------------------------------------------------
    // Requester: responses on the connection this QP dialed.

    private int receiveResponses(final long nowNs, final boolean application, final boolean mayRead)
    {
        final TcpConnection connection = outbound;
        if (null == connection || !connection.isUsable())
        {
            return 0;
        }
        int work = 0;
        try
        {
            // An application poll reads responses when they are awaited (a signaled WR, a READ, an atomic, an RNR
            // wait) and otherwise now and then (NAKs of unsignaled WRs, cumulative ACKs, a lost peer).
            final boolean awaited = sqCompleted <= lastAwaitedSequence || rnrSinceNs != NONE;
            if (!application ||
                (mayRead && (awaited || nowNs - connection.lastReadNs >= IDLE_RESPONSE_READ_INTERVAL_NS)))
            {
                connection.lastReadNs = nowNs;
                final int read = connection.read();
                if (read < 0)
                {
                    lose(connection);
                    return 1;
                }
                if (read > 0)
                {
                    work++;
                }
            }
            if (connection.hasBufferedInput())
            {
                work += processResponses(connection, nowNs);
            }
        }
        catch (final IOException ex)
        {
            lose(connection);
            work++;
        }
        return work;
    }

    private int processResponses(final TcpConnection connection, final long nowNs)
    {
        final ByteBuffer in = connection.startReading();
        int work = 0;
        try
        {
            while (in.remaining() >= 8)
            {
                final int frame = in.position();
                final int frameLength = in.getInt(frame + TcpWire.FRAME_LENGTH_OFFSET);
                if (frameLength < TcpWire.RESPONSE_HEADER_LENGTH || frameLength > maxFrameLength)
                {
                    lose(connection);
                    return work + 1;
                }
                if (in.remaining() < frameLength)
                {
                    connection.ensureReadCapacity(frameLength);
                    break;
                }
                final int outcome = onResponse(connection, in, frame, frameLength, nowNs);
                if (outcome == HOLD)
                {
                    break;
                }
                if (outcome == DROP)
                {
                    lose(connection);
                    return work + 1;
                }
                in.position(frame + frameLength);
                work++;
            }
        }
        finally
        {
            if (!connection.isClosed())
            {
                connection.doneReading();
            }
        }
        return work;
    }

    /**
     * Take one response: complete every WR before the one it names (they succeeded), then that one as it says.
     *
     * @return {@link #CONSUMED}, {@link #HOLD} (CQ full; the WRs completed so far stay completed and the frame is
     * taken again) or {@link #DROP} (a response for nothing outstanding: protocol error).
     */
    int onResponse(
        final TcpConnection connection, final ByteBuffer in, final int frame, final int frameLength, final long nowNs)
    {
        final byte type = in.get(frame + TcpWire.FRAME_TYPE_OFFSET);
        final long sequence = in.getLong(frame + TcpWire.RESPONSE_SEQUENCE_OFFSET);
        if (state == QueuePairState.ERR)
        {
            return CONSUMED;
        }
        if (sequence >= sqTransmitted ||
            (type != TcpWire.TYPE_RESPONSE && type != TcpWire.TYPE_RNR_NAK && type != TcpWire.TYPE_ACK))
        {
            return DROP;
        }
        if (sequence < sqCompleted)
        {
            return type == TcpWire.TYPE_ACK ? CONSUMED : DROP;
        }
        lastResponseNs = nowNs;
        while (sqCompleted < sequence)
        {
            if (!completeSend(sqCompleted, WorkCompletionStatus.SUCCESS, sqLength[(int)(sqCompleted % sqDepth)]))
            {
                return HOLD;
            }
            sqCompleted++;
            rnrSinceNs = NONE;
        }
        if (type == TcpWire.TYPE_RNR_NAK)
        {
            if (rnrSinceNs == NONE)
            {
                rnrSinceNs = nowNs;
            }
            return CONSUMED;
        }

        final int slot = (int)(sequence % sqDepth);
        final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[slot]];
        final int statusOrdinal = in.get(frame + TcpWire.RESPONSE_STATUS_OFFSET);
        if (statusOrdinal < 0 || statusOrdinal >= STATUSES.length)
        {
            return DROP;
        }
        WorkCompletionStatus status = type == TcpWire.TYPE_ACK ? WorkCompletionStatus.SUCCESS : STATUSES[statusOrdinal];
        if (status == WorkCompletionStatus.SUCCESS)
        {
            if (opcode == WorkRequestOpcode.RDMA_READ)
            {
                if (type != TcpWire.TYPE_RESPONSE || frameLength != TcpWire.RESPONSE_HEADER_LENGTH + sqLength[slot])
                {
                    return DROP;
                }
                if (sqLength[slot] > 0)
                {
                    final SoftMemoryRegion region = localRegion(slot, AccessFlags.LOCAL_WRITE);
                    if (null == region)
                    {
                        status = WorkCompletionStatus.LOC_PROT_ERR;
                    }
                    else
                    {
                        VarHandle.releaseFence();
                        MemorySegment.copy(connection.readSegment(), frame + TcpWire.RESPONSE_HEADER_LENGTH,
                            region.segment(), region.offsetOf(sqLocalAddress[slot]), sqLength[slot]);
                    }
                }
            }
            else if (opcode.isAtomic())
            {
                if (type != TcpWire.TYPE_RESPONSE)
                {
                    return DROP;
                }
                final SoftMemoryRegion region = localRegion(slot, AccessFlags.LOCAL_WRITE);
                if (null == region)
                {
                    status = WorkCompletionStatus.LOC_PROT_ERR;
                }
                else
                {
                    region.segment().set(ValueLayout.JAVA_LONG_UNALIGNED, region.offsetOf(sqLocalAddress[slot]),
                        in.getLong(frame + TcpWire.RESPONSE_VALUE_OFFSET));
                }
            }
        }
        if (status != WorkCompletionStatus.SUCCESS)
        {
            // As on hardware, the QP is in ERR before its error completion can be polled: flushErrors() reports this
            // WR with headFailure and flushes the ones behind it.
            headFailure = status;
            enterError();
            return CONSUMED;
        }
        if (!completeSend(sequence, status, sqLength[slot]))
        {
            return HOLD;
        }
        sqCompleted++;
        rnrSinceNs = NONE;
        return CONSUMED;
    }

    // ---------------------------------------------------------------------------------------------------
    // Errors.

    /**
     * A connection to or from the peer is gone (peer died, link dropped): the QP errs; the WR at the head
     * of the send queue, if any, fails with RETRY_EXC_ERR and the rest flush.
     */
    void onConnectionLost(final TcpConnection connection)
    {
        if (state != QueuePairState.ERR && sqCompleted < Math.max(sqTransmitted, sendTail()) && null == headFailure)
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

    private int flushErrors()
    {
        int work = 0;
        final long tail = sendTail();
        while (sqCompleted < tail)
        {
            final WorkCompletionStatus status;
            final WorkCompletionStatus failure = headFailure;
            if (sqCompleted == localFailureIndex)
            {
                status = localFailureStatus;
            }
            else if (null != failure)
            {
                status = failure;
            }
            else
            {
                status = WorkCompletionStatus.WR_FLUSH_ERR;
            }
            if (!completeSend(sqCompleted, status, sqLength[(int)(sqCompleted % sqDepth)]))
            {
                break;
            }
            if (sqCompleted == localFailureIndex)
            {
                localFailureIndex = -1;
            }
            headFailure = null;
            sqCompleted++;
            work++;
        }
        sqTransmitted = Math.max(sqTransmitted, sqCompleted);
        if (claimedSrqIndex >= 0 && completeSharedReceive(claimedSrqIndex, WorkCompletionStatus.WR_FLUSH_ERR,
            WorkCompletionOpcode.RECV, 0, 0, false, false))
        {
            claimedSrqIndex = -1;
            work++;
        }
        final long receiveTail = receiveTail();
        while (rqConsumed < receiveTail &&
            completeReceive(rqConsumed, WorkCompletionStatus.WR_FLUSH_ERR, WorkCompletionOpcode.RECV, 0, 0, false))
        {
            rqConsumed++;
            work++;
        }
        return work;
    }
}
