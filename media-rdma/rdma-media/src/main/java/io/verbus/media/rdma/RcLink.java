package io.verbus.media.rdma;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.media.rdma.protocol.SlotLayout;
import io.verbus.media.rdma.protocol.SocketMessageTransport;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.Queue;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One end of a reliable-connected link as both sides of an {@code rdma:} connection use it: a QP whose send queue
 * carries WRITEs with only every Nth one signaled, the completion queue those signals land in, and the registered
 * source blocks that 24-byte slot WRITEs (the publisher's position block, the subscriber's status slot) read from.
 * <p>
 * Selective signaling means a completion of WR {@code n} retires every WR up to {@code n}; so while no signaled WR is
 * outstanding there is nothing to reap and the duty cycle skips the CQ (errors are still reaped on the housekeeping
 * cadence: a failed WR completes with an error whether it was signaled or not, and the QP's state says so too).
 * A slot source block is rewritten only after the WR that read it was reaped: the send queue is never deeper than
 * the blocks.
 * <p>
 * The owner-only fields are used by one thread (the sender or receiver agent); close requests come from any thread.
 */
abstract class RcLink
{
    final String name;
    /** The connection's own protection domain: its QP and the regions it uses, nothing of another connection. */
    final ProtectionDomain pd;
    final QueuePair qp;
    final CompletionQueue cq;
    final MemoryRegion sourceRegion;
    final UnsafeBuffer sourceBlocks;
    final int sourceBlockCount;
    /** {@code sourceBlockCount - 1} when a power of two: the block of a sequence is then a mask, not a division. */
    private final long sourceBlockMask;
    /** Slot WRITEs go INLINE when the QP takes 24 bytes inline: the source block is then read at post time. */
    final boolean slotInline;
    final int sendQueueDepth;
    final RdmaCounters.Connection counters;
    final SocketMessageTransport transport;

    volatile boolean closeRequested;
    volatile String closeReason;
    volatile boolean retired;

    // owner-only
    long lastHeardNs;
    long wrsPosted;
    long wrsCompleted;
    long lastSignaledSeq;
    long bytesPosted;
    long inlineWrs;
    long signaledWrs;
    long completionErrors;

    RcLink(
        final String name,
        final ProtectionDomain pd,
        final QueuePair qp,
        final CompletionQueue cq,
        final MemoryRegion sourceRegion,
        final RdmaCounters.Connection counters,
        final SocketMessageTransport transport)
    {
        this.name = name;
        this.pd = pd;
        this.qp = qp;
        this.cq = cq;
        this.sourceRegion = sourceRegion;
        this.sourceBlocks = new UnsafeBuffer(sourceRegion.address(), (int)sourceRegion.length());
        this.sourceBlockCount = (int)(sourceRegion.length() / SlotLayout.BLOCK_LENGTH);
        this.sourceBlockMask = Integer.bitCount(sourceBlockCount) == 1 ? sourceBlockCount - 1 : -1;
        this.slotInline = qp.maxInlineData() >= SlotLayout.WRITE_LENGTH;
        // A device may grant a deeper queue than the source blocks registered for the requested depth.
        this.sendQueueDepth = Math.min(qp.maxSendWorkRequests(), sourceBlockCount);
        this.counters = counters;
        this.transport = transport;
    }

    /**
     * Ask the owner to drop this link; the first reason given is the one logged.
     *
     * @param reason why.
     */
    final void requestClose(final String reason)
    {
        if (null == closeReason)
        {
            closeReason = reason;
        }
        closeRequested = true;
    }

    /**
     * The control thread's watch on its socket, until the link is retired, closing is requested or
     * {@code controlRunning} turns false: the peer closing the socket drops the link at once (liveness faster than
     * the heartbeat timeout).
     *
     * @param controlRunning whether the control endpoint still runs.
     * @param peer           who is at the other end, for the close reason ("publisher" or "subscriber").
     */
    final void watchControl(final BooleanSupplier controlRunning, final String peer)
    {
        transport.watch(() -> controlRunning.getAsBoolean() && !retired && !closeRequested,
            () -> requestClose("control connection closed by the " + peer));
    }

    /**
     * The owner lets go of the link for good: the control thread, which waits for this, frees its resources, and
     * closing the control socket tells the peer at once.
     */
    final void retire()
    {
        retired = true;
        transport.close();
    }

    /**
     * Retire links handed over by the control thread but never taken by the owner (it is closing).
     *
     * @param queue  the hand-over queue.
     * @param reason why, for the control thread's log line.
     */
    static void retireQueued(final Queue<? extends RcLink> queue, final String reason)
    {
        RcLink link;
        while (null != (link = queue.poll()))
        {
            link.requestClose(reason);
            link.retire(); // closing its socket ends its control thread's watch at once
        }
    }

    /** @return true while a signaled WR has been posted and its completion not reaped. */
    final boolean awaitsCompletion()
    {
        return lastSignaledSeq > wrsCompleted;
    }

    /**
     * @param wrCount WRs about to be posted.
     * @return true when the send queue has room for them.
     */
    final boolean hasRoomFor(final int wrCount)
    {
        return wrsPosted - wrsCompleted + wrCount <= sendQueueDepth;
    }

    /**
     * Reap the CQ: a successful completion retires every WR up to its id, an error closes the link.
     *
     * @param completions scratch array to poll into.
     * @return completions reaped.
     */
    final int reapCompletions(final WorkCompletion[] completions)
    {
        final int count = cq.poll(completions, completions.length);
        for (int i = 0; i < count; i++)
        {
            final WorkCompletion completion = completions[i];
            if (WorkCompletionStatus.SUCCESS == completion.status())
            {
                wrsCompleted = Math.max(wrsCompleted, completion.wrId());
            }
            else
            {
                completionErrors++;
                // A QP error ends the link at once: nothing more is posted to it.
                requestClose("completion error " + completion.status() + " on WR " + completion.wrId() + ": " +
                    completion.status().meaning());
            }
        }
        return count;
    }

    /**
     * The data path's form of {@link #reapCompletions}: poll the CQ only while a signaled WR is outstanding, else
     * just give the QP its turn ({@link QueuePair#progress()}: a software NIC runs WRs it had to hold back and, on
     * tcp, applies the peer's incoming WRITEs there; hardware has nothing to do).
     *
     * @param completions scratch array to poll into.
     * @return completions reaped, or WRs progressed.
     */
    final int reapDueCompletions(final WorkCompletion[] completions)
    {
        return awaitsCompletion() ? reapCompletions(completions) : qp.progress();
    }

    /**
     * Add a 24-byte slot WRITE ({@code value}, {@code timestamp}, check word) as the next WR of {@code batch}. It
     * is signaled when {@code signalEvery} WRs have gone since the last signaled one.
     *
     * @param batch         the WRs being built; the slot WRITE is its last.
     * @param seq           the slot WRITE's sequence number (its WR id).
     * @param value         the slot's value (a position).
     * @param timestamp     the slot's timestamp (the writer's heartbeat).
     * @param remoteAddress where the slot lives in the peer's memory.
     * @param rkey          the peer region's key.
     * @param signalEvery   at most this many unsignaled WRs in a row.
     * @return the send flags used.
     */
    final int addSlotWrite(
        final WorkRequestBatch batch,
        final long seq,
        final long value,
        final long timestamp,
        final long remoteAddress,
        final int rkey,
        final int signalEvery)
    {
        final int block = sourceBlockMask >= 0 ? (int)(seq & sourceBlockMask) : (int)(seq % sourceBlockCount);
        final int offset = block * SlotLayout.BLOCK_LENGTH;
        SlotLayout.encode(sourceBlocks, offset, value, timestamp);
        int flags = signalFlag(seq, signalEvery);
        if (slotInline)
        {
            flags |= SendFlags.INLINE;
        }
        batch.add().write(seq, sourceRegion.address() + offset, SlotLayout.WRITE_LENGTH, sourceRegion.lkey(),
            remoteAddress, rkey, flags);
        return flags;
    }

    /**
     * Selective signaling: every {@code signalEvery}th WR asks for a completion, which retires it and every WR before.
     *
     * @param seq         the sequence number of the chain's last WR.
     * @param signalEvery the channel's signaling period in WRs.
     * @return {@link SendFlags#SIGNALED} when that WR must be signaled, else 0.
     */
    final int signalFlag(final long seq, final int signalEvery)
    {
        return seq - lastSignaledSeq >= signalEvery ? SendFlags.SIGNALED : 0;
    }

    /**
     * Account for a posted batch.
     *
     * @param lastSeq       the sequence number of its last WR.
     * @param slotFlags     what {@link #addSlotWrite} returned when the last WR is a slot WRITE, else what
     *                      {@link #signalFlag} returned for the last data WR (commit=imm).
     * @param dataBytes     bytes the data WRs carried.
     * @param dataInlineWrs data WRs posted INLINE.
     */
    final void onPosted(final long lastSeq, final int slotFlags, final long dataBytes, final int dataInlineWrs)
    {
        wrsPosted = lastSeq;
        if (0 != (slotFlags & SendFlags.SIGNALED))
        {
            lastSignaledSeq = lastSeq;
            signaledWrs++;
        }
        bytesPosted += dataBytes;
        inlineWrs += dataInlineWrs + (0 != (slotFlags & SendFlags.INLINE) ? 1 : 0);
    }

    /**
     * The housekeeping checks both ends share: errors on the CQ, silence past the timeout, the QP's state.
     *
     * @param completions scratch array to poll into.
     * @param nowNs       the clock.
     * @param timeoutNs   how long the peer may be silent.
     * @param silence     what the peer failed to send, for the close reason ("status from the subscriber").
     */
    final void checkHealth(
        final WorkCompletion[] completions, final long nowNs, final long timeoutNs, final String silence)
    {
        if (!closeRequested)
        {
            reapCompletions(completions);
        }
        if (!closeRequested && nowNs - lastHeardNs > timeoutNs)
        {
            requestClose("no " + silence + " for " + TimeUnit.NANOSECONDS.toMillis(nowNs - lastHeardNs) + " ms");
        }
        if (!closeRequested)
        {
            final QueuePairState state = qp.state();
            RdmaCounters.set(counters.qpState, state.code());
            if (QueuePairState.ERR == state)
            {
                requestClose("QP entered the error state");
            }
        }
    }

    /**
     * Publish the link's counters (housekeeping cadence: the data path only bumps plain fields).
     *
     * @param lag bytes between what was sent and what the subscriber consumed.
     */
    final void publishCounters(final long lag)
    {
        RdmaCounters.set(counters.bytesPosted, bytesPosted);
        RdmaCounters.set(counters.wrsPosted, wrsPosted);
        RdmaCounters.set(counters.inlineWrs, inlineWrs);
        RdmaCounters.set(counters.signaledWrs, signaledWrs);
        RdmaCounters.set(counters.completionErrors, completionErrors);
        RdmaCounters.set(counters.lag, lag);
    }
}
