package io.verbus.fabric.verbs;

import io.verbus.common.VarHandles;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.LinkLayer;
import io.verbus.fabric.PortAttributes;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.SharedReceiveQueue;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkRequest;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.fabric.WorkRequestOpcode;
import org.agrona.BitUtil;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.ThreadLocalRandom;

import static io.verbus.fabric.verbs.IbvConstants.IBV_ACCESS_LOCAL_WRITE;
import static io.verbus.fabric.verbs.IbvConstants.IBV_ACCESS_REMOTE_ATOMIC;
import static io.verbus.fabric.verbs.IbvConstants.IBV_ACCESS_REMOTE_READ;
import static io.verbus.fabric.verbs.IbvConstants.IBV_ACCESS_REMOTE_WRITE;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPS_ERR;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPS_INIT;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPS_RESET;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPS_RTR;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPS_RTS;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPS_SQD;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPS_SQE;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QPT_RC;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_ACCESS_FLAGS;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_AV;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_CAP;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_DEST_QPN;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_MAX_DEST_RD_ATOMIC;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_MAX_QP_RD_ATOMIC;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_MIN_RNR_TIMER;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_PATH_MTU;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_PKEY_INDEX;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_PORT;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_RETRY_CNT;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_RNR_RETRY;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_RQ_PSN;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_SQ_PSN;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_STATE;
import static io.verbus.fabric.verbs.IbvConstants.IBV_QP_TIMEOUT;
import static io.verbus.fabric.verbs.IbvConstants.IBV_WR_RDMA_WRITE;
import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * An RC {@code struct ibv_qp}.
 * <p>
 * Posting: the send WRs ({@code struct ibv_send_wr}, one per send-queue slot) and their SGEs live in native
 * memory allocated with the QP; each WR's {@code sg_list} is set once. A post copies only the fields of the
 * SPI's {@link WorkRequest} into those structs, links them with {@code next}, and makes one critical downcall
 * to the provider's {@code post_send}, so posting allocates nothing and (on hardware) makes no system call.
 * <p>
 * Send-queue slots are reclaimed when a polled completion covers them, as a hardware provider counts them
 * in user space (rxe would reclaim earlier, when its kernel thread finishes the WR): the QP remembers the
 * sequence number of every signaled WR in a ring, and each successful send completion for this QP
 * releases every slot up to that WR.
 */
public final class VerbsQueuePair implements QueuePair
{
    private static final long SEND_WR_SIZE = IbvAbi.SendWr.LAYOUT.byteSize();
    private static final long SGE_SIZE = IbvAbi.Sge.LAYOUT.byteSize();
    private static final int ENOMEM = 12;
    /** Minimum local ACK timeout code: 4.096 us * 2^14 = 67 ms, generous for rxe and emulated CPUs. */
    static final int MIN_ACK_TIMEOUT_CODE = 14;
    /**
     * Transport retries before RETRY_EXC_ERR. Not 7: the 3-bit field's largest value means "retry forever" to
     * rxe (as 7 does for the RNR retry count everywhere), so a dead peer would never be reported.
     */
    static final int RETRY_COUNT = 6;
    /** Largest READ/atomic depth requested, within what the device allows. */
    private static final int MAX_RD_ATOMIC = 16;
    private static final int HOP_LIMIT = 64;
    private static final VarHandle SEND_POSTED = VarHandles.field(MethodHandles.lookup(), "sendPosted", long.class);
    private static final VarHandle SEND_RECLAIMED =
        VarHandles.field(MethodHandles.lookup(), "sendReclaimed", long.class);
    private static final VarHandle RECEIVE_POSTED =
        VarHandles.field(MethodHandles.lookup(), "receivePosted", long.class);
    private static final VarHandle RECEIVE_CONSUMED =
        VarHandles.field(MethodHandles.lookup(), "receiveConsumed", long.class);

    private final VerbsDevice device;
    private final VerbsProtectionDomain pd;
    private final VerbsCompletionQueue sendCq;
    private final VerbsCompletionQueue receiveCq;
    private final VerbsSharedReceiveQueue srq;
    private final QueuePairConfig config;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment qp;
    private final int qpNumber;
    private final int psn;
    private final int maxSend;
    private final int maxReceive;
    private final int maxInline;
    private final PortAttributes port;
    private final MethodHandle postSendHandle;
    private final MethodHandle postRecvHandle;

