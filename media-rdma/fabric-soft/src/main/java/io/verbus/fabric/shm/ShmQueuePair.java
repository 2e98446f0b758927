package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequest;
import io.verbus.fabric.WorkRequestOpcode;
import io.verbus.fabric.soft.SoftCompletionQueue;
import io.verbus.fabric.soft.SoftMemoryPlacement;
import io.verbus.fabric.soft.SoftMemoryRegion;
import io.verbus.fabric.soft.SoftProtectionDomain;
import io.verbus.fabric.soft.SoftQueuePair;
import io.verbus.fabric.soft.SoftSharedReceiveQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.verbus.fabric.shm.ShmLayout.*;

/**
 * An RC QP of the shm provider. There is no NIC: the initiating process plays both NICs.
 * <p>
 * <b>Send queue</b>: WRs run in posting order in the poster's thread, at post time and again on each poll of either CQ
 * while one is blocked. A WRITE posted while nothing waits in the queue (with immediate too, when a receive is posted
 * and there is no shared receive queue) runs straight from the WR inside {@code postSend}, without being stored in the
 * queue first: that is the data path's common case, and the store and re-read were about half of what a two-WR post
 * cost. A WRITE checks the lkey locally and the rkey, PD, right and bounds against the region table the responder
 * publishes, then copies into the responder's region file mapped here (release fence first, so earlier WRITEs are
 * visible before it). READ copies back; atomics are hardware atomics on the shared mapping. SEND and WRITE_WITH_IMM
 * need a RECV the responder has published: if none is posted the WR waits (RNR) and fails with RNR_RETRY_EXC_ERR after
 * {@code rnrTimeoutNs * rnrRetryCount} unless the count is 7 (forever). The payload is deposited in the responder's
 * receive slot; the responder copies it into its RECV buffer when it polls.
 * <p>
 * <b>Liveness</b>: before the WRs of a post or a poll run, the peer device's heartbeat is checked; a peer silent
 * longer than the liveness timeout, a closed device or a destroyed / errored peer QP gives RETRY_EXC_ERR. The check
 * compares the peer's heartbeat with this device's own last heartbeat first and reads the clock only when that is not
 * conclusive, so a post normally makes no clock call.
 * <p>
 * Threading: the send queue (postSend and polling its CQ) belongs to one thread and the receive queue to
 * one thread; each side's progress is guarded so that an accidental second thread skips instead of racing.
 */
final class ShmQueuePair extends SoftQueuePair implements SoftCompletionQueue.Progress
{
    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long NOT_BLOCKED = Long.MIN_VALUE;
    private static final long CLOCK_NOT_READ = Long.MIN_VALUE;
    private static final long NO_SRQ_INDEX = -1;
    private static final ValueLayout.OfLong LONG_UNALIGNED = ValueLayout.JAVA_LONG_UNALIGNED;

    private final ShmDevice shmDevice;
    private final Path filePath;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment file;
    private final long slotBase;
    private final long slotLength;
    private final long maxMessageLength;
    private final AtomicBoolean sendBusy = new AtomicBoolean();
    private final AtomicBoolean receiveBusy = new AtomicBoolean();
    private final ShmRegionCache regionCache = new ShmRegionCache();

    private ShmPeer peer;
    private ShmRemoteQueuePair remoteQp;
    /** The peer's QP file (and SRQ header) mapped for this QP alone: unmapped when it closes. */
    private Arena remoteArena;
    private int remotePdId;
    private long sqNext;
    private long rqNext;
    private long deposited;
    private long blockedSinceNs = NOT_BLOCKED;
    private long clockNs = CLOCK_NOT_READ;
    private long targetOffset;
    private MemorySegment remoteSrq;
    private int remoteSrqDepth;
    private boolean completionPending;
    private WorkCompletionStatus pendingStatus;

    ShmQueuePair(
        final ShmDevice device, final SoftProtectionDomain pd, final QueuePairConfig config, final int qpNumber)
    {
        super(device, pd, config, qpNumber);
        this.shmDevice = device;
        this.maxMessageLength = device.attributes().maxMessageLength();
        this.filePath = device.directory().resolve(QP_FILE_PREFIX + qpNumber);
        final int slotCapacity = ShmDevice.SEND_SLOT_CAPACITY;
        this.file = createFile(filePath, qpFileLength(rqDepth, slotCapacity), arena);
        this.slotBase = qpHeaderLength(rqDepth);
        this.slotLength = qpSlotLength(slotCapacity);
        file.set(ValueLayout.JAVA_INT, QP_PD_OFFSET, protectionDomainId);
        file.set(ValueLayout.JAVA_INT, QP_RQ_DEPTH_OFFSET, rqDepth);
        file.set(ValueLayout.JAVA_INT, QP_SLOT_CAPACITY_OFFSET, slotCapacity);
        file.set(ValueLayout.JAVA_INT, QP_SRQ_OFFSET, null == srq ? 0 : ((ShmSharedReceiveQueue)srq).number());
        INT.setRelease(file, (long)QP_STATE_OFFSET, QueuePairState.RESET.code());
        sendCq.addProgress(this);
        if (receiveCq != sendCq)
        {
            receiveCq.addProgress(this);
        }
    }

