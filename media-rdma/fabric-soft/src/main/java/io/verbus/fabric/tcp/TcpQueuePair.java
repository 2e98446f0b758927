package io.verbus.fabric.tcp;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.soft.SoftMemoryPlacement;
import io.verbus.fabric.soft.SoftMemoryRegion;
import io.verbus.fabric.soft.SoftProtectionDomain;
import io.verbus.fabric.soft.SoftQueuePair;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestOpcode;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * An RC QP of the tcp provider. The application thread posts into the queues; the device's NIC thread does
 * everything else: transmits WRs in order on the connection it dialed to the peer's NIC, applies the
 * peer's requests arriving on the connection the peer dialed, completes WRs when acknowledged, times
 * out a silent peer, and flushes the queues once the QP is in ERR. Fields below the queues belong to the
 * NIC thread.
 */
final class TcpQueuePair extends SoftQueuePair
{
    private final TcpNic nic;
    InetSocketAddress remoteNic;
    TcpConnection outbound;
    TcpConnection inbound;
    long sqTransmitted;
    long sqCompleted;
    long rqConsumed;
    long lastResponseNs;
    long rnrSinceNs = Long.MIN_VALUE;
    long dialStartedNs = Long.MIN_VALUE;
    /** Status the head WR fails with when the QP errs for a reason that is not a completion (lost peer). */
    WorkCompletionStatus headFailure;
    /** Index of a WR that failed a local check at transmit time, and why; -1 if none. */
    long localFailureIndex = -1;
    WorkCompletionStatus localFailureStatus;

