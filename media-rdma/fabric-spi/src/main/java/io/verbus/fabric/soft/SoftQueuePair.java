package io.verbus.fabric.soft;

import io.verbus.common.VarHandles;
import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.PortAttributes;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.SharedReceiveQueue;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequest;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.fabric.WorkRequestOpcode;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Objects;

/**
 * What the soft providers' RC queue pairs share: the state machine, the send and receive queues as
 * primitive columns, post validation with the send-queue depth enforced, completion production, and
 * slot reclamation when completions are polled.
 * <p>
 * Indices grow without bound; slot {@code i % depth} holds WR {@code i}. The poster owns the tails and
 * publishes them with release stores; the provider's executor (shm progress or the tcp NIC thread) reads
 * them with acquire, runs WRs in order and produces completions; the CQ poller moves the reclaimed heads.
 */
public abstract class SoftQueuePair implements QueuePair, SoftCompletionQueue.SlotReclaimer
{
    /** Opcodes by ordinal, for executors decoding {@link #sqOpcode}. */
    protected static final WorkRequestOpcode[] WR_OPCODES = WorkRequestOpcode.values();
    /** An absolute view of the address space, for the INLINE copy that names no region (as verbs memcpy). */
    @SuppressWarnings("restricted")
    protected static final MemorySegment ALL_MEMORY = MemorySegment.NULL.reinterpret(Long.MAX_VALUE);

    private static final VarHandle SQ_TAIL = VarHandles.field(MethodHandles.lookup(), "sqTailPublished", long.class);
    private static final VarHandle SQ_RECLAIMED = VarHandles.field(MethodHandles.lookup(), "sqReclaimed", long.class);
    private static final VarHandle RQ_TAIL = VarHandles.field(MethodHandles.lookup(), "rqTailPublished", long.class);
    private static final VarHandle RQ_RECLAIMED = VarHandles.field(MethodHandles.lookup(), "rqReclaimed", long.class);

    protected final SoftDevice device;
    protected final SoftProtectionDomain protectionDomain;
    protected final int qpNumber;
    protected final int psn;
    protected final int protectionDomainId;
    protected final SoftCompletionQueue sendCq;
    protected final SoftCompletionQueue receiveCq;
    protected final SoftRegionTable localRegions;
    protected final int sqDepth;
    /** {@code sqDepth - 1} when it is a power of two (the usual case): a slot is then a mask, not a division. */
    private final long sqMask;
    protected final int rqDepth;
    protected final int maxInlineData;
    protected final long retryTimeoutNs;
    protected final int rnrRetryCount;
    protected final long rnrTimeoutNs;
    protected final FaultInjection faults;
    /** The shared receive queue this QP takes its receives from, or null for its own receive queue. */
    protected final SoftSharedReceiveQueue srq;

    // Send queue columns, slot = index % sqDepth.
    protected final byte[] sqOpcode;
    protected final long[] sqWrId;
    protected final int[] sqFlags;
    protected final long[] sqLocalAddress;
    protected final int[] sqLength;
    protected final int[] sqLkey;
    protected final long[] sqRemoteAddress;
    protected final int[] sqRkey;
    protected final int[] sqImmediate;
    protected final long[] sqCompareAdd;
    protected final long[] sqSwap;
    protected final long[] sqPostedNs;
    /** INLINE payloads, {@link #maxInlineData} bytes per slot, copied at post time. */
    protected final MemorySegment sqInline;

    // Receive queue columns, slot = index % rqDepth.
    protected final long[] rqWrId;
    protected final long[] rqAddress;
    protected final int[] rqLength;
    protected final int[] rqLkey;

    private long sqTail;
    private volatile long sqTailPublished;
    private volatile long sqReclaimed;
    private long rqTail;
    private volatile long rqTailPublished;
    private volatile long rqReclaimed;

    protected volatile QueuePairState state = QueuePairState.RESET;
    protected volatile QueuePairConnectionInfo remote;
    private volatile boolean closed;