    private static MemorySegment createFile(final Path path, final long length, final Arena arena)
    {
        try
        {
            return ShmFiles.createAndMap(path, length, arena, true);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            try
            {
                java.nio.file.Files.deleteIfExists(path);
            }
            catch (final java.io.IOException ignore)
            {
                // reporting the failure matters more
            }
            throw ex;
        }
    }

    @Override
    protected void onStateChanged(final QueuePairState newState)
    {
        if (!arena.scope().isAlive())
        {
            return;
        }
        INT.setRelease(file, (long)QP_STATE_OFFSET, newState.code());
    }

    @Override
    protected void onReadyToReceive(final QueuePairConnectionInfo remote)
    {
        final ShmPeer newPeer = shmDevice.acquirePeer(remote.gid());
        final Arena newRemoteArena = Arena.ofShared();
        try
        {
            remoteQp = newPeer.openQueuePair(remote.qpNumber(), newRemoteArena);
            remotePdId = remoteQp.protectionDomainId();
            regionCache.clear();
            final int srqNumber = remoteQp.sharedReceiveQueueNumber();
            if (srqNumber != 0)
            {
                remoteSrq = newPeer.openSharedReceiveQueue(srqNumber, newRemoteArena);
                remoteSrqDepth = remoteSrq.get(ValueLayout.JAVA_INT, SoftSharedReceiveQueue.DEPTH_OFFSET);
            }
        }
        catch (final RuntimeException | InternalError ex)
        {
            newRemoteArena.close();
            shmDevice.releasePeer(newPeer);
            if (ex instanceof RuntimeException runtime)
            {
                throw runtime;
            }
            // The peer's QP file was truncated under the mapping (SIGBUS, which the JVM raises as InternalError).
            throw new FabricException("shm: the peer's QP " + remote.qpNumber() + " file cannot be read: " + ex, ex);
        }
        peer = newPeer;
        remoteArena = newRemoteArena;
    }

    @Override
    protected void onReadyToSend()
    {
    }

    @Override
    protected void onError()
    {
    }

    @Override
    protected void onSendPosted()
    {
        progressSend();
    }

    @Override
    protected void onReceivePosted(final long index)
    {
        file.set(ValueLayout.JAVA_INT, QP_RECV_LENGTHS_OFFSET + 4L * (int)(index % rqDepth),
            rqLength[(int)(index % rqDepth)]);
        LONG.setRelease(file, (long)QP_RECV_POSTED_OFFSET, index + 1);
        progressReceive();
    }

    @Override
    public int progress()
    {
        if (hasNothingToProgress())
        {
            return 0;
        }
        return progressSend() + progressReceive();
    }

    /**
     * Every duty cycle of both media ends calls {@link #progress()} on each of its QPs, and almost always finds nothing
     * to do; but each side's flag is a compare-and-set, a full fence, so an idle call cost two. This looks first,
     * without the flags: no WR waits in the send queue, the peer deposited nothing not yet taken, and neither this
     * side nor the peer put the QP in ERR. A value read stale here only leaves the work to the next call (or to the
     * poster, which runs its own WRs), as a call that lost the flag to another thread does.
     */
    private boolean hasNothingToProgress()
    {
        if (isClosed())
        {
            return true; // the flagged path would find nothing to do either
        }
        if (state == QueuePairState.ERR || completionPending || sqNext != sendTail())
        {
            return false;
        }
        try
        {
            return (int)INT.getAcquire(file, (long)QP_STATE_OFFSET) != QueuePairState.ERR.code() &&
                rqNext >= (long)LONG.getAcquire(file, (long)QP_DEPOSITED_OFFSET);
        }
        catch (final RuntimeException | InternalError ex)
        {
            // Closed while we looked: the mapping is gone, and so is the work. Else (a file that faults) the flagged
            // path meets the same fault, and reports it as a lost connection.
            return isClosed();
        }
    }

