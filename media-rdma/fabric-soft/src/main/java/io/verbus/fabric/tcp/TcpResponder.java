package io.verbus.fabric.tcp;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestOpcode;
import io.verbus.fabric.soft.SoftMemoryPlacement;
import io.verbus.fabric.soft.SoftMemoryRegion;
import io.verbus.fabric.soft.SoftRegionTable;
import io.verbus.fabric.soft.SoftSharedReceiveQueue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

import static io.verbus.fabric.tcp.TcpQueuePair.CONSUMED;
import static io.verbus.fabric.tcp.TcpQueuePair.DISCARD;
import static io.verbus.fabric.tcp.TcpQueuePair.DROP;
import static io.verbus.fabric.tcp.TcpQueuePair.HOLD;
import static io.verbus.fabric.tcp.TcpQueuePair.NONE;

/**
 * The responder side of a tcp QP: reads the peer's requests from the connection the peer dialed, applies each in
 * order after the responder checks (WRITE, SEND, READ, atomics; a large WRITE's payload read from the socket straight
 * into its region), consumes receives, answers, and flushes the receive queue once the QP errs.
 * <p>
 * <b>Acknowledgement.</b> Responses are cumulative ({@link TcpWire}): the responder answers at once what the
 * requester waits for (signaled WRs, READ, atomics, errors, RNR) and acknowledges unsignaled WRs together within
 * {@link #MAX_ACK_DELAY_NS}, so an unsignaled WRITE costs the responder no write system call.
 * <p>
 * <b>RNR.</b> A SEND or WRITE with immediate that finds no receive is held by the responder, which sends RNR NAKs
 * and, once the RNR budget the request carries is spent, drops it and answers RNR_RETRY_EXC_ERR: the responder
 * decides, so a request the requester reports as failed is never delivered to a receive posted later.
 * <p>
 * Run by the holder of its QP's engine lock only (see {@link TcpQueuePair}): its fields are plain, and the lock's
 * acquire and release carry them between the threads that take turns holding it.
 */
final class TcpResponder
{
    /**
     * Unsignaled requests are acknowledged together at the latest this long after the first of them (or a quarter of
     * the retry timeout, if shorter): nobody waits for them, the acknowledgement only keeps the requester's retry
     * timer quiet, so one write system call a millisecond at most.
     */
    static final long MAX_ACK_DELAY_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** A WRITE payload with at least this much still to arrive is read straight into the target region. */
    static final int DIRECT_PLACEMENT_MIN_BYTES = 16 * 1024;

    private static final WorkRequestOpcode[] WR_OPCODES = WorkRequestOpcode.values();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long RNR_NAK_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /** A requester in an RNR wait that hears nothing for this long (many NAK intervals) takes the peer for gone. */
    static final long RNR_SILENCE_NS = 10 * RNR_NAK_INTERVAL_NS;

    private final TcpQueuePair qp;
    private final int maxFrameLength;
    private final long ackDelayNs;
    private final FaultInjection faults;
    private final SoftRegionTable localRegions;
    private final int protectionDomainId;
    /** The QP's SRQ, or null: then its own receive queue (SoftQueuePair's columns, filled by postReceive). */
    private final SoftSharedReceiveQueue srq;
    private final int rqDepth;
    private final int[] rqLength;
    private final int[] rqLkey;
    private final long[] rqAddress;

    private long rqConsumed;
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
    /** Diagnostics, read by tests: WRITE payloads read from the socket straight into their target region. */
    private long directPlacements;

    TcpResponder(final TcpQueuePair qp, final TcpDevice device)
    {
        this.qp = qp;
        this.maxFrameLength = device.maxFrameLength();
        this.ackDelayNs = Math.max(1, Math.min(MAX_ACK_DELAY_NS, qp.retryTimeoutNs() / 4));
        this.faults = qp.faults();
        this.localRegions = qp.localRegions();
        this.protectionDomainId = qp.protectionDomainId();
        this.srq = qp.srq();
        this.rqDepth = qp.maxReceiveWorkRequests();
        this.rqLength = qp.rqLength();
        this.rqLkey = qp.rqLkey();
        this.rqAddress = qp.rqAddress();
    }

    /**
     * @return requests applied so far: the sequence of the next one expected.
     */
    long requestsApplied()
    {
        return requestsApplied;
    }

    /**
     * @return WRITE payloads placed directly so far (plain: the caller fences).
     */
    long directPlacements()
    {
        return directPlacements;
    }