    protected SoftQueuePair(
        final SoftDevice device,
        final SoftProtectionDomain protectionDomain,
        final QueuePairConfig config,
        final int qpNumber)
    {
        this.device = device;
        this.protectionDomain = protectionDomain;
        this.qpNumber = qpNumber;
        this.psn = device.random().nextInt(1 << 24);
        this.protectionDomainId = protectionDomain.id();
        this.sendCq = asSoft(config.sendCompletionQueue(), "sendCompletionQueue");
        this.receiveCq = asSoft(config.receiveCompletionQueue(), "receiveCompletionQueue");
        this.localRegions = device.regionTable();
        this.sqDepth = config.maxSendWorkRequests();
        this.sqMask = Integer.bitCount(sqDepth) == 1 ? sqDepth - 1 : -1;
        this.rqDepth = config.maxReceiveWorkRequests();
        this.maxInlineData = Math.max(config.maxInlineData(), 0);
        this.retryTimeoutNs = config.retryTimeoutNs();
        this.rnrRetryCount = config.rnrRetryCount();
        this.rnrTimeoutNs = config.rnrTimeoutNs();
        this.faults = device.faultInjection();
        this.srq = asSoft(config.sharedReceiveQueue(), protectionDomain);

        sqOpcode = new byte[sqDepth];
        sqWrId = new long[sqDepth];
        sqFlags = new int[sqDepth];
        sqLocalAddress = new long[sqDepth];
        sqLength = new int[sqDepth];
        sqLkey = new int[sqDepth];
        sqRemoteAddress = new long[sqDepth];
        sqRkey = new int[sqDepth];
        sqImmediate = new int[sqDepth];
        sqCompareAdd = new long[sqDepth];
        sqSwap = new long[sqDepth];
        sqPostedNs = new long[sqDepth];
        sqInline = Arena.ofAuto().allocate(Math.max(1L, (long)sqDepth * maxInlineData), 64);

        rqWrId = new long[rqDepth];
        rqAddress = new long[rqDepth];
        rqLength = new int[rqDepth];
        rqLkey = new int[rqDepth];
    }

    private SoftSharedReceiveQueue asSoft(final SharedReceiveQueue queue, final SoftProtectionDomain pd)
    {
        if (null == queue)
        {
            return null;
        }
        if (!(queue instanceof SoftSharedReceiveQueue soft) || !device.ownsSharedReceiveQueue(soft))
        {
            throw new IllegalArgumentException(
                "sharedReceiveQueue was not created by device " + device.attributes().name() + " or is closed");
        }
        if (soft.protectionDomain() != pd)
        {
            throw new IllegalArgumentException("sharedReceiveQueue belongs to another protection domain");
        }
        return soft;
    }

    private SoftCompletionQueue asSoft(final CompletionQueue cq, final String name)
    {
        Objects.requireNonNull(cq, name);
        if (!(cq instanceof SoftCompletionQueue soft) || !device.ownsCompletionQueue(soft))
        {
            throw new IllegalArgumentException(name + " was not created by device " + device.attributes().name());
        }
        return soft;
    }

    @Override
    public int qpNumber()
    {
        return qpNumber;
    }

    @Override
    public QueuePairState state()
    {
        return state;
    }

    @Override
    public QueuePairConnectionInfo localConnectionInfo()
    {
        final PortAttributes port = device.attributes().port(1);
        return new QueuePairConnectionInfo(qpNumber, psn, port.lid(), port.gid(), port.activeMtuBytes());
    }

    @Override
    public QueuePairConnectionInfo remoteConnectionInfo()
    {
        return remote;
    }

    @Override
    public synchronized void modifyToInit()
    {
        requireState(QueuePairState.RESET, "INIT");
        state = QueuePairState.INIT;
        onStateChanged(QueuePairState.INIT);
    }

    @Override
    public synchronized void modifyToReadyToReceive(final QueuePairConnectionInfo remote)
    {
        Objects.requireNonNull(remote, "remote");
        requireState(QueuePairState.INIT, "RTR");
        onReadyToReceive(remote);
        this.remote = remote;
        state = QueuePairState.RTR;
        onStateChanged(QueuePairState.RTR);
    }

    @Override
    public synchronized void modifyToReadyToSend()
    {
        requireState(QueuePairState.RTR, "RTS");
        onReadyToSend();
        state = QueuePairState.RTS;
        onStateChanged(QueuePairState.RTS);
    }

    @Override
    public void modifyToError()
    {
        enterError();
    }

    /**
     * Move to ERR from any thread; the executors then flush. Idempotent.
     */
    public void enterError()
    {
        if (state != QueuePairState.ERR)
        {
            state = QueuePairState.ERR;
            onStateChanged(QueuePairState.ERR);
            onError();
        }
    }