    private void adoptSharedState()
    {
        if ((int)INT.getAcquire(file, (long)QP_STATE_OFFSET) == QueuePairState.ERR.code() &&
            state != QueuePairState.ERR)
        {
            enterError();
        }
    }

    int progressSend()
    {
        if (faults.isKilled() || !sendBusy.compareAndSet(false, true))
        {
            return 0;
        }
        try
        {
            if (isClosed())
            {
                return 0; // checked after taking the flag: close() sets closed, then waits for the flag (Dekker)
            }
            adoptSharedState();
            final long tail = sendTail();
            if (sqNext == tail)
            {
                return 0;
            }
            clockNs = CLOCK_NOT_READ; // read at most once per call, and only by a path that needs it
            final long delayNs = faults.operationDelayNs();
            // The responder's liveness and state are checked once per call, not per WR: a chain posted together
            // meets one peer state, as one burst on a wire would.
            WorkCompletionStatus peerStatus = null;
            int work = 0;
            while (sqNext < tail)
            {
                final int slot = sqSlot(sqNext);
                final WorkCompletionStatus status;
                if (completionPending)
                {
                    status = pendingStatus;
                }
                else if (state == QueuePairState.ERR)
                {
                    status = WorkCompletionStatus.WR_FLUSH_ERR;
                }
                else
                {
                    if (delayNs > 0 && nowNs() - sqPostedNs[slot] < delayNs)
                    {
                        break;
                    }
                    if (null == peerStatus)
                    {
                        peerStatus = checkResponderGuarded();
                        if (null == peerStatus)
                        {
                            break; // the responder is not ready yet: wait
                        }
                    }
                    status = WorkCompletionStatus.SUCCESS == peerStatus ? executeGuarded(slot) : peerStatus;
                    if (null == status)
                    {
                        break;
                    }
                    if (status != WorkCompletionStatus.SUCCESS)
                    {
                        enterError();
                    }
                }
                if (!completeSend(sqNext, status, sqLength[slot]))
                {
                    completionPending = true;
                    pendingStatus = status;
                    break;
                }
                completionPending = false;
                sqNext++;
                work++;
            }
            return work;
        }
        finally
        {
            sendBusy.lazySet(false); // a release store: a volatile one would be a full fence on every post
        }
    }

    /**
     * The common case of a post, run without the queue: nothing earlier is waiting, no fault is injected that needs
     * the queue (a delay, a cross-WRITE reorder), and the responder is surely alive and ready, as the queue's own
     * per-call check would find it. Anything less is left to {@link #progressSend()}, which makes the full check.
     */
    @Override
    protected boolean beginExecuteInPlace(final long tail)
    {
        if (faults.isKilled() || faults.crossWriteFraction() > 0 || !sendBusy.compareAndSet(false, true))
        {
            return false;
        }
        boolean began = false;
        try
        {
            if (!isClosed() && !completionPending && sqNext == tail && null != remoteQp)
            {
                adoptSharedState();
                final int remoteState = remoteQp.state();
                began = state == QueuePairState.RTS &&
                    (remoteState == QueuePairState.RTS.code() || remoteState == QueuePairState.RTR.code()) &&
                    peer.isSurelyAlive(shmDevice.lastBeatNs(), shmDevice.heartbeatPeriodNs());
            }
        }
        catch (final RuntimeException | InternalError ex)
        {
            began = false; // the peer's file misbehaves: the queue's guarded check reports it
        }
        if (!began)
        {
            sendBusy.lazySet(false);
        }
        return began;
    }

