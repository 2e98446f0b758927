package io.verbus.media.rdma;

import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.media.rdma.protocol.SocketMessageTransport;
import io.verbus.media.rdma.protocol.SubscriberHandshake;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.ReadablePosition;

import java.lang.foreign.MemorySegment;

/**
 * The subscriber's state for one connection to a publisher: the registered ring (three term partitions) and
 * position block the publisher WRITEs into, the QP, the publisher's status slot, and the image's bound.
 * <p>
 * The publisher writes the position block; the image's polling thread reads and validates it through
 * {@link PositionBlockBound} (consistent, monotonic, aligned, within two terms of what the image consumed), which
 * keeps the accepted bound in memory the remote side cannot write. The receiver agent reads the same block only for
 * the publisher's heartbeat. Cross-thread handover as in {@link SubscriberConnection}.
 */
final class ImageConnection extends RcLink
{
    final long imageId;
    final int sessionId;
    final int streamId;
    final int initialTermId;
    final int termLength;
    /** Where the live WRITEs start: the publisher's position when it admitted this subscriber. */
    final long joinPosition;
    final FabricEndpoint endpoint;
    final MemorySegment ring;
    final MemoryRegion ringRegion;
    final int positionBlockIndex;
    final MemoryRegion positionRegion;
    final UnsafeBuffer positionBlock;
    final long statusAddress;
    final int statusRkey;
    final UnsafeBuffer[] termBuffers = new UnsafeBuffer[3];
    final ConnectionBound bound;
    /** commit=imm: the receive CQ the image's polling thread reaps (its QP's RECVs); null in counter mode. */
    final CompletionQueue receiveCq;
    /** idle=event: the channel the receive CQ was created on, where the polling thread blocks; else null. */
    final CompletionChannel eventChannel;
    /** The commit mode both ends agreed on, and why. */
    final CommitMode.Choice commit;
    final String sourceIdentity;


    /** The publisher's MTU from its CHALLENGE (validated there). */
    final int mtuLength;
    /**
     * Where the image starts: the join position, or below it once a catch-up by READ filled the ring from there; set
     * before the hand-over to the receiver.
     */
    long startPosition;

    // owner-only
    ReadablePosition subscriberPosition;
    boolean announced;
    long lastPublisherTimestamp;
    /** The publisher's latest position as the agent last read it (for the lag counter; the image keeps its own). */
    long lastPublishedPosition;
    long lastConsumedSent = -1;
    long lastStatusWriteNs;
    /** Bytes consumed that make a status WRITE due at once: a quarter of the window. */
    long statusThreshold;
    /**
     * commit=imm: immediates reaped since the last status WRITE that make the next one due at once (a quarter of the
     * receive credits granted); 0 in counter mode. Without it a stream of small messages spends its credits long
     * before a quarter window is consumed and waits for the 1 ms status.
     */
    long statusImmediateThreshold;
    long immediatesAtLastStatus;
    /** Set when a closed connection starts draining to the publisher's end of stream: when it stops waiting. */
    long drainDeadlineNs;
    /** commit=imm: the self-test (the first immediate) must pass by then, before the image is announced. */
    long selfTestDeadlineNs;

    /** The publisher's status slot for this subscriber, from its ACCEPT: where the status WRITEs go. */
    record StatusSlot(long address, int rkey)
    {
    }

    ImageConnection(
        final long imageId,
        final String name,
        final SubscriberHandshake.PublicationInfo publication,
        final long joinPosition,
        final FabricEndpoint endpoint,
        final ProtectionDomain pd,
        final MemorySegment ring,
        final MemoryRegion ringRegion,
        final int positionBlockIndex,
        final MemoryRegion positionRegion,
        final MemoryRegion sourceRegion,
        final QueuePair qp,
        final CompletionChannel eventChannel,
        final CommitMode.Choice commit,
        final StatusSlot statusSlot,
        final String sourceIdentity,
        final RdmaCounters.Connection counters,
        final SocketMessageTransport transport)
    {
        // The send CQ carries the status WRITEs' completions; with commit=imm the receive CQ is the immediates' own.
        super(name, pd, qp, qp.sendCompletionQueue(), sourceRegion, counters, transport);
        this.imageId = imageId;
        this.sessionId = publication.sessionId();
        this.streamId = publication.streamId();
        this.initialTermId = publication.initialTermId();
        this.termLength = publication.termLength();
        this.mtuLength = publication.mtuLength();
        this.joinPosition = joinPosition;
        this.startPosition = joinPosition;
        this.endpoint = endpoint;
        this.ring = ring;
        this.ringRegion = ringRegion;
        this.positionBlockIndex = positionBlockIndex;
        this.positionRegion = positionRegion;
        this.positionBlock = new UnsafeBuffer(positionRegion.address(), (int)positionRegion.length());
        this.statusAddress = statusSlot.address();
        this.statusRkey = statusSlot.rkey();
        final long base = ring.address();
        for (int i = 0; i < 3; i++)
        {
            termBuffers[i] = new UnsafeBuffer(base + (long)i * termLength, termLength);
        }
        this.receiveCq = CommitMode.IMM == commit.mode() ? qp.receiveCompletionQueue() : null;
        this.eventChannel = eventChannel;
        this.commit = commit;
        final PositionBlockBound blockBound = new PositionBlockBound(positionBlock, termLength, joinPosition);
        bound = null == receiveCq ? blockBound : new ImmediateBound(receiveCq, eventChannel, qp,
            positionRegion.address(), positionRegion.lkey(), blockBound, termLength, joinPosition);
        this.sourceIdentity = sourceIdentity;
    }
}