    private void requireState(final QueuePairState expected, final String target)
    {
        if (closed)
        {
            throw new IllegalStateException("QP " + qpNumber + " is closed");
        }
        if (state != expected)
        {
            throw new IllegalStateException(
                "QP " + qpNumber + " cannot move to " + target + " from " + state + ", needs " + expected);
        }
    }

    @Override
    public int postSend(final WorkRequestBatch batch)
    {
        batch.postedCount(0);
        final QueuePairState current = state;
        if (current != QueuePairState.RTS && current != QueuePairState.ERR)
        {
            return PostResult.INVALID_STATE;
        }

        final long reclaimed = (long)SQ_RECLAIMED.getAcquire(this);
        final long delayNs = faults.operationDelayNs();
        final long nowNs = delayNs > 0 ? System.nanoTime() : 0;
        long tail = sqTail;
        int result = PostResult.OK;
        int posted = 0;
        int stored = 0;
        final boolean executor = current == QueuePairState.RTS && delayNs <= 0 && beginExecuteInPlace(tail);
        boolean inPlace = executor;
        try
        {
            for (final int size = batch.size(); posted < size; posted++)
            {
                final WorkRequest wr = batch.get(posted);
                if (tail - reclaimed >= sqDepth)
                {
                    result = PostResult.SEND_QUEUE_FULL;
                    break;
                }
                result = validate(wr);
                if (result != PostResult.OK)
                {
                    break;
                }
                if (inPlace && executeInPlace(wr, tail))
                {
                    tail++;
                    continue;
                }
                inPlace = false; // this WR and every one after it go through the queue, so they run in order
                store(wr, sqSlot(tail), nowNs);
                stored++;
                tail++;
            }
            sqTail = tail;
            SQ_TAIL.setRelease(this, tail);
        }
        finally
        {
            if (executor)
            {
                endExecuteInPlace();
            }
        }
        batch.postedCount(posted);
        if (stored > 0)
        {
            onSendPosted();
        }
        return result;
    }

    private int validate(final WorkRequest wr)
    {
        final int flags = wr.flags();
        final int length = wr.length();
        final WorkRequestOpcode opcode = wr.opcode();
        if ((flags & ~SendFlags.ALL) != 0 || length < 0)
        {
            return PostResult.INVALID_REQUEST;
        }
        if ((flags & SendFlags.INLINE) != 0)
        {
            if (opcode == WorkRequestOpcode.RDMA_READ || opcode.isAtomic())
            {
                return PostResult.INVALID_REQUEST;
            }
            if (length > maxInlineData)
            {
                return PostResult.INLINE_TOO_LONG;
            }
        }
        if (opcode.isAtomic() && length != Long.BYTES)
        {
            return PostResult.INVALID_REQUEST;
        }
        return PostResult.OK;
    }

    private void store(final WorkRequest wr, final int slot, final long nowNs)
    {
        sqOpcode[slot] = (byte)wr.opcode().ordinal();
        sqWrId[slot] = wr.wrId();
        sqFlags[slot] = wr.flags();
        sqLocalAddress[slot] = wr.localAddress();
        sqLength[slot] = wr.length();
        sqLkey[slot] = wr.lkey();
        sqRemoteAddress[slot] = wr.remoteAddress();
        sqRkey[slot] = wr.rkey();
        sqImmediate[slot] = wr.immediateData();
        sqCompareAdd[slot] = wr.compareAdd();
        sqSwap[slot] = wr.swap();
        sqPostedNs[slot] = nowNs;
        if ((wr.flags() & SendFlags.INLINE) != 0 && wr.length() > 0)
        {
            MemorySegment.copy(ALL_MEMORY, wr.localAddress(), sqInline, (long)slot * maxInlineData, wr.length());
        }
    }

    @Override
    public int postReceive(final long wrId, final long address, final int length, final int lkey)
    {
        final QueuePairState current = state;
        if (current == QueuePairState.RESET)
        {
            return PostResult.INVALID_STATE;
        }
        if (length < 0 || null != srq)
        {
            return PostResult.INVALID_REQUEST;
        }
        final long tail = rqTail;
        if (tail - (long)RQ_RECLAIMED.getAcquire(this) >= rqDepth)
        {
            return PostResult.RECEIVE_QUEUE_FULL;
        }
        final int slot = (int)(tail % rqDepth);
        rqWrId[slot] = wrId;
        rqAddress[slot] = address;
        rqLength[slot] = length;
        rqLkey[slot] = lkey;
        rqTail = tail + 1;
        RQ_TAIL.setRelease(this, tail + 1);
        onReceivePosted(tail);
        return PostResult.OK;
    }