    /**
     * A WRITE (or, without a shared receive queue, a WRITE with immediate that finds a receive posted) run at post
     * time, from the WR itself: the same checks, placement and deposit as {@link #executeOutbound}, minus the copy
     * into the queue (an INLINE payload is read where the poster keeps it, which is the moment verbs would copy it).
     * A WR that fails a check, or has to wait for a receive, is left to the queue, which runs it again and reports
     * the failure or waits as it always does: nothing of it was placed or deposited, or the same bytes are placed
     * again.
     */
    @Override
    protected boolean executeInPlace(final WorkRequest wr, final long index)
    {
        final int length = wr.length();
        final WorkRequestOpcode opcode = wr.opcode();
        final boolean withImmediate = opcode == WorkRequestOpcode.RDMA_WRITE_WITH_IMM;
        if ((opcode != WorkRequestOpcode.RDMA_WRITE && !withImmediate) || length > maxMessageLength ||
            (withImmediate && null != remoteSrq))
        {
            return false;
        }
        final int flags = wr.flags();
        try
        {
            // Read inside the try: the peer's QP file can fault (truncated by the peer), and a throw here would leave
            // the WRs run before it in this batch past the queue's published tail, never completed.
            if (withImmediate && remoteQp.receivesPosted() <= deposited)
            {
                return false;
            }
            if (length > 0)
            {
                final MemorySegment source;
                final long sourceOffset;
                if ((flags & SendFlags.INLINE) != 0)
                {
                    source = ALL_MEMORY;
                    sourceOffset = wr.localAddress();
                }
                else
                {
                    final SoftMemoryRegion region = localRegion(wr.lkey(), wr.localAddress(), length, 0);
                    if (null == region)
                    {
                        return false;
                    }
                    source = region.segment();
                    sourceOffset = region.offsetOf(wr.localAddress());
                }
                final MemorySegment target = remoteTarget(wr.rkey(), wr.remoteAddress(), length);
                if (null == target || !place(source, sourceOffset, target, targetOffset, length))
                {
                    return false;
                }
            }
            if (withImmediate)
            {
                remoteQp.deposit(deposited, null, 0, 0, SLOT_STATUS_OK, WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code(),
                    length, wr.immediateData(), true, NO_SRQ_INDEX, (flags & SendFlags.SOLICITED) != 0);
                deposited++;
            }
        }
        catch (final RuntimeException | InternalError ex)
        {
            return false;
        }
        sqNext = index + 1;
        if ((flags & SendFlags.SIGNALED) != 0 && !sendCq.offer(wr.wrId(), WorkCompletionStatus.SUCCESS,
            opcode.completionOpcode(), length, 0, false, qpNumber, this, false, index))
        {
            sqNext = index; // ran, but the CQ is full: the queue reports it without running it again
            completionPending = true;
            pendingStatus = WorkCompletionStatus.SUCCESS;
            return false;
        }
        return true;
    }

    @Override
    protected void endExecuteInPlace()
    {
        sendBusy.lazySet(false);
    }

