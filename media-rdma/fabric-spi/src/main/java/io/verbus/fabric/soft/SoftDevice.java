package io.verbus.fabric.soft;

import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.DeviceAttributes;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SharedReceiveQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;

/**
 * What the soft devices share: attributes, the region key table, PD and QP numbering, CQ creation and
 * the bookkeeping that lets {@link #close()} release everything still open.
 */
public abstract class SoftDevice implements Device
{
    protected final DeviceAttributes attributes;
    protected final FabricContext context;
    private final SoftRegionTable regionTable;
    /**
     * PSNs are what the tcp NIC's hello proves knowledge of (QPNs are sequential), so they must be unpredictable,
     * not merely well mixed: a non-cryptographic generator is seeded from the clock.
     */
    private final RandomGenerator random = new SecureRandom();
    private final AtomicInteger protectionDomainIds = new AtomicInteger();
    private final AtomicInteger queuePairNumbers;
    private final List<SoftCompletionQueue> completionQueues = new CopyOnWriteArrayList<>();
    private final List<SoftQueuePair> queuePairs = new CopyOnWriteArrayList<>();
    private final List<SoftCompletionChannel> completionChannels = new CopyOnWriteArrayList<>();
    private final List<SoftSharedReceiveQueue> sharedReceiveQueues = new CopyOnWriteArrayList<>();
    /** The open QPs as an array, for {@link #progress()} to walk without allocating. */
    private volatile SoftQueuePair[] queuePairArray = new SoftQueuePair[0];
    private volatile boolean closed;

    protected SoftDevice(final DeviceAttributes attributes, final FabricContext context)
    {
        this.attributes = attributes;
        this.context = context;
        this.regionTable = new SoftRegionTable(random.nextInt());
        this.queuePairNumbers = new AtomicInteger(0x100 + random.nextInt(0x10000));
    }

    @Override
    public DeviceAttributes attributes()
    {
        return attributes;
    }

    /**
     * @return the test faults this device honours.
     */
    public FaultInjection faultInjection()
    {
        return context.faultInjection();
    }

    /**
     * @return the key table.
     */
    public SoftRegionTable regionTable()
    {
        return regionTable;
    }

    /**
     * @return a cryptographically strong generator for PSNs and identities (control path only).
     */
    public RandomGenerator random()
    {
        return random;
    }

    @Override
    public ProtectionDomain allocateProtectionDomain()
    {
        requireOpen();
        return new SoftProtectionDomain(this, protectionDomainIds.incrementAndGet());
    }

    @Override
    public CompletionQueue createCompletionQueue(final int depth, final CompletionChannel channel)
    {
        requireOpen();
        if (depth < 1 || depth > attributes.maxCompletionQueueEntries())
        {
            throw new IllegalArgumentException(
                "completion queue depth must be in [1, " + attributes.maxCompletionQueueEntries() + "]: " + depth);
        }
        SoftCompletionChannel softChannel = null;
        if (null != channel)
        {
            if (!(channel instanceof SoftCompletionChannel soft) || !completionChannels.contains(soft))
            {
                throw new IllegalArgumentException("completion channel was not created by device " + attributes.name());
            }
            softChannel = soft;
        }
        final SoftCompletionQueue[] holder = new SoftCompletionQueue[1];
        holder[0] = new SoftCompletionQueue(depth, () -> completionQueues.remove(holder[0]), softChannel);
        completionQueues.add(holder[0]);
        return holder[0];
    }

    @Override
    public CompletionChannel createCompletionChannel()
    {
        requireOpen();
        final SoftCompletionChannel[] holder = new SoftCompletionChannel[1];
        holder[0] = new SoftCompletionChannel(() -> completionChannels.remove(holder[0]));
        completionChannels.add(holder[0]);
        return holder[0];
    }

    /**
     * Create an SRQ after the PD checked the depth.
     */
    protected final SharedReceiveQueue createSharedReceiveQueue(final SoftProtectionDomain pd, final int depth)
    {
        requireOpen();
        final SoftSharedReceiveQueue srq = newSharedReceiveQueue(pd, depth);
        sharedReceiveQueues.add(srq);
        return srq;
    }

