package io.verbus.fabric.tcp;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestOpcode;
import io.verbus.fabric.soft.SoftMemoryRegion;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import static io.verbus.fabric.tcp.TcpQueuePair.CONSUMED;
import static io.verbus.fabric.tcp.TcpQueuePair.DROP;
import static io.verbus.fabric.tcp.TcpQueuePair.HOLD;
import static io.verbus.fabric.tcp.TcpQueuePair.NONE;

/**
 * The requester side of a tcp QP: frames its posted WRs in order into the connection it dialed (checking the lkeys
 * and the fence), reads the responses that come back on it and completes the WRs they acknowledge (cumulatively,
 * {@link TcpWire}), times out a silent peer, an RNR wait and a dial, and flushes the send queue once the QP errs.
 * When the frames are written is {@link TcpWriteCoalescer}'s decision.
 * <p>
 * Run by the holder of its QP's engine lock only (see {@link TcpQueuePair}): its fields are plain, and the lock's
 * acquire and release carry them between the threads that take turns holding it.
 */
final class TcpRequester
{
    /** With no response awaited, an application poll still reads responses this often (NAKs, lost peers). */
    static final long IDLE_RESPONSE_READ_INTERVAL_NS = TimeUnit.MICROSECONDS.toNanos(250);

    private static final WorkRequestOpcode[] WR_OPCODES = WorkRequestOpcode.values();
    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();
    /** The longest RNR budget a request carries: an int of microseconds (about 35 minutes). */
    private static final long MAX_RNR_BUDGET_NS = TimeUnit.MICROSECONDS.toNanos(Integer.MAX_VALUE);

    private final TcpQueuePair qp;
    private final int maxFrameLength;
    private final long maxMessageLength;
    private final long connectTimeoutNs;
    private final long retryTimeoutNs;
    private final int rnrRetryCount;
    /** How long this requester retries an RNR: its RNR timeout times its retry count (capped, when infinite). */
    private final long rnrBudgetNs;
    /** The same, as requests carry it: {@link TcpWire#REQUEST_RNR_BUDGET_US_OFFSET}. */
    private final int rnrBudgetUs;

    // The QP's send queue (SoftQueuePair's columns, filled by postSend; slots up to the published tail).
    private final int sqDepth;
    private final int maxInlineData;
    private final byte[] sqOpcode;
    private final int[] sqFlags;
    private final int[] sqLength;
    private final long[] sqLocalAddress;
    private final long[] sqRemoteAddress;
    private final int[] sqRkey;
    private final int[] sqImmediate;
    private final long[] sqCompareAdd;
    private final long[] sqSwap;
    private final MemorySegment sqInline;

    private long sqTransmitted;
    private long sqCompleted;
    private long lastResponseNs;
    private long rnrSinceNs = NONE;
    /** Index of a WR that failed a local check at transmit time, and why; -1 if none. */
    private long localFailureIndex = -1;
    private WorkCompletionStatus localFailureStatus;
    /** Last READ or atomic transmitted: a FENCE waits for its completion, as the verbs fence does. */
    private long lastFencingSequence = -1;
    /** Last WR transmitted whose response the requester waits for (signaled, READ, atomic). */
    private long lastAwaitedSequence = -1;

    TcpRequester(final TcpQueuePair qp, final TcpDevice device)
    {
        this.qp = qp;
        this.maxFrameLength = device.maxFrameLength();
        this.maxMessageLength = device.attributes().maxMessageLength();
        this.connectTimeoutNs = device.connectTimeoutNs();
        this.retryTimeoutNs = qp.retryTimeoutNs();
        this.rnrRetryCount = qp.rnrRetryCount();
        final long rnrTimeoutNs = qp.rnrTimeoutNs();
        final boolean rnrForever = rnrRetryCount == QueuePairConfig.RNR_RETRY_INFINITE;
        this.rnrBudgetNs = rnrForever ? MAX_RNR_BUDGET_NS :
            rnrTimeoutNs >= MAX_RNR_BUDGET_NS / Math.max(1, rnrRetryCount) ? MAX_RNR_BUDGET_NS :
                rnrTimeoutNs * rnrRetryCount;
        this.rnrBudgetUs = rnrForever ? TcpWire.RNR_BUDGET_INFINITE :
            (int)((rnrBudgetNs + TimeUnit.MICROSECONDS.toNanos(1) - 1) / TimeUnit.MICROSECONDS.toNanos(1));
        this.sqDepth = qp.maxSendWorkRequests();
        this.maxInlineData = qp.maxInlineData();
        this.sqOpcode = qp.sqOpcode();
        this.sqFlags = qp.sqFlags();
        this.sqLength = qp.sqLength();
        this.sqLocalAddress = qp.sqLocalAddress();
        this.sqRemoteAddress = qp.sqRemoteAddress();
        this.sqRkey = qp.sqRkey();
        this.sqImmediate = qp.sqImmediate();
        this.sqCompareAdd = qp.sqCompareAdd();
        this.sqSwap = qp.sqSwap();
        this.sqInline = qp.sqInline();
    }