    TcpQueuePair(
        final TcpDevice device, final SoftProtectionDomain pd, final QueuePairConfig config, final int qpNumber)
    {
        super(device, pd, config, qpNumber);
        this.nic = device.nic();
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
    protected void onSendPosted()
    {
    }

    @Override
    protected void onReceivePosted(final long index)
    {
    }

    @Override
    protected void onClose()
    {
        nic.removeQueuePair(this);
    }

    // ---------------------------------------------------------------------------------------------------
    // NIC thread from here on.

    static final int CONSUMED = 0;
    static final int HOLD = 1;
    static final int DROP = 2;
    static final int DISCARD = 3;

    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final long RNR_NAK_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(20);

    /**
     * Apply one request from the peer, in order, after the responder checks.
     *
     * @return {@link #CONSUMED}, {@link #HOLD} to retry the same frame later (RNR, not yet RTR, delay fault,
     * full CQ or write buffer) or {@link #DISCARD} to drop it unanswered (a responder in ERR is silent, so
     * the requester times out as it would against hardware).
     */
    int onRequest(final TcpConnection connection, final ByteBuffer in, final int frame, final long nowNs)
        throws IOException
    {
        final QueuePairState current = state;
        if (current == QueuePairState.ERR || isClosed())
        {
            return DISCARD;
        }
        if (current != QueuePairState.RTR && current != QueuePairState.RTS)
        {
            return HOLD;
        }
        final long delayNs = faults.operationDelayNs();
        if (delayNs > 0)
        {
            if (connection.holdSinceNs == Long.MIN_VALUE)
            {
                connection.holdSinceNs = nowNs;
            }
            if (nowNs - connection.holdSinceNs < delayNs)
            {
                return HOLD;
            }
        }

        final WorkRequestOpcode opcode = WR_OPCODES[in.get(frame + TcpWire.REQUEST_OPCODE_OFFSET)];
        final long sequence = in.getLong(frame + TcpWire.REQUEST_SEQUENCE_OFFSET);
        final long remoteAddress = in.getLong(frame + TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET);
        final int rkey = in.getInt(frame + TcpWire.REQUEST_RKEY_OFFSET);
        final int length = in.getInt(frame + TcpWire.REQUEST_LENGTH_OFFSET);
        final int immediate = in.getInt(frame + TcpWire.REQUEST_IMMEDIATE_OFFSET);
        final long payload = frame + TcpWire.REQUEST_HEADER_LENGTH;

        if (opcode.consumesReceive() && receiveTail() <= rqConsumed)
        {
            if (connection.lastRnrNakNs == Long.MIN_VALUE || nowNs - connection.lastRnrNakNs >= RNR_NAK_INTERVAL_NS)
            {
                final int offset = connection.reserve(TcpWire.RESPONSE_HEADER_LENGTH);
                if (offset >= 0)
                {
                    writeResponseHeader(connection, offset, TcpWire.TYPE_RNR_NAK, WorkCompletionStatus.SUCCESS,
                        sequence, 0, TcpWire.RESPONSE_HEADER_LENGTH);
                    connection.lastRnrNakNs = nowNs;
                }
            }
            return HOLD;
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
                        SoftMemoryPlacement.place(connection.readSegment(), payload, region.segment(),
                            region.offsetOf(remoteAddress), length, faults.writePlacement());
                    }
                }
                if (status == WorkCompletionStatus.SUCCESS && opcode == WorkRequestOpcode.RDMA_WRITE_WITH_IMM)
                {
                    if (!completeReceive(rqConsumed, WorkCompletionStatus.SUCCESS,
                        WorkCompletionOpcode.RECV_RDMA_WITH_IMM, length, immediate, true))
                    {
                        return HOLD;
                    }
                    rqConsumed++;
                }
            }
            case SEND, SEND_WITH_IMM ->
            {
                final int slot = (int)(rqConsumed % rqDepth);
                WorkCompletionStatus receiveStatus = WorkCompletionStatus.SUCCESS;
                if (length > rqLength[slot])
                {
                    receiveStatus = WorkCompletionStatus.LOC_LEN_ERR;
                    status = WorkCompletionStatus.REM_INV_REQ_ERR;
                }
                else if (length > 0)
                {
                    final SoftMemoryRegion region = localRegions.lookup(rqLkey[slot]);
                    if (null == region ||
                        !region.permits(protectionDomainId, rqAddress[slot], length, AccessFlags.LOCAL_WRITE))
                    {
                        receiveStatus = WorkCompletionStatus.LOC_PROT_ERR;
                        status = WorkCompletionStatus.REM_OP_ERR;
                    }
                    else
                    {
                        MemorySegment.copy(connection.readSegment(), payload, region.segment(),
                            region.offsetOf(rqAddress[slot]), length);
                    }
                }
                if (!completeReceive(rqConsumed, receiveStatus, WorkCompletionOpcode.RECV, length, immediate,
                    opcode == WorkRequestOpcode.SEND_WITH_IMM))
                {
                    return HOLD;
                }
                rqConsumed++;
            }
            case RDMA_READ ->
            {
                if (length > 0)
                {
                    readRegion = localRegions.lookup(rkey);
                    if (null == readRegion ||
                        !readRegion.permits(protectionDomainId, remoteAddress, length, AccessFlags.REMOTE_READ))
                    {
                        readRegion = null;
                        status = WorkCompletionStatus.REM_ACCESS_ERR;
                    }
                }
            }
            case ATOMIC_FETCH_AND_ADD, ATOMIC_CMP_AND_SWP ->
            {
                final SoftMemoryRegion region = localRegions.lookup(rkey);
                if ((remoteAddress & (Long.BYTES - 1)) != 0)
                {
                    status = WorkCompletionStatus.REM_INV_REQ_ERR;
                }
                else if (null == region ||
                    !region.permits(protectionDomainId, remoteAddress, Long.BYTES, AccessFlags.REMOTE_ATOMIC))
                {
                    status = WorkCompletionStatus.REM_ACCESS_ERR;
                }
                else
                {
                    final long compareAdd = in.getLong(frame + TcpWire.REQUEST_COMPARE_ADD_OFFSET);
                    final long offset = region.offsetOf(remoteAddress);
                    value = opcode == WorkRequestOpcode.ATOMIC_FETCH_AND_ADD ?
                        (long)LONG.getAndAdd(region.segment(), offset, compareAdd) :
                        (long)LONG.compareAndExchange(region.segment(), offset, compareAdd,
                            in.getLong(frame + TcpWire.REQUEST_SWAP_OFFSET));
                }
            }
        }

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
        connection.holdSinceNs = Long.MIN_VALUE;
        connection.lastRnrNakNs = Long.MIN_VALUE;
        if (status != WorkCompletionStatus.SUCCESS)
        {
            // A responder that NAKs an access or invalid request goes to ERR, as on RC hardware.
            enterError();
        }
        return CONSUMED;
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

    /**
     * Take one response to the WR at the head of the outstanding ones.
     *
     * @return {@link #CONSUMED}, {@link #HOLD} (CQ full) or {@link #DROP} (out of order: protocol error).
     */
    int onResponse(final TcpConnection connection, final ByteBuffer in, final int frame, final long nowNs)
    {
        final byte type = in.get(frame + TcpWire.FRAME_TYPE_OFFSET);
        final long sequence = in.getLong(frame + TcpWire.RESPONSE_SEQUENCE_OFFSET);
        if (state == QueuePairState.ERR)
        {
            return CONSUMED;
        }
        if (sequence != sqCompleted || sqCompleted >= sqTransmitted)
        {
            return DROP;
        }
        lastResponseNs = nowNs;
        if (type == TcpWire.TYPE_RNR_NAK)
        {
            if (rnrSinceNs == Long.MIN_VALUE)
            {
                rnrSinceNs = nowNs;
            }
            return CONSUMED;
        }

        final int slot = (int)(sequence % sqDepth);
        final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[slot]];
        WorkCompletionStatus status = STATUSES[in.get(frame + TcpWire.RESPONSE_STATUS_OFFSET)];
        if (status == WorkCompletionStatus.SUCCESS)
        {
            if (opcode == WorkRequestOpcode.RDMA_READ && sqLength[slot] > 0)
            {
                final SoftMemoryRegion region = localRegion(slot, AccessFlags.LOCAL_WRITE);
                if (null == region)
                {
                    status = WorkCompletionStatus.LOC_PROT_ERR;
                }
                else
                {
                    MemorySegment.copy(connection.readSegment(), frame + TcpWire.RESPONSE_HEADER_LENGTH,
                        region.segment(), region.offsetOf(sqLocalAddress[slot]), sqLength[slot]);
                }
            }
            else if (opcode.isAtomic())
            {
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
            // As on hardware, the QP is in ERR before its error completion can be polled: flush() reports this
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
        rnrSinceNs = Long.MIN_VALUE;
        return CONSUMED;
    }

    /**
     * The NIC's duty cycle for this QP: transmit posted WRs, fail a silent or RNR-exhausted peer, flush on ERR.
     *
     * @return work done.
     */
    int duty(final long nowNs, final long connectTimeoutNs) throws IOException
    {
        if (state == QueuePairState.ERR)
        {
            return flush();
        }
        if (state != QueuePairState.RTS)
        {
            return 0;
        }
        final TcpConnection connection = outbound;
        if (null == connection || !connection.connected || !connection.helloAcknowledged)
        {
            if (dialStartedNs != Long.MIN_VALUE && nowNs - dialStartedNs > connectTimeoutNs &&
                sendTail() > sqCompleted)
            {
                headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                enterError();
            }
            return 0;
        }

        int work = 0;
        final long tail = sendTail();
        while (sqTransmitted < tail && localFailureIndex < 0)
        {
            final int slot = (int)(sqTransmitted % sqDepth);
            final WorkRequestOpcode opcode = WR_OPCODES[sqOpcode[slot]];
            final int length = sqLength[slot];
            if ((sqFlags[slot] & SendFlags.FENCE) != 0 && sqCompleted < sqTransmitted)
            {
                break;
            }
            MemorySegment source = sqInline;
            long sourceOffset = (long)slot * maxInlineData;
            if (length > device.attributes().maxMessageLength())
            {
                localFailureIndex = sqTransmitted;
                localFailureStatus = WorkCompletionStatus.LOC_LEN_ERR;
                break;
            }
            final boolean carriesPayload = !opcode.isAtomic() && opcode != WorkRequestOpcode.RDMA_READ;
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
            final int frameLength = TcpWire.REQUEST_HEADER_LENGTH + payloadLength;
            final int offset = connection.reserve(frameLength);
            if (offset < 0)
            {
                break;
            }
            final ByteBuffer out = connection.writeBuffer();
            out.putInt(offset + TcpWire.FRAME_LENGTH_OFFSET, frameLength);
            out.put(offset + TcpWire.FRAME_TYPE_OFFSET, TcpWire.TYPE_REQUEST);
            out.put(offset + TcpWire.REQUEST_OPCODE_OFFSET, sqOpcode[slot]);
            out.putLong(offset + TcpWire.REQUEST_SEQUENCE_OFFSET, sqTransmitted);
            out.putLong(offset + TcpWire.REQUEST_REMOTE_ADDRESS_OFFSET, sqRemoteAddress[slot]);
            out.putInt(offset + TcpWire.REQUEST_RKEY_OFFSET, sqRkey[slot]);
            out.putInt(offset + TcpWire.REQUEST_LENGTH_OFFSET, length);
            out.putInt(offset + TcpWire.REQUEST_IMMEDIATE_OFFSET, sqImmediate[slot]);
            out.putInt(offset + TcpWire.REQUEST_FLAGS_OFFSET, sqFlags[slot]);
            out.putLong(offset + TcpWire.REQUEST_COMPARE_ADD_OFFSET, sqCompareAdd[slot]);
            out.putLong(offset + TcpWire.REQUEST_SWAP_OFFSET, sqSwap[slot]);
            if (payloadLength > 0)
            {
                MemorySegment.copy(source, sourceOffset, connection.writeSegment(),
                    offset + TcpWire.REQUEST_HEADER_LENGTH, payloadLength);
            }
            if (sqCompleted == sqTransmitted)
            {
                lastResponseNs = nowNs;
            }
            sqTransmitted++;
            work++;
        }

        if (localFailureIndex >= 0 && sqCompleted == localFailureIndex)
        {
            // ERR first, so the error completion is never seen on a QP that still reads RTS; flush() reports the
            // failed WR with localFailureStatus.
            enterError();
            return work + 1;
        }

        if (sqCompleted < sqTransmitted)
        {
            if (rnrSinceNs != Long.MIN_VALUE)
            {
                if (rnrRetryCount != QueuePairConfig.RNR_RETRY_INFINITE &&
                    nowNs - rnrSinceNs >= rnrTimeoutNs * rnrRetryCount)
                {
                    headFailure = WorkCompletionStatus.RNR_RETRY_EXC_ERR;
                    enterError();
                }
            }
            else if (nowNs - lastResponseNs > retryTimeoutNs)
            {
                headFailure = WorkCompletionStatus.RETRY_EXC_ERR;
                enterError();
            }
        }
        return work;
    }

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

    private int flush()
    {
        int work = 0;
        final long tail = sendTail();
        while (sqCompleted < tail)
        {
            final WorkCompletionStatus status;
            if (sqCompleted == localFailureIndex)
            {
                status = localFailureStatus;
            }
            else if (null != headFailure)
            {
                status = headFailure;
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