    /**
     * @return a new SRQ whose claim header peers can reach; by default in native memory of this process.
     */
    protected SoftSharedReceiveQueue newSharedReceiveQueue(final SoftProtectionDomain pd, final int depth)
    {
        final MemorySegment header =
            Arena.ofAuto().allocate(SoftSharedReceiveQueue.headerLength(depth), 64);
        final SoftSharedReceiveQueue[] holder = new SoftSharedReceiveQueue[1];
        holder[0] = new SoftSharedReceiveQueue(pd, depth, header, () -> sharedReceiveQueues.remove(holder[0]));
        return holder[0];
    }

    /**
     * @param srq an SRQ.
     * @return true if this device created it and it is open.
     */
    public boolean ownsSharedReceiveQueue(final SoftSharedReceiveQueue srq)
    {
        return sharedReceiveQueues.contains(srq);
    }

    /**
     * Forget a closed SRQ (providers whose SRQ has its own close hook).
     */
    protected void onSharedReceiveQueueClosed(final SoftSharedReceiveQueue srq)
    {
        sharedReceiveQueues.remove(srq);
    }

    boolean ownsCompletionQueue(final SoftCompletionQueue cq)
    {
        return completionQueues.contains(cq);
    }

    /**
     * Register memory after the PD checked the generic constraints.
     */
    protected MemoryRegion registerMemory(
        final SoftProtectionDomain pd, final MemorySegment segment, final int accessFlags)
    {
        final int key = regionTable.reserveKey();
        final SoftMemoryRegion region = new SoftMemoryRegion(regionTable, segment, key, accessFlags, pd.id());
        regionTable.publish(region);
        return region;
    }

    /**
     * Create a QP after the PD validated the config.
     */
    protected final QueuePair createQueuePair(final SoftProtectionDomain pd, final QueuePairConfig config)
    {
        requireOpen();
        if (queuePairs.size() >= attributes.maxQueuePairs())
        {
            throw new FabricException("device " + attributes.name() + " already holds " +
                attributes.maxQueuePairs() + " queue pairs");
        }
        final SoftQueuePair qp = newQueuePair(pd, config, queuePairNumbers.incrementAndGet() & 0xFF_FFFF);
        synchronized (queuePairs)
        {
            queuePairs.add(qp);
            queuePairArray = queuePairs.toArray(new SoftQueuePair[0]);
        }
        return qp;
    }

    @Override
    public int progress()
    {
        int work = 0;
        for (final SoftQueuePair qp : queuePairArray)
        {
            work += qp.progress();
        }
        return work;
    }

    /**
     * @return a new provider QP.
     */
    protected abstract SoftQueuePair newQueuePair(SoftProtectionDomain pd, QueuePairConfig config, int qpNumber);

    void onQueuePairClosed(final SoftQueuePair qp)
    {
        synchronized (queuePairs)
        {
            queuePairs.remove(qp);
            queuePairArray = queuePairs.toArray(new SoftQueuePair[0]);
        }
    }

    /**
     * @param qpNumber a QP number.
     * @return the open QP with that number, or null.
     */
    public SoftQueuePair queuePair(final int qpNumber)
    {
        for (final SoftQueuePair qp : queuePairs)
        {
            if (qp.qpNumber() == qpNumber)
            {
                return qp;
            }
        }
        return null;
    }

    /**
     * @return the open QPs.
     */
    protected List<SoftQueuePair> queuePairs()
    {
        return queuePairs;
    }

    /**
     * @return true once closed.
     */
    public boolean isClosed()
    {
        return closed;
    }

    protected void requireOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("device " + attributes.name() + " is closed");
        }
    }

    @Override
    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (final SoftQueuePair qp : new ArrayList<>(queuePairs))
        {
            qp.close();
        }
        regionTable.releaseAll();
        for (final SoftSharedReceiveQueue srq : new ArrayList<>(sharedReceiveQueues))
        {
            srq.close();
        }
        for (final SoftCompletionQueue cq : new ArrayList<>(completionQueues))
        {
            cq.close();
        }
        for (final SoftCompletionChannel channel : new ArrayList<>(completionChannels))
        {
            channel.close();
        }
        onClose();
    }

    /**
     * Hook: release provider resources (threads, files, sockets).
     */
    protected abstract void onClose();
}