    /**
     * @return send WRs framed so far.
     */
    long transmitted()
    {
        return sqTransmitted;
    }

    /**
     * @return send WRs completed so far.
     */
    long completed()
    {
        return sqCompleted;
    }

    /**
     * Frame posted WRs in order into the outbound connection's buffer, checking the lkeys first.
     */
    int transmit(final long nowNs)
    {
        if (QueuePairState.RTS != qp.state() || localFailureIndex >= 0)
        {
            return 0;
        }
        final TcpConnection connection = qp.outbound;
        if (null == connection || !connection.isUsable())
        {
            return 0;
        }
        int work = 0;
        final long tail = qp.postedSends();
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
                if (length > 0 && (!carriesPayload || !qp.isInlineSend(slot)))
                {
                    final SoftMemoryRegion region = qp.sendRegion(slot, carriesPayload ? 0 : AccessFlags.LOCAL_WRITE);
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
            qp.lose(connection);
            return work + 1;
        }
        return work;
    }

    /**
     * Fail a silent or RNR-exhausted peer, a dial that never connected, a WR that failed its local checks.
     */
    int timers(final long nowNs)
    {
        if (QueuePairState.RTS != qp.state())
        {
            return 0;
        }
        final TcpConnection connection = qp.outbound;
        if (null == connection || !connection.established)
        {
            final long dialStarted = qp.dialStartedNs;
            if (dialStarted != NONE && nowNs - dialStarted > connectTimeoutNs && qp.postedSends() > sqCompleted)
            {
                qp.headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                qp.enterError();
                return 1;
            }
            return 0;
        }
        if (localFailureIndex >= 0 && sqCompleted == localFailureIndex)
        {
            // ERR first, so the error completion is never seen on a QP that still reads RTS; flushSends() reports
            // the failed WR with localFailureStatus.
            qp.enterError();
            return 1;
        }
        if (sqCompleted < sqTransmitted)
        {
            if (rnrSinceNs != NONE)
            {
                // The responder ends an RNR wait (it NAKs RNR_RETRY_EXC_ERR when the budget is spent), so that a
                // request given up on is never delivered; a responder that stays silent well past the budget is
                // a peer that stopped answering. So is one that stops repeating its RNR NAK (it repeats it every
                // few tens of milliseconds while it holds the request), even when the RNR count is infinite: one
                // NAK and silence would otherwise hold the send queue for good.
                if ((rnrRetryCount != QueuePairConfig.RNR_RETRY_INFINITE &&
                    nowNs - rnrSinceNs - rnrBudgetNs >= retryTimeoutNs) ||
                    nowNs - lastResponseNs > Math.max(retryTimeoutNs, TcpResponder.RNR_SILENCE_NS))
                {
                    qp.headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                    qp.enterError();
                    return 1;
                }
            }
            else if (nowNs - lastResponseNs > retryTimeoutNs)
            {
                qp.headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                qp.enterError();
                return 1;
            }
        }
        return 0;
    }

    // ---------------------------------------------------------------------------------------------------
    // Responses on the connection this QP dialed.