    private final MemorySegment sendWrs;
    private final MemorySegment sendSges;
    private final long sendWrsAddress;
    private final MemorySegment badSendWr;
    private final MemorySegment recvWr;
    private final MemorySegment badRecvWr;

    // Send-queue accounting: sendPosted and the ring's push side belong to the posting thread, the pop side and
    // sendReclaimed to the polling thread.
    private final long[] signaledEnds;
    private final int signaledMask;
    private final long[] sendWrIds;
    private final WorkCompletionOpcode[] sendOpcodes;
    private final long[] receiveWrIds;
    private final int receiveMask;
    private long errorCursor;
    @SuppressWarnings("unused")
    private volatile long sendPosted;
    private long signaledPushed;
    private long signaledPopped;
    @SuppressWarnings("unused")
    private volatile long sendReclaimed;
    @SuppressWarnings("unused")
    private volatile long receivePosted;
    @SuppressWarnings("unused")
    private volatile long receiveConsumed;
    private volatile boolean errored;
    private volatile String asyncError;

    private volatile int trackedState = IBV_QPS_RESET;
    private volatile QueuePairConnectionInfo remote;
    private boolean closed;

    VerbsQueuePair(
        final VerbsDevice device,
        final VerbsProtectionDomain pd,
        final VerbsCompletionQueue sendCq,
        final VerbsCompletionQueue receiveCq,
        final QueuePairConfig config,
        final VerbsSharedReceiveQueue srq)
    {
        this.device = device;
        this.srq = srq;
        this.pd = pd;
        this.sendCq = sendCq;
        this.receiveCq = receiveCq;
        this.config = config;
        this.port = device.attributes().port(config.portNumber());
        this.psn = ThreadLocalRandom.current().nextInt(1 << 24);
        this.postSendHandle = device.ops.postSend;
        this.postRecvHandle = device.ops.postRecv;
        try
        {
            final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
            final MemorySegment init = arena.allocate(IbvAbi.QpInitAttr.LAYOUT);
            init.set(ADDRESS, IbvAbi.QpInitAttr.SEND_CQ, sendCq.nativeCq());
            init.set(ADDRESS, IbvAbi.QpInitAttr.RECV_CQ, receiveCq.nativeCq());
            init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_SEND_WR, config.maxSendWorkRequests());
            // With an SRQ the QP has no receive queue of its own (verbs ignores the receive caps).
            init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_RECV_WR,
                null == srq ? config.maxReceiveWorkRequests() : 0);
            init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_SEND_SGE, 1);
            init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_RECV_SGE, null == srq ? 1 : 0);
            init.set(ADDRESS, IbvAbi.QpInitAttr.SRQ, null == srq ? MemorySegment.NULL : srq.nativeSrq());
            init.set(JAVA_INT, IbvAbi.QpInitAttr.CAP + IbvAbi.QpCap.MAX_INLINE_DATA, config.maxInlineData());
            init.set(JAVA_INT, IbvAbi.QpInitAttr.QP_TYPE, IBV_QPT_RC);
            init.set(JAVA_INT, IbvAbi.QpInitAttr.SQ_SIG_ALL, 0);
            final MemorySegment created = (MemorySegment)device.lib.createQp.invokeExact(capture, pd.pd, init);
            if (MemorySegment.NULL.equals(created))
            {
                throw new FabricException("ibv_create_qp on " + device.name() + " failed with " +
                    LibIbverbs.describeErrno(LibIbverbs.errno(capture)) + " (send " + config.maxSendWorkRequests() +
                    ", receive " + config.maxReceiveWorkRequests() + ", inline " + config.maxInlineData() + ")");
            }
            qp = created.reinterpret(IbvAbi.Qp.LAYOUT.byteSize());
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
        catch (final Throwable ex)
        {
            arena.close();
            throw new FabricException("ibv_create_qp failed", ex);
        }
        qpNumber = qp.get(JAVA_INT, IbvAbi.Qp.QP_NUM);

        // What the created QP was granted, from the QP itself.
        final MemorySegment attr = arena.allocate(IbvAbi.QpAttr.LAYOUT);
        final MemorySegment initOut = arena.allocate(IbvAbi.QpInitAttr.LAYOUT);
        final int rc;
        try
        {
            rc = (int)device.lib.queryQp.invokeExact(qp, attr, IBV_QP_CAP, initOut);
        }
        catch (final Throwable ex)
        {
            destroyQuietly();
            throw new FabricException("ibv_query_qp failed", ex);
        }
        if (rc != 0)
        {
            destroyQuietly();
            throw new FabricException("ibv_query_qp(QP " + qpNumber + ") failed with " + LibIbverbs.describeErrno(rc));
        }
        // Providers round the queues up (rxe to a power of two); the SPI promises the depth that was asked
        // for, so that is what this QP enforces: the same WR stream refuses at the same point on any device.
        final int grantedSend = attr.get(JAVA_INT, IbvAbi.QpAttr.CAP + IbvAbi.QpCap.MAX_SEND_WR);
        final int grantedReceive = attr.get(JAVA_INT, IbvAbi.QpAttr.CAP + IbvAbi.QpCap.MAX_RECV_WR);
        maxSend = Math.min(config.maxSendWorkRequests(), grantedSend);
        maxReceive = Math.max(1, Math.min(config.maxReceiveWorkRequests(), grantedReceive));
        maxInline = attr.get(JAVA_INT, IbvAbi.QpAttr.CAP + IbvAbi.QpCap.MAX_INLINE_DATA);

        // Native WRs and SGEs for every send-queue slot, linked to their SGE once.
        sendWrs = arena.allocate(SEND_WR_SIZE * maxSend, 8);
        sendSges = arena.allocate(SGE_SIZE * maxSend, 8);
        sendWrsAddress = sendWrs.address();
        for (int i = 0; i < maxSend; i++)
        {
            sendWrs.set(JAVA_LONG, i * SEND_WR_SIZE + IbvAbi.SendWr.SG_LIST, sendSges.address() + i * SGE_SIZE);
        }
        badSendWr = arena.allocate(ADDRESS);
        recvWr = arena.allocate(IbvAbi.RecvWr.LAYOUT.byteSize() + SGE_SIZE, 8);
        recvWr.set(JAVA_LONG, IbvAbi.RecvWr.SG_LIST, recvWr.address() + IbvAbi.RecvWr.LAYOUT.byteSize());
        recvWr.set(JAVA_INT, IbvAbi.RecvWr.NUM_SGE, 1);
        badRecvWr = arena.allocate(ADDRESS);

        final int ringLength = BitUtil.findNextPositivePowerOfTwo(maxSend);
        signaledEnds = new long[ringLength];
        sendWrIds = new long[ringLength];
        sendOpcodes = new WorkCompletionOpcode[ringLength];
        signaledMask = ringLength - 1;
        final int receiveRingLength = BitUtil.findNextPositivePowerOfTwo(maxReceive);
        receiveWrIds = new long[receiveRingLength];
        receiveMask = receiveRingLength - 1;

        sendCq.attach(this);
        if (receiveCq != sendCq)
        {
            receiveCq.attach(this);
        }
    }

    @Override
    public int qpNumber()
    {
        return qpNumber;
    }

    long qpAddress()
    {
        return qp.address();
    }

    @Override
    public QueuePairState state()
    {
        if (closed)
        {
            throw new IllegalStateException("queue pair " + qpNumber + " is closed");
        }
        try (Arena confined = Arena.ofConfined())
        {
            final MemorySegment attr = confined.allocate(IbvAbi.QpAttr.LAYOUT);
            final MemorySegment init = confined.allocate(IbvAbi.QpInitAttr.LAYOUT);
            final int rc = (int)device.lib.queryQp.invokeExact(qp, attr, IBV_QP_STATE, init);
            if (rc != 0)
            {
                throw new FabricException(
                    "ibv_query_qp(QP " + qpNumber + ") failed with " + LibIbverbs.describeErrno(rc));
            }
            return switch (attr.get(JAVA_INT, IbvAbi.QpAttr.QP_STATE))
            {
                case IBV_QPS_RESET -> QueuePairState.RESET;
                case IBV_QPS_INIT -> QueuePairState.INIT;
                case IBV_QPS_RTR -> QueuePairState.RTR;
                case IBV_QPS_RTS, IBV_QPS_SQD -> QueuePairState.RTS;
                case IBV_QPS_SQE, IBV_QPS_ERR -> QueuePairState.ERR;
                default -> QueuePairState.ERR;
            };
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_query_qp failed", ex);
        }
    }

    @Override
    public QueuePairConnectionInfo localConnectionInfo()
    {
        final int lid = port.linkLayer() == LinkLayer.INFINIBAND ? port.lid() : 0;
        return new QueuePairConnectionInfo(qpNumber, psn, lid, port.gid(), port.activeMtuBytes());
    }

    @Override
    public QueuePairConnectionInfo remoteConnectionInfo()
    {
        return remote;
    }

    @Override
    public synchronized void modifyToInit()
    {
        requireState(IBV_QPS_RESET, "modifyToInit");
        int access = IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE | IBV_ACCESS_REMOTE_READ;
        if (device.attributes().atomicsSupported())
        {
            access |= IBV_ACCESS_REMOTE_ATOMIC;
        }
        final int finalAccess = access;
        modify(IBV_QPS_INIT, IBV_QP_STATE | IBV_QP_PKEY_INDEX | IBV_QP_PORT | IBV_QP_ACCESS_FLAGS, attr ->
        {
            attr.set(JAVA_SHORT, IbvAbi.QpAttr.PKEY_INDEX, (short)0);
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.PORT_NUM, (byte)config.portNumber());
            attr.set(JAVA_INT, IbvAbi.QpAttr.QP_ACCESS_FLAGS, finalAccess);
        });
    }

    @Override
    public synchronized void modifyToReadyToReceive(final QueuePairConnectionInfo remote)
    {
        requireState(IBV_QPS_INIT, "modifyToReadyToReceive");
        final boolean ethernet = port.linkLayer() == LinkLayer.ETHERNET;
        if (ethernet && isZero(remote.gid()))
        {
            throw new IllegalArgumentException("RoCE needs the peer's GID, got zeros: " + remote);
        }
        if (!ethernet && remote.lid() == 0)
        {
            throw new IllegalArgumentException("InfiniBand needs the peer's LID, got 0: " + remote);
        }
        final int pathMtuBytes = Math.min(port.activeMtuBytes(), remote.mtuBytes());
        final int responderDepth = Math.max(1, Math.min(MAX_RD_ATOMIC, device.maxQpRdAtomic()));
        modify(IBV_QPS_RTR, IBV_QP_STATE | IBV_QP_AV | IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN |
            IBV_QP_MAX_DEST_RD_ATOMIC | IBV_QP_MIN_RNR_TIMER, attr ->
        {
            attr.set(JAVA_INT, IbvAbi.QpAttr.PATH_MTU, mtuCode(pathMtuBytes));
            attr.set(JAVA_INT, IbvAbi.QpAttr.DEST_QP_NUM, remote.qpNumber());
            attr.set(JAVA_INT, IbvAbi.QpAttr.RQ_PSN, remote.psn());
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.MAX_DEST_RD_ATOMIC, (byte)responderDepth);
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.MIN_RNR_TIMER, (byte)rnrTimerCode(config.rnrTimeoutNs()));
            attr.set(JAVA_SHORT, IbvAbi.QpAttr.AH_DLID, (short)remote.lid());
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.AH_SL, (byte)0);
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.AH_PORT_NUM, (byte)config.portNumber());
            if (ethernet)
            {
                // RoCE routes by GID: a GRH with the peer's GID and our RoCE v2 GID index.
                attr.set(JAVA_BYTE, IbvAbi.QpAttr.AH_IS_GLOBAL, (byte)1);
                MemorySegment.copy(remote.gid(), 0, attr, JAVA_BYTE, IbvAbi.QpAttr.AH_DGID, 16);
                attr.set(JAVA_BYTE, IbvAbi.QpAttr.AH_SGID_INDEX, (byte)port.gidIndex());
                attr.set(JAVA_BYTE, IbvAbi.QpAttr.AH_HOP_LIMIT, (byte)HOP_LIMIT);
            }
        });
        this.remote = remote;
    }

    @Override
    public synchronized void modifyToReadyToSend()
    {
        requireState(IBV_QPS_RTR, "modifyToReadyToSend");
        final int initiatorDepth = Math.max(1, Math.min(MAX_RD_ATOMIC, device.maxQpInitRdAtomic()));
        modify(IBV_QPS_RTS, IBV_QP_STATE | IBV_QP_TIMEOUT | IBV_QP_RETRY_CNT | IBV_QP_RNR_RETRY | IBV_QP_SQ_PSN |
            IBV_QP_MAX_QP_RD_ATOMIC, attr ->
        {
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.TIMEOUT, (byte)ackTimeoutCode(config.retryTimeoutNs()));
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.RETRY_CNT, (byte)RETRY_COUNT);
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.RNR_RETRY, (byte)config.rnrRetryCount());
            attr.set(JAVA_INT, IbvAbi.QpAttr.SQ_PSN, psn);
            attr.set(JAVA_BYTE, IbvAbi.QpAttr.MAX_RD_ATOMIC, (byte)initiatorDepth);
        });
    }

    @Override
    public synchronized void modifyToError()
    {
        if (closed)
        {
            throw new IllegalStateException("queue pair " + qpNumber + " is closed");
        }
        modify(IBV_QPS_ERR, IBV_QP_STATE, attr ->
        {
        });
        errored = true;
    }

    /**
     * @return true if the device promises that the bytes of one RDMA WRITE are placed in address order
     * ({@code ibv_query_qp_data_in_order}); rxe says no.
     */
    public boolean isWriteDataPlacedInOrder()
    {
        try
        {
            return (int)device.lib.queryQpDataInOrder.invokeExact(qp, IBV_WR_RDMA_WRITE, 0) != 0;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_query_qp_data_in_order failed", ex);
        }
    }

    /**
     * @return the last fatal async event reported for this QP, or null.
     */
    public String asyncError()
    {
        return asyncError;
    }

    @Override
    public int postSend(final WorkRequestBatch batch)
    {
        batch.postedCount(0);
        final int size = batch.size();
        if (size == 0)
        {
            return PostResult.OK;
        }
        final int state = trackedState;
        if (state != IBV_QPS_RTS && state != IBV_QPS_ERR)
        {
            return PostResult.INVALID_STATE;
        }

        int count = size;
        int refusal = PostResult.OK;
        for (int i = 0; i < size; i++)
        {
            final int reason = validate(batch.get(i));
            if (reason != PostResult.OK)
            {
                count = i;
                refusal = reason;
                break;
            }
        }
        if (!errored)
        {
            final long room = maxSend - ((long)SEND_POSTED.getOpaque(this) - (long)SEND_RECLAIMED.getAcquire(this));
            if (count > room)
            {
                count = (int)Math.max(0, room);
                refusal = PostResult.SEND_QUEUE_FULL;
            }
        }
        if (count == 0)
        {
            return refusal;
        }

        final long firstSequence = (long)SEND_POSTED.getOpaque(this);
        final long pushedBefore = signaledPushed;
        for (int i = 0; i < count; i++)
        {
            final WorkRequest request = batch.get(i);
            fill(i, request, i == count - 1 ? 0L : sendWrsAddress + (i + 1) * SEND_WR_SIZE);
            final int slot = (int)((firstSequence + i) & signaledMask);
            sendWrIds[slot] = request.wrId();
            sendOpcodes[slot] = request.opcode().completionOpcode();
            if (request.isSignaled())
            {
                signaledEnds[(int)(signaledPushed++ & signaledMask)] = firstSequence + i + 1;
            }
        }

        VarHandle.releaseFence();
        final int rc;
        try
        {
            rc = (int)postSendHandle.invokeExact(qp, sendWrs, badSendWr);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("post_send failed", ex);
        }

        int posted = count;
        if (rc != 0)
        {
            final long bad = badSendWr.get(JAVA_LONG, 0);
            posted = bad >= sendWrsAddress && bad < sendWrsAddress + count * SEND_WR_SIZE ?
                (int)((bad - sendWrsAddress) / SEND_WR_SIZE) : 0;
            // Forget the signaled marks of WRs the provider refused.
            long keep = pushedBefore;
            for (int i = 0; i < posted; i++)
            {
                if (batch.get(i).isSignaled())
                {
                    keep++;
                }
            }
            signaledPushed = keep;
            refusal = rc == ENOMEM ? PostResult.SEND_QUEUE_FULL : PostResult.INVALID_REQUEST;
        }
        SEND_POSTED.setRelease(this, firstSequence + posted);
        batch.postedCount(posted);
        return refusal;
    }

    private void fill(final int index, final WorkRequest request, final long next)
    {
        final MemorySegment wrs = sendWrs;
        final long wr = index * SEND_WR_SIZE;
        final long sge = index * SGE_SIZE;
        final WorkRequestOpcode opcode = request.opcode();
        final int length = request.length();
        wrs.set(JAVA_LONG, wr + IbvAbi.SendWr.WR_ID, request.wrId());
        wrs.set(JAVA_LONG, wr + IbvAbi.SendWr.NEXT, next);
        wrs.set(JAVA_INT, wr + IbvAbi.SendWr.NUM_SGE, length > 0 ? 1 : 0);
        wrs.set(JAVA_INT, wr + IbvAbi.SendWr.OPCODE, opcode.code());
        // The SPI's SendFlags bits are the IBV_SEND_* values (checked by VerbsAbiTest's constants).
        wrs.set(JAVA_INT, wr + IbvAbi.SendWr.SEND_FLAGS, request.flags());
        // imm_data is big-endian on the wire and in the struct.
        wrs.set(JAVA_INT, wr + IbvAbi.SendWr.IMM_DATA, Integer.reverseBytes(request.immediateData()));
        if (opcode.isAtomic())
        {
            wrs.set(JAVA_LONG, wr + IbvAbi.SendWr.ATOMIC_REMOTE_ADDR, request.remoteAddress());
            wrs.set(JAVA_LONG, wr + IbvAbi.SendWr.ATOMIC_COMPARE_ADD, request.compareAdd());
            wrs.set(JAVA_LONG, wr + IbvAbi.SendWr.ATOMIC_SWAP, request.swap());
            wrs.set(JAVA_INT, wr + IbvAbi.SendWr.ATOMIC_RKEY, request.rkey());
        }
        else
        {
            wrs.set(JAVA_LONG, wr + IbvAbi.SendWr.RDMA_REMOTE_ADDR, request.remoteAddress());
            wrs.set(JAVA_INT, wr + IbvAbi.SendWr.RDMA_RKEY, request.rkey());
        }
        final MemorySegment sges = sendSges;
        sges.set(JAVA_LONG, sge + IbvAbi.Sge.ADDR, request.localAddress());
        sges.set(JAVA_INT, sge + IbvAbi.Sge.LENGTH, length);
        sges.set(JAVA_INT, sge + IbvAbi.Sge.LKEY, request.lkey());
    }

    private int validate(final WorkRequest request)
    {
        final int length = request.length();
        final int flags = request.flags();
        final WorkRequestOpcode opcode = request.opcode();
        if (length < 0 || (flags & ~SendFlags.ALL) != 0)
        {
            return PostResult.INVALID_REQUEST;
        }
        if (request.isInline())
        {
            if (opcode == WorkRequestOpcode.RDMA_READ || opcode.isAtomic())
            {
                return PostResult.INVALID_REQUEST;
            }
            if (length > maxInline)
            {
                return PostResult.INLINE_TOO_LONG;
            }
        }
        if (opcode.isAtomic() && (length != Long.BYTES || (request.remoteAddress() & (Long.BYTES - 1)) != 0))
        {
            return PostResult.INVALID_REQUEST;
        }
        if (request.immediateData() != 0 && !opcode.hasImmediate())
        {
            return PostResult.INVALID_REQUEST;
        }
        return PostResult.OK;
    }

    @Override
    public int postReceive(final long wrId, final long address, final int length, final int lkey)
    {
        if (trackedState == IBV_QPS_RESET)
        {
            return PostResult.INVALID_STATE;
        }
        if (length < 0 || null != srq)
        {
            return PostResult.INVALID_REQUEST;
        }
        final long receiveSequence = (long)RECEIVE_POSTED.getOpaque(this);
        if (!errored && receiveSequence - (long)RECEIVE_CONSUMED.getAcquire(this) >= maxReceive)
        {
            return PostResult.RECEIVE_QUEUE_FULL;
        }
        final MemorySegment wr = recvWr;
        final long sge = IbvAbi.RecvWr.LAYOUT.byteSize();
        wr.set(JAVA_LONG, IbvAbi.RecvWr.WR_ID, wrId);
        wr.set(JAVA_LONG, sge + IbvAbi.Sge.ADDR, address);
        wr.set(JAVA_INT, sge + IbvAbi.Sge.LENGTH, length);
        wr.set(JAVA_INT, sge + IbvAbi.Sge.LKEY, lkey);
        final int rc;
        try
        {
            rc = (int)postRecvHandle.invokeExact(qp, wr, badRecvWr);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("post_recv failed", ex);
        }
        if (rc != 0)
        {
            return rc == ENOMEM ? PostResult.RECEIVE_QUEUE_FULL : PostResult.INVALID_REQUEST;
        }
        receiveWrIds[(int)(receiveSequence & receiveMask)] = wrId;
        RECEIVE_POSTED.setRelease(this, receiveSequence + 1);
        return PostResult.OK;
    }

    /** Polling thread: a successful send completion releases every slot up to its WR. */
    void onSendCompletion()
    {
        VarHandle.acquireFence();
        final long end = signaledEnds[(int)(signaledPopped++ & signaledMask)];
        SEND_RECLAIMED.setRelease(this, end);
    }

    /** Polling thread: a RECV completion frees its receive-queue slot. */
    void onReceiveCompletion()
    {
        RECEIVE_CONSUMED.setRelease(this, (long)RECEIVE_CONSUMED.getAcquire(this) + 1);
    }

    /**
     * Polling thread: a failed completion. The QP is in ERR and its WRs now flush, so nothing is counted any
     * more. Verbs leaves an error completion's opcode undefined (rxe reports SEND for a flushed RECV), so
     * which queue it came from is found by its wr_id among the WRs still outstanding, sends first.
     *
     * @param wrId the completion's wr_id.
     * @return the opcode of the WR it completes: RECV for a receive, else the send WR's.
     */
    WorkCompletionOpcode onErrorCompletion(final long wrId)
    {
        errored = true;
        VarHandle.acquireFence();
        final long posted = (long)SEND_POSTED.getAcquire(this);
        for (long sequence = Math.max(errorCursor, (long)SEND_RECLAIMED.getAcquire(this));
            sequence < posted;
            sequence++)
        {
            final int slot = (int)(sequence & signaledMask);
            if (sendWrIds[slot] == wrId)
            {
                errorCursor = sequence + 1;
                return sendOpcodes[slot];
            }
        }
        if (null != srq)
        {
            return WorkCompletionOpcode.RECV; // not a send WR still outstanding: a receive taken from the SRQ
        }
        final long consumed = (long)RECEIVE_CONSUMED.getAcquire(this);
        if (consumed < (long)RECEIVE_POSTED.getAcquire(this) && receiveWrIds[(int)(consumed & receiveMask)] == wrId)
        {
            RECEIVE_CONSUMED.setRelease(this, consumed + 1);
            return WorkCompletionOpcode.RECV;
        }
        return WorkCompletionOpcode.SEND;
    }

    void onAsyncError(final String description)
    {
        asyncError = description;
        errored = true;
    }

    @Override
    public SharedReceiveQueue sharedReceiveQueue()
    {
        return srq;
    }

    @Override
    public int maxSendWorkRequests()
    {
        return maxSend;
    }

    @Override
    public int maxReceiveWorkRequests()
    {
        return maxReceive;
    }

    @Override
    public int maxInlineData()
    {
        return maxInline;
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

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        sendCq.detach(this);
        receiveCq.detach(this);
        final int rc = VerbsDevice.call(device.lib.destroyQp, qp);
        pd.onQueuePairClosed(this);
        device.onClosed(this);
        arena.close();
        VerbsDevice.check(rc, "ibv_destroy_qp(" + qpNumber + ")");
    }

    @Override
    public String toString()
    {
        return "VerbsQueuePair{qpn=" + qpNumber + ", device=" + device.name() + ", port=" + port.portNumber() + '}';
    }

    // ---- state transitions ----------------------------------------------------------------------------------

    private interface AttributeWriter
    {
        void write(MemorySegment attr);
    }

    private void modify(final int newState, final int mask, final AttributeWriter writer)
    {
        if (closed)
        {
            throw new IllegalStateException("queue pair " + qpNumber + " is closed");
        }
        try (Arena confined = Arena.ofConfined())
        {
            final MemorySegment attr = confined.allocate(IbvAbi.QpAttr.LAYOUT);
            attr.set(JAVA_INT, IbvAbi.QpAttr.QP_STATE, newState);
            writer.write(attr);
            final int rc = (int)device.lib.modifyQp.invokeExact(qp, attr, mask);
            if (rc != 0)
            {
                throw new FabricException("ibv_modify_qp(QP " + qpNumber + " -> " + stateName(newState) +
                    ") failed with " + LibIbverbs.describeErrno(rc));
            }
            trackedState = newState;
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_modify_qp failed", ex);
        }
    }

    private void requireState(final int expected, final String transition)
    {
        if (closed)
        {
            throw new IllegalStateException("queue pair " + qpNumber + " is closed");
        }
        if (trackedState != expected)
        {
            throw new IllegalStateException(transition + " needs QP " + qpNumber + " in " + stateName(expected) +
                ", it is in " + stateName(trackedState));
        }
    }

    private static String stateName(final int state)
    {
        return switch (state)
        {
            case IBV_QPS_RESET -> "RESET";
            case IBV_QPS_INIT -> "INIT";
            case IBV_QPS_RTR -> "RTR";
            case IBV_QPS_RTS -> "RTS";
            case IBV_QPS_ERR -> "ERR";
            default -> "state " + state;
        };
    }

    /**
     * @param bytes 256 .. 4096.
     * @return the {@code enum ibv_mtu} value.
     */
    static int mtuCode(final int bytes)
    {
        return Integer.numberOfTrailingZeros(bytes) - 7;
    }

    /**
     * Local ACK timeout code: 4.096 us * 2^code per attempt; the peer is declared gone after
     * {@link #RETRY_COUNT} + 1 attempts, so the code is the smallest whose total covers the timeout.
     */
    static int ackTimeoutCode(final long retryTimeoutNs)
    {
        final long perAttemptNs = Math.max(1, retryTimeoutNs / (RETRY_COUNT + 1));
        int code = 0;
        while (code < 31 && 4096L << code < perAttemptNs)
        {
            code++;
        }
        return Math.max(MIN_ACK_TIMEOUT_CODE, code);
    }

    /** The IB spec's RNR NAK timer table, microseconds, by code 1..31 (code 0 means 655.36 ms). */
    private static final int[] RNR_TIMER_US = {
        655360, 10, 20, 30, 40, 60, 80, 120, 160, 240, 320, 480, 640, 960, 1280, 1920, 2560, 3840, 5120, 7680,
        10240, 15360, 20480, 30720, 40960, 61440, 81920, 122880, 163840, 245760, 327680, 491520 };

    /**
     * @param timeoutNs wanted wait between RNR retries.
     * @return the smallest RNR timer code waiting at least that long (0, the longest, if none does).
     */
    static int rnrTimerCode(final long timeoutNs)
    {
        final long us = (timeoutNs + 999) / 1000;
        for (int code = 1; code < RNR_TIMER_US.length; code++)
        {
            if (RNR_TIMER_US[code] >= us)
            {
                return code;
            }
        }
        return 0;
    }

    private static boolean isZero(final byte[] bytes)
    {
        for (final byte b : bytes)
        {
            if (b != 0)
            {
                return false;
            }
        }
        return true;
    }

    private void destroyQuietly()
    {
        VerbsDevice.call(device.lib.destroyQp, qp);
        arena.close();
    }
}
