package io.verbus.media.rdma;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.QueuePair;
import io.verbus.media.rdma.protocol.SlotLayout;
import io.verbus.media.rdma.protocol.SocketMessageTransport;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * The publisher's state for one subscriber: its QP and CQ, the remote ring and position block it WRITEs,
 * the status slot the subscriber WRITEs back, and the sender's progress.
 * <p>
 * Created by the control thread and handed to the sender through a queue; from then on the sender (the
 * owner) alone touches the QP and the progress fields. The volatile flags are the only cross-thread state:
 * the control thread asks for a close, the owner says when it has let go ({@link #retired}) so the control
 * thread may destroy the QP and deregister the regions.
 */
final class SubscriberConnection
{
    final long id;
    final String name;
    final QueuePair qp;
    final CompletionQueue cq;
    final MemoryRegion statusRegion;
    final int statusSlotIndex;
    final UnsafeBuffer statusBlock;
    final MemoryRegion sourceRegion;
    final UnsafeBuffer sourceBlocks;
    final int sourceBlockCount;
    final long ringAddress;
    final int ringRkey;
    final long counterAddress;
    final int counterRkey;
    final boolean hasGroupTag;
    final long groupTag;
    final int inlineLimit;
    final boolean positionInline;
    final int sendQueueDepth;
    final RdmaCounters.Connection counters;
    final SocketMessageTransport transport;

    volatile long joinPosition = -1;
    volatile boolean ready;
    volatile boolean closeRequested;
    volatile String closeReason;
    volatile boolean retired;

    // owner-only progress
    long sentPosition;
    long consumedPosition;
    long lastStatusTimestamp;
    long lastHeardNs;
    long lastPositionWriteNs;
    long wrsPosted;
    long wrsCompleted;
    long lastSignaledSeq;
    long bytesPosted;
    long inlineWrs;
    long signaledWrs;
    long completionErrors;

    SubscriberConnection(
        final long id,
        final String name,
        final QueuePair qp,
        final CompletionQueue cq,
        final MemoryRegion statusRegion,
        final int statusSlotIndex,
        final MemoryRegion sourceRegion,
        final long ringAddress,
        final int ringRkey,
        final long counterAddress,
        final int counterRkey,
        final boolean hasGroupTag,
        final long groupTag,
        final int inlineLimit,
        final RdmaCounters.Connection counters,
        final SocketMessageTransport transport)
    {
        this.id = id;
        this.name = name;
        this.qp = qp;
        this.cq = cq;
        this.statusRegion = statusRegion;
        this.statusSlotIndex = statusSlotIndex;
        this.statusBlock = new UnsafeBuffer(statusRegion.address(), (int)statusRegion.length());
        this.sourceRegion = sourceRegion;
        this.sourceBlocks = new UnsafeBuffer(sourceRegion.address(), (int)sourceRegion.length());
        this.sourceBlockCount = (int)(sourceRegion.length() / SlotLayout.BLOCK_LENGTH);
        this.ringAddress = ringAddress;
        this.ringRkey = ringRkey;
        this.counterAddress = counterAddress;
        this.counterRkey = counterRkey;
        this.hasGroupTag = hasGroupTag;
        this.groupTag = groupTag;
        this.inlineLimit = inlineLimit;
        this.positionInline = qp.maxInlineData() >= SlotLayout.WRITE_LENGTH;
        // At most one WR in flight per position source block: a block is rewritten only once its WR was reaped
        // (a device may grant a deeper queue than the blocks registered for the requested depth).
        this.sendQueueDepth = Math.min(qp.maxSendWorkRequests(), sourceBlockCount);
        this.counters = counters;
        this.transport = transport;
    }

    void requestClose(final String reason)
    {
        if (null == closeReason)
        {
            closeReason = reason;
        }
        closeRequested = true;
    }
}