    /**
     * One pass over the connection this QP dialed: read it when a response is awaited (or, on an application poll,
     * now and then), and complete the WRs the responses acknowledge.
     */
    int receiveResponses(final long nowNs, final boolean application, final boolean mayRead)
    {
        final TcpConnection connection = qp.outbound;
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
                    qp.lose(connection);
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
            qp.lose(connection);
            work++;
        }
        return work;
    }

    private int processResponses(final TcpConnection connection, final long nowNs) throws IOException
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
                    qp.lose(connection);
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
                    qp.lose(connection);
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
     * @return {@link TcpQueuePair#CONSUMED}, {@link TcpQueuePair#HOLD} (CQ full; the WRs completed so far stay
     * completed and the frame is taken again) or {@link TcpQueuePair#DROP} (a response for nothing outstanding:
     * protocol error).
     */
    int onResponse(
        final TcpConnection connection, final ByteBuffer in, final int frame, final int frameLength, final long nowNs)
    {
        final byte type = in.get(frame + TcpWire.FRAME_TYPE_OFFSET);
        final long sequence = in.getLong(frame + TcpWire.RESPONSE_SEQUENCE_OFFSET);
        if (qp.state() == QueuePairState.ERR)
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
        final int slot = (int)(sequence % sqDepth);
        final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[slot]];
        if (type == TcpWire.TYPE_RNR_NAK && !opcode.consumesReceive())
        {
            return DROP; // only a request that needs a receive can find none: a responder that says otherwise lies
        }
        lastResponseNs = nowNs;
        final int passed = completeBefore(sequence);
        if (CONSUMED != passed)
        {
            return passed;
        }
        if (type == TcpWire.TYPE_RNR_NAK)
        {
            if (rnrSinceNs == NONE)
            {
                rnrSinceNs = nowNs;
            }
            return CONSUMED;
        }

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
                    final SoftMemoryRegion region = qp.sendRegion(slot, AccessFlags.LOCAL_WRITE);
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
                final SoftMemoryRegion region = qp.sendRegion(slot, AccessFlags.LOCAL_WRITE);
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
            // As on hardware, the QP is in ERR before its error completion can be polled: flushSends() reports this
            // WR with headFailure and flushes the ones behind it.
            qp.headFailure = status;
            qp.enterError();
            return CONSUMED;
        }
        if (!qp.reportSend(sequence, status, sqLength[slot]))
        {
            return HOLD;
        }
        sqCompleted++;
        rnrSinceNs = NONE;
        return CONSUMED;
    }

    /**
     * A response names a sequence: every WR before it succeeded (the acknowledgement is cumulative).
     *
     * @return CONSUMED when all are completed, HOLD when the CQ is full, DROP when one of them is a READ or an atomic,
     * which is answered on its own with its data: acknowledged in passing, it would complete with whatever its local
     * buffer held standing in for the remote data.
     */
    private int completeBefore(final long sequence)
    {
        while (sqCompleted < sequence)
        {
            final int slot = (int)(sqCompleted % sqDepth);
            final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[slot]];
            if (opcode == WorkRequestOpcode.RDMA_READ || opcode.isAtomic())
            {
                return DROP;
            }
            if (!qp.reportSend(sqCompleted, WorkCompletionStatus.SUCCESS, sqLength[slot]))
            {
                return HOLD;
            }
            sqCompleted++;
            rnrSinceNs = NONE;
        }
        return CONSUMED;
    }

    // ---------------------------------------------------------------------------------------------------
    // Errors.

    /**
     * In ERR: complete every outstanding send WR, the head one with the failure that erred the QP (a local check, a
     * NAK, a lost peer) and the rest with WR_FLUSH_ERR.
     */
    int flushSends()
    {
        int work = 0;
        final long tail = qp.postedSends();
        while (sqCompleted < tail)
        {
            final WorkCompletionStatus status;
            final WorkCompletionStatus failure = qp.headFailure;
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
            if (!qp.reportSend(sqCompleted, status, sqLength[(int)(sqCompleted % sqDepth)]))
            {
                break;
            }
            if (sqCompleted == localFailureIndex)
            {
                localFailureIndex = -1;
            }
            qp.headFailure = null;
            sqCompleted++;
            work++;
        }
        sqTransmitted = Math.max(sqTransmitted, sqCompleted);
        return work;
    }
}
