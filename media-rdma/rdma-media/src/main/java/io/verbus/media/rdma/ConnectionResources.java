package io.verbus.media.rdma;

import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;

import java.lang.foreign.MemorySegment;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The fabric objects a control endpoint creates for its connections (protection domains, memory registrations,
 * completion queues, queue pairs), created and freed in one place, both sides alike, and counted: tests check with
 * {@link #registeredRegionCount()}, {@link #queuePairCount()} and {@link #protectionDomainCount()} that a rejected
 * peer got nothing and that a dropped one left nothing behind. Created and freed on control threads; the counts may
 * be read from any thread.
 * <p>
 * Every connection gets a protection domain of its own, holding its QP and every region that QP uses (a QP can name
 * only the regions of its own PD). So a peer that learns, or guesses, the rkey of another peer's ring or status
 * slot on the same endpoint cannot use it: its WRITEs through its own connection fail with a remote access error.
 */
final class ConnectionResources
{
    /** Completion-queue entries beyond the send queue's depth. */
    private static final int SPARE_COMPLETION_QUEUE_ENTRIES = 16;

    private final AtomicInteger liveRegions = new AtomicInteger();
    private final AtomicInteger liveQueuePairs = new AtomicInteger();
    private final AtomicInteger liveProtectionDomains = new AtomicInteger();

    /** The protection domain of one connection: its QP and the regions that QP may use, nothing else. */
    ProtectionDomain allocateProtectionDomain(final FabricEndpoint endpoint)
    {
        final ProtectionDomain pd = endpoint.device().allocateProtectionDomain();
        liveProtectionDomains.incrementAndGet();
        return pd;
    }

    MemoryRegion register(final ProtectionDomain pd, final MemorySegment memory, final int accessFlags)
    {
        final MemoryRegion region = pd.registerMemory(memory, accessFlags);
        liveRegions.incrementAndGet();
        return region;
    }

    /** A completion queue for a send queue of the channel's {@code queue-depth}, capped by the device. */
    static CompletionQueue createCompletionQueue(final FabricEndpoint endpoint, final RdmaChannelParams params)
    {
        final int maxEntries = endpoint.device().attributes().maxCompletionQueueEntries();
        return endpoint.device().createCompletionQueue(
            Math.min(maxEntries, params.queueDepth() + SPARE_COMPLETION_QUEUE_ENTRIES));
    }

    /**
     * An RC queue pair completing on {@code cq}, with the channel's queue depth and retry timeout (the channel's
     * {@code timeout}) and {@code inlineLength} bytes of inline data, each capped by the device.
     */
    QueuePair createQueuePair(
        final FabricEndpoint endpoint,
        final ProtectionDomain pd,
        final CompletionQueue cq,
        final RdmaChannelParams params,
        final int inlineLength)
    {
        return createQueuePair(endpoint, pd, cq, cq, 1, params, inlineLength);
    }

    /**
     * As {@link #createQueuePair(FabricEndpoint, ProtectionDomain, CompletionQueue, RdmaChannelParams, int)}, with
     * receives completing on their own CQ and a receive queue {@code receiveDepth} deep (commit=imm: the RECVs its
     * WRITE_WITH_IMMs take).
     */
    QueuePair createQueuePair(
        final FabricEndpoint endpoint,
        final ProtectionDomain pd,
        final CompletionQueue sendCq,
        final CompletionQueue receiveCq,
        final int receiveDepth,
        final RdmaChannelParams params,
        final int inlineLength)
    {
        final var attributes = endpoint.device().attributes();
        final QueuePair qp = pd.createQueuePair(new QueuePairConfig()
            .sendCompletionQueue(sendCq)
            .receiveCompletionQueue(receiveCq)
            .maxSendWorkRequests(Math.min(params.queueDepth(), attributes.maxQueuePairWorkRequests()))
            .maxReceiveWorkRequests(receiveDepth)
            .maxInlineData(Math.min(inlineLength, attributes.maxInlineData()))
            .retryTimeoutNs(params.timeoutNs()));
        liveQueuePairs.incrementAndGet();
        return qp;
    }

    /**
     * commit=imm: how many WRITE_WITH_IMMs a subscriber lets its publisher keep in flight, the channel's queue depth
     * capped by the device (one RECV more than this is posted, see {@link ImmediateCommit}).
     */
    static int receiveCredits(final FabricEndpoint endpoint, final RdmaChannelParams params)
    {
        final var attributes = endpoint.device().attributes();
        return Math.min(params.queueDepth(), Math.min(attributes.maxQueuePairWorkRequests(),
            attributes.maxCompletionQueueEntries() - SPARE_COMPLETION_QUEUE_ENTRIES) - 1);
    }

    /**
     * A completion queue for {@code entries} receive completions (commit=imm), its events going to {@code channel}
     * (idle=event) or nowhere (null).
     */
    static CompletionQueue createReceiveCompletionQueue(
        final FabricEndpoint endpoint, final int entries, final CompletionChannel channel)
    {
        final int maxEntries = endpoint.device().attributes().maxCompletionQueueEntries();
        return endpoint.device().createCompletionQueue(
            Math.min(maxEntries, entries + SPARE_COMPLETION_QUEUE_ENTRIES), channel);
    }

    /**
     * Closes the queue pair, then its completion queue, then deregisters the regions, then frees the protection domain
     * they were in; a null was never created.
     */
    void free(final ProtectionDomain pd, final QueuePair qp, final CompletionQueue cq, final MemoryRegion... regions)
    {
        if (null != qp)
        {
            qp.close();
            liveQueuePairs.decrementAndGet();
        }
        if (null != cq)
        {
            cq.close();
        }
        for (final MemoryRegion region : regions)
        {
            if (null != region)
            {
                region.deregister();
                liveRegions.decrementAndGet();
            }
        }
        if (null != pd)
        {
            pd.close();
            liveProtectionDomains.decrementAndGet();
        }
    }

    int protectionDomainCount()
    {
        return liveProtectionDomains.get();
    }

    int registeredRegionCount()
    {
        return liveRegions.get();
    }

    int queuePairCount()
    {
        return liveQueuePairs.get();
    }
}