    /**
     * @param index a send WR's index (posting order).
     * @return its slot in the send queue columns.
     */
    protected final int sqSlot(final long index)
    {
        return sqMask >= 0 ? (int)(index & sqMask) : (int)(index % sqDepth);
    }

    /**
     * @return send WRs posted so far (acquire), for executors.
     */
    protected final long sendTail()
    {
        return (long)SQ_TAIL.getAcquire(this);
    }

    /**
     * @return RECVs posted so far (acquire), for executors.
     */
    protected final long receiveTail()
    {
        return (long)RQ_TAIL.getAcquire(this);
    }

    @Override
    public void onCompletionPolled(final boolean receiveQueue, final long index)
    {
        if (receiveQueue)
        {
            if (index + 1 > rqReclaimed)
            {
                RQ_RECLAIMED.setRelease(this, index + 1);
            }
        }
        else if (index + 1 > sqReclaimed)
        {
            SQ_RECLAIMED.setRelease(this, index + 1);
        }
    }

    /**
     * Report send WR {@code index}: errors always, successes only if signaled.
     *
     * @return false if the CQ is full and the caller must retry the same report later.
     */
    protected final boolean completeSend(final long index, final WorkCompletionStatus status, final int byteLength)
    {
        final int slot = sqSlot(index);
        if (status == WorkCompletionStatus.SUCCESS && (sqFlags[slot] & SendFlags.SIGNALED) == 0)
        {
            return true;
        }
        return sendCq.offer(
            sqWrId[slot], status, WR_OPCODES[sqOpcode[slot]].completionOpcode(), byteLength, 0, false,
            qpNumber, this, false, index);
    }

    /**
     * Report RECV {@code index}.
     *
     * @return false if the CQ is full and the caller must retry the same report later.
     */
    protected final boolean completeReceive(
        final long index,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate)
    {
        return completeReceive(index, status, opcode, byteLength, immediate, hasImmediate, false);
    }

    /**
     * Report RECV {@code index} of the QP's own receive queue.
     *
     * @param solicited true if the peer posted the WR with SOLICITED.
     * @return false if the CQ is full and the caller must retry the same report later.
     */
    protected final boolean completeReceive(
        final long index,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate,
        final boolean solicited)
    {
        final int slot = (int)(index % rqDepth);
        return receiveCq.offer(
            rqWrId[slot], status, opcode, byteLength, immediate, hasImmediate, qpNumber, this, true, index, solicited);
    }

    /**
     * Report RECV {@code srqIndex} of the SRQ, claimed by this QP; its descriptor is free again once the completion
     * is polled (before the poll returns, so the application can repost the buffer at once).
     *
     * @return false if the CQ is full and the caller must retry the same report later (the RECV stays claimed).
     */
    protected final boolean completeSharedReceive(
        final long srqIndex,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate,
        final boolean solicited)
    {
        return receiveCq.offer(srq.wrId(srqIndex), status, opcode, byteLength, immediate, hasImmediate, qpNumber,
            srq, true, srqIndex, solicited);
    }

    /**
     * Copy a received payload into the buffer of RECV {@code srqIndex} of the SRQ after the local checks.
     *
     * @return SUCCESS, LOC_LEN_ERR (longer than the RECV) or LOC_PROT_ERR (bad lkey, PD, bounds or right).
     */
    protected final WorkCompletionStatus placeSharedReceive(
        final long srqIndex, final MemorySegment source, final long sourceOffset, final int length)
    {
        if (length > srq.length(srqIndex))
        {
            return WorkCompletionStatus.LOC_LEN_ERR;
        }
        if (length == 0)
        {
            return WorkCompletionStatus.SUCCESS;
        }
        final long address = srq.address(srqIndex);
        final SoftMemoryRegion region = localRegions.lookup(srq.lkey(srqIndex));
        if (null == region || !region.permits(protectionDomainId, address, length, AccessFlags.LOCAL_WRITE))
        {
            return WorkCompletionStatus.LOC_PROT_ERR;
        }
        VarHandle.releaseFence();
        MemorySegment.copy(source, sourceOffset, region.segment(), region.offsetOf(address), length);
        return WorkCompletionStatus.SUCCESS;
    }