    /**
     * One pass over the connection the peer dialed: read it (unless {@code mayRead} is false: then only what is
     * already buffered is taken), apply the requests in order, and write the acknowledgements that are due.
     */
    int receiveRequests(final long nowNs, final boolean mayRead, final boolean application)
    {
        final TcpConnection connection = qp.inbound;
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
                        qp.lose(connection);
                        return 1;
                    }
                    if (connection.isPlacingDirectly())
                    {
                        return read > 0 ? 1 : 0;
                    }
                    if (QueuePairState.ERR != qp.state())
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
                        qp.lose(connection);
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
                    qp.lose(connection);
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
            qp.lose(connection);
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
                    qp.lose(connection);
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
     * Read more of a directly placed payload, unless its region was deregistered meanwhile: then, as a NIC would
     * for the rest of a WRITE whose rkey went away, NAK it with REM_ACCESS_ERR and err (the rest of the payload is
     * dropped so the stream stays framed).
     *
     * @return bytes read, -1 at end of stream.
     */
    private int placeDirectlyFromSocket(final TcpConnection connection) throws IOException
    {
        if (QueuePairState.ERR == qp.state())
        {
            connection.abandonDirect(); // a QP in ERR places nothing more: the rest of the payload is read and dropped
            return 0;
        }
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
        qp.enterError();
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
        final QueuePairState current = qp.state();
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
     * @return {@link TcpQueuePair#CONSUMED}, {@link TcpQueuePair#HOLD} to retry the same frame later (RNR, not yet
     * RTR, delay fault, full CQ or write buffer), {@link TcpQueuePair#DROP} for a malformed frame, or
     * {@link TcpQueuePair#DISCARD} to drop it unanswered (a responder in ERR is silent, so the requester times out as
     * it would against hardware; after an ended RNR wait the requester is in ERR and what it sent behind the failed
     * request is dropped).
     */
    int onRequest(
        final TcpConnection connection, final ByteBuffer in, final int frame, final int frameLength, final long nowNs)
        throws IOException
    {
        final QueuePairState current = qp.state();
        if (current == QueuePairState.ERR || qp.isClosed() || connection.discardingRequests)
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
        // A READ longer than any message would need a response frame no requester accepts, and a write buffer sized
        // from a peer's one int (up to 2 GiB, which overflowed the sizing and threw): NAKed as a NIC does.
        final boolean readTooLong = opcode == WorkRequestOpcode.RDMA_READ && length > TcpDevice.MAX_MESSAGE_LENGTH;
        final int responsePayload = opcode == WorkRequestOpcode.RDMA_READ && !readTooLong ? length : 0;
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
                readRegion = readTooLong || 0 == length ? null : readableRegion(rkey, remoteAddress, length);
                status = readTooLong ? WorkCompletionStatus.REM_INV_REQ_ERR : length > 0 && null == readRegion ?
                    WorkCompletionStatus.REM_ACCESS_ERR : WorkCompletionStatus.SUCCESS;
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
     * @return {@link TcpQueuePair#HOLD}, or {@link TcpQueuePair#CONSUMED} once the wait is over and the request
     * dropped.
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
            qp.enterError();
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
            return qp.postedReceives() > rqConsumed;
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
            return qp.placeInSharedReceive(claimedSrqIndex, connection.readSegment(), payload, length);
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
            if (!qp.reportSharedReceive(claimedSrqIndex, status, opcode, length, immediate, hasImmediate, solicited))
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
        if (!qp.reportReceive(rqConsumed, status, opcode, length, immediate, hasImmediate, solicited))
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
        if (requestsApplied <= requestsAcknowledged || QueuePairState.ERR == qp.state() ||
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
    // Errors.

    /**
     * In ERR: flush the RECV claimed from the SRQ, if any, and every RECV posted to the QP's own queue.
     */
    int flushReceives()
    {
        int work = 0;
        if (claimedSrqIndex >= 0 && qp.reportSharedReceive(claimedSrqIndex, WorkCompletionStatus.WR_FLUSH_ERR,
            WorkCompletionOpcode.RECV, 0, 0, false, false))
        {
            claimedSrqIndex = -1;
            work++;
        }
        final long receiveTail = qp.postedReceives();
        while (rqConsumed < receiveTail && qp.reportReceive(
            rqConsumed, WorkCompletionStatus.WR_FLUSH_ERR, WorkCompletionOpcode.RECV, 0, 0, false, false))
        {
            rqConsumed++;
            work++;
        }
        return work;
    }
}
