package io.verbus.media.rdma;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
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
final class SubscriberConnection extends RcLink
{
    final long id;
    /**
     * The log's three terms registered for local access in this connection's protection domain: the source of its data
     * WRITEs (a QP can use only the lkeys of its own PD).
     */
    final MemoryRegion logSourceRegion;
    final MemoryRegion statusRegion;
    final int statusSlotIndex;
    final UnsafeBuffer statusBlock;
    final long ringAddress;
    final int ringRkey;
    final long counterAddress;
    final int counterRkey;
    final boolean hasGroupTag;
    final long groupTag;
    final int inlineLimit;
    /** commit=imm: makes each chain's last WRITE a WRITE_WITH_IMM, within the subscriber's RECVs; null: counter. */
    final ImmediateCommit immediateCommit;

    /** What the subscriber asked to catch up from (CONNECT.catchUpPosition); set before the hand-over. */
    long catchUpRequest = io.verbus.media.rdma.protocol.ConnectFlyweight.CATCH_UP_NONE;
    /** Set by the sender before {@link #joinPosition}: where the catch-up starts (== join when none). */
    long catchUpPosition = -1;
    /** Set by the sender before {@link #joinPosition}: the oldest position the log held at admission. */
    long oldestPosition = -1;
    /** The READ-only registration of the log's terms for a granted catch-up (control thread only), or null. */
    volatile io.verbus.fabric.MemoryRegion logReadRegion;
    volatile long joinPosition = -1;
    volatile boolean ready;

    // owner-only progress
    long sentPosition;
    long consumedPosition;
    long lastStatusTimestamp;
    long lastPositionWriteNs;
    /** Until when a catching-up subscriber that has not reached its join position holds the limit (see updateLimit). */
    long catchUpHoldUntilNs;

    SubscriberConnection(
        final long id,
        final String name,
        final ProtectionDomain pd,
        final QueuePair qp,
        final CompletionQueue cq,
        final MemoryRegion logSourceRegion,
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
        final ImmediateCommit immediateCommit,
        final RdmaCounters.Connection counters,
        final SocketMessageTransport transport)
    {
        super(name, pd, qp, cq, sourceRegion, counters, transport);
        this.id = id;
        this.logSourceRegion = logSourceRegion;
        this.statusRegion = statusRegion;
        this.statusSlotIndex = statusSlotIndex;
        this.statusBlock = new UnsafeBuffer(statusRegion.address(), (int)statusRegion.length());
        this.ringAddress = ringAddress;
        this.ringRkey = ringRkey;
        this.counterAddress = counterAddress;
        this.counterRkey = counterRkey;
        this.hasGroupTag = hasGroupTag;
        this.groupTag = groupTag;
        this.inlineLimit = inlineLimit;
        this.immediateCommit = immediateCommit;
    }
}