    @Override
    public SharedReceiveQueue sharedReceiveQueue()
    {
        return srq;
    }

    /**
     * Check the local side of send WR slot: the lkey names a region of this PD covering the range with
     * the right the operation needs (LOCAL_WRITE where the device writes locally).
     *
     * @return the region, or null for a local protection error.
     */
    protected final SoftMemoryRegion localRegion(final int slot, final int requiredAccess)
    {
        return localRegion(sqLkey[slot], sqLocalAddress[slot], sqLength[slot], requiredAccess);
    }

    /**
     * @return the local region {@code lkey} names if it is this QP's PD's and covers the range with the access, else
     * null (a local protection error).
     */
    protected final SoftMemoryRegion localRegion(
        final int lkey, final long address, final int length, final int requiredAccess)
    {
        final SoftMemoryRegion region = localRegions.lookup(lkey);
        if (null == region || !region.permits(protectionDomainId, address, length, requiredAccess))
        {
            return null;
        }
        return region;
    }

    /**
     * @param slot send queue slot.
     * @return true if the WR carries its payload inline.
     */
    protected final boolean isInline(final int slot)
    {
        return (sqFlags[slot] & SendFlags.INLINE) != 0;
    }

    /**
     * Hook: may the poster run the WRs it is posting now, in its own thread, without storing them first? A provider
     * that says yes holds its send queue's executor from here until {@link #endExecuteInPlace()}, and says yes only
     * when nothing it was posted earlier is still waiting, so WRs still run in posting order.
     *
     * @param tail the queue index the first WR of this post takes.
     * @return true if {@link #executeInPlace} may be tried for this post's WRs.
     */
    protected boolean beginExecuteInPlace(final long tail)
    {
        return false;
    }

    /**
     * Hook: run one validated WR now, as its turn in the send queue would, and report its completion. A WR it
     * cannot finish here (an opcode it leaves to the queue, a check that fails, a full CQ) is not run or is marked
     * for the queue to finish; that WR and every later one of the post are then stored and run by the queue.
     *
     * @param wr    the WR, already validated.
     * @param index its send queue index.
     * @return true if it ran and its completion (if signaled) was reported.
     */
    protected boolean executeInPlace(final WorkRequest wr, final long index)
    {
        return false;
    }

    /**
     * Hook: give back the executor taken by a {@link #beginExecuteInPlace} that returned true; the WRs stored by
     * the same post, if any, are run next by {@link #onSendPosted()}.
     */
    protected void endExecuteInPlace()
    {
    }

    /**
     * Hook: bind to the peer (map its files, remember its NIC address). Control path, may throw.
     *
     * @param remote the peer's info.
     */
    protected abstract void onReadyToReceive(QueuePairConnectionInfo remote);

    /**
     * Hook: the state changed (shm mirrors it into the shared QP file).
     *
     * @param newState the new state.
     */
    protected void onStateChanged(final QueuePairState newState)
    {
    }

    /**
     * Hook: the send queue may start executing.
     */
    protected abstract void onReadyToSend();

    /**
     * Hook: the QP entered ERR.
     */
    protected abstract void onError();

    /**
     * Hook: WRs were posted (shm executes them now; tcp lets its NIC thread find them).
     */
    protected abstract void onSendPosted();

    /**
     * Hook: a RECV was posted.
     *
     * @param index its queue index.
     */
    protected abstract void onReceivePosted(long index);

    /**
     * Hook: release provider resources of a closing QP.
     */
    protected abstract void onClose();

    @Override
    public int maxSendWorkRequests()
    {
        return sqDepth;
    }

    @Override
    public int maxReceiveWorkRequests()
    {
        return rqDepth;
    }

    @Override
    public int maxInlineData()
    {
        return maxInlineData;
    }

    @Override
    public CompletionQueue sendCompletionQueue()
    {
        return sendCq;
    }

    @Override
    public CompletionQueue receiveCompletionQueue()
    {
        return receiveCq;
    }

    /**
     * @return true once closed.
     */
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        synchronized (this)
        {
            if (closed)
            {
                return;
            }
            closed = true;
            state = QueuePairState.ERR;
        }
        try
        {
            onClose();
        }
        finally
        {
            device.onQueuePairClosed(this);
        }
    }

    @Override
    public String toString()
    {
        return getClass().getSimpleName() + "{qpn=" + qpNumber + ", state=" + state + ", remote=" + remote + '}';
    }
}