    /**
     * Runs one WR; whatever a peer's memory does to it (a file shrunk under its mapping faults as an
     * {@link InternalError}, a geometry the checks missed as a bounds exception) fails this WR and puts both QPs in
     * ERR, as a remote access error does, instead of escaping into the posting thread on every post.
     */
    private WorkCompletionStatus executeGuarded(final int slot)
    {
        try
        {
            return execute(slot);
        }
        catch (final RuntimeException | InternalError ex)
        {
            if (null != remoteQp)
            {
                remoteQp.markError();
            }
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
    }

    /**
     * The responder's side of a WR's fate that does not depend on the WR: its device alive, its QP not in error.
     *
     * @return SUCCESS when WRs may run, null while the responder is not ready yet (wait), else the failure of every
     * waiting WR.
     */
    private WorkCompletionStatus checkResponderGuarded()
    {
        try
        {
            if (!peer.isSurelyAlive(shmDevice.lastBeatNs(), shmDevice.heartbeatPeriodNs()) &&
                !peer.isAlive(nowNs(), retryTimeoutNs))
            {
                return WorkCompletionStatus.RETRY_EXC_ERR;
            }
            final int remoteState = remoteQp.state();
            if (remoteState == QueuePairState.ERR.code() || remoteState == QP_DESTROYED)
            {
                return WorkCompletionStatus.RETRY_EXC_ERR;
            }
            if (remoteState != QueuePairState.RTR.code() && remoteState != QueuePairState.RTS.code())
            {
                return waitOrFail(nowNs(), retryTimeoutNs, false, WorkCompletionStatus.RETRY_EXC_ERR);
            }
            return WorkCompletionStatus.SUCCESS;
        }
        catch (final RuntimeException | InternalError ex)
        {
            if (null != remoteQp)
            {
                remoteQp.markError();
            }
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
    }

    /**
     * Run one WR, once {@link #checkResponderGuarded(long)} said the responder is ready.
     *
     * @return its status, or null while it must wait (RNR).
     */
    private WorkCompletionStatus execute(final int slot)
    {
        final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[slot]];
        final int length = sqLength[slot];
        if (length > maxMessageLength)
        {
            return WorkCompletionStatus.LOC_LEN_ERR;
        }
        return switch (opcode)
        {
            case RDMA_WRITE, RDMA_WRITE_WITH_IMM, SEND, SEND_WITH_IMM -> executeOutbound(opcode, slot, length);
            case RDMA_READ -> executeRead(slot, length);
            case ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP -> executeAtomic(opcode, slot);
        };
    }

    private WorkCompletionStatus executeOutbound(
        final WorkRequestOpcode opcode, final int slot, final int length)
    {
        final MemorySegment source = source(slot);
        if (null == source)
        {
            return WorkCompletionStatus.LOC_PROT_ERR;
        }
        final long sourceOffset = sourceOffset(slot);

        long srqIndex = NO_SRQ_INDEX;
        if (opcode.consumesReceive())
        {
            if (null != remoteSrq)
            {
                if (deposited - remoteQp.depositsConsumed() >= remoteQp.depositSlots())
                {
                    return null; // the responder has not taken its earlier deposits yet
                }
                srqIndex = SoftSharedReceiveQueue.claim(remoteSrq, remoteSrqDepth);
            }
            if (null != remoteSrq ? srqIndex < 0 : remoteQp.receivesPosted() <= deposited)
            {
                final boolean forever = rnrRetryCount == QueuePairConfig.RNR_RETRY_INFINITE;
                return waitOrFail(
                    nowNs(), rnrTimeoutNs * rnrRetryCount, forever, WorkCompletionStatus.RNR_RETRY_EXC_ERR);
            }
        }
        blockedSinceNs = NOT_BLOCKED;

        if (opcode.isOneSided())
        {
            if (length > 0)
            {
                if (opcode == WorkRequestOpcode.RDMA_WRITE)
                {
                    placeNextWriteFirstIfFaulted();
                }
                final MemorySegment target = remoteTarget(slot, length);
                if (null == target || !place(source, sourceOffset, target, targetOffset, length))
                {
                    remoteQp.markError();
                    if (srqIndex >= 0)
                    {
                        remoteQp.deposit(deposited++, null, 0, 0, SLOT_STATUS_FLUSH,
                            WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code(), 0, 0, false, srqIndex, false);
                    }
                    return WorkCompletionStatus.REM_ACCESS_ERR;
                }
            }
            if (opcode == WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
            {
                remoteQp.deposit(deposited++, null, 0, 0, SLOT_STATUS_OK,
                    WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code(), length, sqImmediate[slot], true, srqIndex,
                    isSolicited(slot));
            }
            return WorkCompletionStatus.SUCCESS;
        }

        final int receiveLength = srqIndex >= 0 ?
            SoftSharedReceiveQueue.postedLength(remoteSrq, remoteSrqDepth, srqIndex) :
            remoteQp.receiveLength(deposited);
        if (length > receiveLength)
        {
            remoteQp.deposit(deposited++, null, 0, 0, SLOT_STATUS_LENGTH_ERROR,
                WorkCompletionOpcode.RECV.code(), length, 0, false, srqIndex, false);
            remoteQp.markError();
            return WorkCompletionStatus.REM_INV_REQ_ERR;
        }
        if (length > remoteQp.slotCapacity())
        {
            if (srqIndex >= 0)
            {
                remoteQp.deposit(deposited++, null, 0, 0, SLOT_STATUS_FLUSH,
                    WorkCompletionOpcode.RECV.code(), 0, 0, false, srqIndex, false);
            }
            return WorkCompletionStatus.LOC_LEN_ERR;
        }
        VarHandle.releaseFence();
        remoteQp.deposit(deposited++, source, sourceOffset, length, SLOT_STATUS_OK, WorkCompletionOpcode.RECV.code(),
            length, sqImmediate[slot], opcode == WorkRequestOpcode.SEND_WITH_IMM, srqIndex, isSolicited(slot));
        return WorkCompletionStatus.SUCCESS;
    }

    private boolean isSolicited(final int slot)
    {
        return (sqFlags[slot] & SendFlags.SOLICITED) != 0;
    }

    /**
     * @return the bytes a SEND or WRITE in {@code slot} sends from (its inline copy or its local region), or null
     * for a local protection error.
     */
    private MemorySegment source(final int slot)
    {
        if (isInline(slot) || sqLength[slot] == 0)
        {
            return sqInline;
        }
        final SoftMemoryRegion region = localRegion(slot, 0);
        return null == region ? null : region.segment();
    }

    private long sourceOffset(final int slot)
    {
        if (isInline(slot) || sqLength[slot] == 0)
        {
            return (long)slot * maxInlineData;
        }
        return localRegions.lookup(sqLkey[slot]).offsetOf(sqLocalAddress[slot]);
    }

    /**
     * Resolve the responder's region a WRITE in {@code slot} targets; sets {@link #targetOffset}.
     *
     * @return the mapped file, or null on a remote access error.
     */
    private MemorySegment remoteTarget(final int slot, final int length)
    {
        return remoteTarget(sqRkey[slot], sqRemoteAddress[slot], length);
    }

    /**
     * Resolve the responder's region a WRITE of {@code length} bytes at {@code remoteAddress} targets; sets
     * {@link #targetOffset}.
     *
     * @return the mapped file, or null on a remote access error.
     */
    private MemorySegment remoteTarget(final int rkey, final long remoteAddress, final int length)
    {
        final long fileOffset = regionCache.resolve(peer, peer.regionTable(), rkey, remoteAddress, length,
            AccessFlags.REMOTE_WRITE, remotePdId);
        targetOffset = fileOffset;
        return fileOffset < 0 ? null : regionCache.segment();
    }

    /**
     * The cross-WRITE placement fault: when it picks the plain WRITE now executing and the next WR of the queue is
     * already posted and also a WRITE, place the next one's bytes first and hold. The next WR still executes
     * normally afterwards (placing the same bytes again and, for WRITE_WITH_IMM, depositing its immediate after this
     * WRITE's bytes), so completions and immediates stay in order. A next WR that fails its checks is left alone.
     */
    private void placeNextWriteFirstIfFaulted()
    {
        if (faults.crossWriteFraction() <= 0 || sqNext + 1 >= sendTail())
        {
            return;
        }
        final int next = sqSlot(sqNext + 1);
        final WorkRequestOpcode nextOpcode = WR_OPCODES[sqOpcode[next]];
        final int nextLength = sqLength[next];
        if ((nextOpcode != WorkRequestOpcode.RDMA_WRITE && nextOpcode != WorkRequestOpcode.RDMA_WRITE_WITH_IMM) ||
            nextLength <= 0 || !faults.delayThisWrite())
        {
            return;
        }
        final MemorySegment source = source(next);
        final MemorySegment target = null == source ? null : remoteTarget(next, nextLength);
        if (null != target && place(source, sourceOffset(next), target, targetOffset, nextLength))
        {
            SoftMemoryPlacement.hold(faults.crossWriteHoldNs());
        }
    }

    private WorkCompletionStatus executeRead(final int slot, final int length)
    {
        if (length == 0)
        {
            return WorkCompletionStatus.SUCCESS;
        }
        final SoftMemoryRegion region = localRegion(slot, AccessFlags.LOCAL_WRITE);
        if (null == region)
        {
            return WorkCompletionStatus.LOC_PROT_ERR;
        }
        final int rkey = sqRkey[slot];
        final long fileOffset = peer.resolve(
            rkey, sqRemoteAddress[slot], length, AccessFlags.REMOTE_READ, remoteQp.protectionDomainId());
        final MemorySegment remote =
            fileOffset < 0 ? null : peer.target(rkey, fileOffset, length, AccessFlags.REMOTE_READ);
        if (null == remote)
        {
            remoteQp.markError();
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
        VarHandle.acquireFence();
        try
        {
            MemorySegment.copy(remote, fileOffset, region.segment(), region.offsetOf(sqLocalAddress[slot]), length);
        }
        catch (final InternalError ex)
        {
            remoteQp.markError(); // the peer shrank its file under the mapping: SIGBUS
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
        return WorkCompletionStatus.SUCCESS;
    }

    private WorkCompletionStatus executeAtomic(final WorkRequestOpcode opcode, final int slot)
    {
        final SoftMemoryRegion region = localRegion(slot, AccessFlags.LOCAL_WRITE);
        if (null == region)
        {
            return WorkCompletionStatus.LOC_PROT_ERR;
        }
        final long remoteAddress = sqRemoteAddress[slot];
        if ((remoteAddress & (Long.BYTES - 1)) != 0)
        {
            remoteQp.markError();
            return WorkCompletionStatus.REM_INV_REQ_ERR;
        }
        final int rkey = sqRkey[slot];
        final long fileOffset = peer.resolve(
            rkey, remoteAddress, Long.BYTES, AccessFlags.REMOTE_ATOMIC, remoteQp.protectionDomainId());
        if (fileOffset < 0)
        {
            remoteQp.markError();
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
        final MemorySegment target = peer.target(rkey, fileOffset, Long.BYTES, AccessFlags.REMOTE_ATOMIC);
        if (null == target)
        {
            remoteQp.markError();
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
        final long original;
        try
        {
            original = opcode == WorkRequestOpcode.ATOMIC_FETCH_AND_ADD ?
                (long)LONG.getAndAdd(target, fileOffset, sqCompareAdd[slot]) :
                (long)LONG.compareAndExchange(target, fileOffset, sqCompareAdd[slot], sqSwap[slot]);
        }
        catch (final InternalError ex)
        {
            remoteQp.markError();
            return WorkCompletionStatus.REM_ACCESS_ERR;
        }
        region.segment().set(LONG_UNALIGNED, region.offsetOf(sqLocalAddress[slot]), original);
        return WorkCompletionStatus.SUCCESS;
    }

    /**
     * Places a WRITE's bytes into the peer's region.
     *
     * @return false when the peer shrank its file under the mapping (the kernel's SIGBUS, raised by the JVM as an
     * {@link InternalError}): one failed WR and a connection in ERR, not a dead thread or a stack trace per WR.
     */
    private boolean place(
        final MemorySegment source, final long sourceOffset, final MemorySegment target, final long targetOffset,
        final int length)
    {
        try
        {
            SoftMemoryPlacement.place(source, sourceOffset, target, targetOffset, length, faults.writePlacement());
            return true;
        }
        catch (final InternalError ex)
        {
            return false;
        }
    }

    /**
     * The real time, read at most once per {@link #progressSend()} call: most calls need none (a clock call costs
     * tens of nanoseconds in a VM, a tenth of a hop), only fault delays, RNR and a responder not ready yet do.
     */
    private long nowNs()
    {
        if (CLOCK_NOT_READ == clockNs)
        {
            clockNs = System.nanoTime();
        }
        return clockNs;
    }

    private WorkCompletionStatus waitOrFail(
        final long nowNs, final long allowanceNs, final boolean forever, final WorkCompletionStatus failure)
    {
        if (blockedSinceNs == NOT_BLOCKED)
        {
            blockedSinceNs = nowNs;
        }
        if (!forever && nowNs - blockedSinceNs >= allowanceNs)
        {
            blockedSinceNs = NOT_BLOCKED;
            return failure;
        }
        return null;
    }

    int progressReceive()
    {
        if (faults.isKilled() || !receiveBusy.compareAndSet(false, true))
        {
            return 0;
        }
        try
        {
            if (isClosed())
            {
                return 0; // checked after taking the flag: close() sets closed, then waits for the flag (Dekker)
            }
            adoptSharedState();
            int work = 0;
            final long depositedByPeer = (long)LONG.getAcquire(file, (long)QP_DEPOSITED_OFFSET);
            while (rqNext < depositedByPeer)
            {
                final int slot = (int)(rqNext % rqDepth);
                final long slotOffset = slotBase + slot * slotLength;
                final int slotStatus = file.get(ValueLayout.JAVA_INT, slotOffset + SLOT_STATUS_OFFSET);
                final int opcodeCode = file.get(ValueLayout.JAVA_INT, slotOffset + SLOT_OPCODE_OFFSET);
                final int byteLength = file.get(ValueLayout.JAVA_INT, slotOffset + SLOT_LENGTH_OFFSET);
                if (!isSoundDeposit(slotStatus, opcodeCode, byteLength))
                {
                    enterError(); // as a NIC given a malformed packet: the connection is lost, the receives flushed
                    break;
                }
                final WorkCompletionOpcode opcode = WorkCompletionOpcode.fromCode(opcodeCode);
                final int immediate = file.get(ValueLayout.JAVA_INT, slotOffset + SLOT_IMMEDIATE_OFFSET);
                final boolean hasImmediate =
                    file.get(ValueLayout.JAVA_INT, slotOffset + SLOT_HAS_IMMEDIATE_OFFSET) != 0;
                final boolean solicited = file.get(ValueLayout.JAVA_INT, slotOffset + SLOT_SOLICITED_OFFSET) != 0;
                if (null != srq)
                {
                    if (!consumeSharedReceive(slotOffset, slotStatus, opcode, byteLength, immediate, hasImmediate,
                        solicited))
                    {
                        return work;
                    }
                    rqNext++;
                    LONG.setRelease(file, (long)QP_CONSUMED_OFFSET, rqNext);
                    work++;
                    if (QueuePairState.ERR == state())
                    {
                        break; // an index the peer made up erred the QP: the count it wrote is not taken further
                    }
                    continue;
                }
                WorkCompletionStatus status = WorkCompletionStatus.SUCCESS;
                if (slotStatus == SLOT_STATUS_LENGTH_ERROR ||
                    (opcode == WorkCompletionOpcode.RECV && byteLength > rqLength[slot]))
                {
                    status = WorkCompletionStatus.LOC_LEN_ERR; // the second: the initiator's own check, skipped
                }
                else if (opcode == WorkCompletionOpcode.RECV && byteLength > 0)
                {
                    final SoftMemoryRegion region = localRegions.lookup(rqLkey[slot]);
                    if (null == region ||
                        !region.permits(protectionDomainId, rqAddress[slot], byteLength, AccessFlags.LOCAL_WRITE))
                    {
                        status = WorkCompletionStatus.LOC_PROT_ERR;
                    }
                    else
                    {
                        MemorySegment.copy(file, slotOffset + SLOT_HEADER_LENGTH,
                            region.segment(), region.offsetOf(rqAddress[slot]), byteLength);
                    }
                }
                if (!completeReceive(rqNext, status, opcode, byteLength, immediate, hasImmediate, solicited))
                {
                    return work;
                }
                if (status != WorkCompletionStatus.SUCCESS)
                {
                    enterError();
                }
                rqNext++;
                work++;
            }
            if (state == QueuePairState.ERR)
            {
                final long tail = receiveTail();
                while (rqNext < tail &&
                    completeReceive(rqNext, WorkCompletionStatus.WR_FLUSH_ERR, WorkCompletionOpcode.RECV, 0, 0, false))
                {
                    rqNext++;
                    work++;
                }
            }
            return work;
        }
        catch (final RuntimeException | InternalError ex)
        {
            enterError(); // the peer's file misbehaves (e.g. truncated under us): a lost connection, not a thrown poll
            return 1;
        }
        finally
        {
            receiveBusy.lazySet(false);
        }
    }

    /**
     * A deposit is the peer's to write, so nothing in it is taken on trust: the count of deposits must stay within
     * the receives posted here (an SRQ's are checked when its index is), the opcode must be a receive's, and a
     * SEND's payload must fit its slot (a length error carries no payload, only the SEND's length). A
     * WRITE_WITH_IMM's length describes the WRITE, placed already.
     */
    private boolean isSoundDeposit(final int slotStatus, final int opcodeCode, final int byteLength)
    {
        if (null == srq && rqNext >= receiveTail())
        {
            return false;
        }
        if (opcodeCode == WorkCompletionOpcode.RECV.code())
        {
            return byteLength >= 0 &&
                (byteLength <= ShmDevice.SEND_SLOT_CAPACITY || slotStatus == SLOT_STATUS_LENGTH_ERROR);
        }
        return opcodeCode == WorkCompletionOpcode.RECV_RDMA_WITH_IMM.code() && byteLength >= 0;
    }

    /**
     * Take one deposit into the SRQ receive its initiator claimed for it (the index is in the slot).
     *
     * @return false if the receive CQ is full (retry the same deposit later).
     */
    private boolean consumeSharedReceive(
        final long slotOffset, final int slotStatus, final WorkCompletionOpcode opcode, final int byteLength,
        final int immediate, final boolean hasImmediate, final boolean solicited)
    {
        final long srqIndex = file.get(ValueLayout.JAVA_LONG, slotOffset + SLOT_SRQ_INDEX_OFFSET);
        if (srqIndex < 0 || srqIndex >= srq.depth())
        {
            enterError(); // the initiator named no receive of this SRQ: a broken peer, the connection is lost
            return true;
        }
        WorkCompletionStatus status = WorkCompletionStatus.SUCCESS;
        if (slotStatus == SLOT_STATUS_LENGTH_ERROR)
        {
            status = WorkCompletionStatus.LOC_LEN_ERR;
        }
        else if (slotStatus == SLOT_STATUS_FLUSH)
        {
            status = WorkCompletionStatus.WR_FLUSH_ERR;
        }
        else if (opcode == WorkCompletionOpcode.RECV)
        {
            status = placeSharedReceive(srqIndex, file, slotOffset + SLOT_HEADER_LENGTH, byteLength);
        }
        if (!completeSharedReceive(srqIndex, status, opcode, byteLength, immediate, hasImmediate, solicited))
        {
            return false;
        }
        if (status != WorkCompletionStatus.SUCCESS)
        {
            enterError();
        }
        return true;
    }

    @Override
    protected void onClose()
    {
        sendCq.removeProgress(this);
        receiveCq.removeProgress(this);
        // closed is already set, so no new progress starts; wait (bounded) for one that is running to finish.
        final long deadlineNs = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(1);
        while ((sendBusy.get() || receiveBusy.get()) && System.nanoTime() < deadlineNs)
        {
            Thread.yield();
        }
        INT.setRelease(file, (long)QP_STATE_OFFSET, QP_DESTROYED);
        if (null != remoteArena)
        {
            remoteArena.close();
        }
        if (null != peer)
        {
            shmDevice.releasePeer(peer);
            peer = null;
        }
        arena.close();
        try
        {
            java.nio.file.Files.deleteIfExists(filePath);
        }
        catch (final java.io.IOException ignore)
        {
            // best effort: the device directory goes with the device
        }
    }
}
