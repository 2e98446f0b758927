package io.verbus.fabric.conformance;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.WorkCompletion;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A peer in this process, on its own device of the given fabric (for verbs, possibly the same NIC).
 */
public class InProcessPeer implements ConformancePeer
{
    /** Bytes of peer memory carved into regions for one test. */
    public static final int MEMORY_BYTES = 8 << 20;

    private final Fabric fabric;
    private final Device device;
    private final Runnable killer;
    private final MemorySegment memory;
    private final Map<Integer, MemoryRegion> regions = new HashMap<>();
    private final WorkCompletion[] completions = WorkCompletion.newArray(64);
    private final List<Completion> polled = new ArrayList<>();
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair qp;
    private long nextOffset;
    private int nextRegionId;
    private volatile boolean alive = true;

    /**
     * @param fabric the peer's fabric, closed with the peer.
     * @param killer makes the peer stop answering (fault injection), or null to close its device instead.
     */
    public InProcessPeer(final Fabric fabric, final Runnable killer)
    {
        this.fabric = fabric;
        this.device = fabric.openDevice();
        this.killer = killer;
        this.memory = device.allocateMemory(MEMORY_BYTES);
    }

    @Override
    public QueuePairConnectionInfo createQueuePair(final int receiveDepth)
    {
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(4096);
        qp = pd.createQueuePair(new QueuePairConfig().completionQueue(cq)
            .maxReceiveWorkRequests(receiveDepth).maxSendWorkRequests(16));
        return qp.localConnectionInfo();
    }

    @Override
    public void connect(final QueuePairConnectionInfo initiator)
    {
        qp.connect(initiator);
    }

    @Override
    public Region register(final int length, final int accessFlags)
    {
        final long offset = (nextOffset + 4095) & ~4095L;
        if (offset + length > MEMORY_BYTES)
        {
            throw new IllegalStateException("peer memory exhausted: " + (offset + length) + " > " + MEMORY_BYTES);
        }
        nextOffset = offset + length;
        final MemorySegment slice = memory.asSlice(offset, length);
        slice.fill((byte)0);
        final MemoryRegion region = pd.registerMemory(slice, accessFlags);
        final int id = ++nextRegionId;
        regions.put(id, region);
        return new Region(id, region.address(), region.rkey(), region.length());
    }

    @Override
    public void deregister(final int regionId)
    {
        regions.get(regionId).deregister();
    }

    @Override
    public byte[] read(final int regionId, final long offset, final int length)
    {
        final MemorySegment segment = regions.get(regionId).segment();
        return segment.asSlice(offset, length).toArray(ValueLayout.JAVA_BYTE);
    }

    @Override
    public void write(final int regionId, final long offset, final byte[] bytes)
    {
        MemorySegment.copy(bytes, 0, regions.get(regionId).segment(), ValueLayout.JAVA_BYTE, offset, bytes.length);
    }

    @Override
    public int postReceive(final long wrId, final int regionId, final long offset, final int length)
    {
        final MemoryRegion region = regions.get(regionId);
        return qp.postReceive(wrId, region.address() + offset, length, region.lkey());
    }

    @Override
    public List<Completion> pollReceive(final int count, final long timeoutMs)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        do
        {
            drain();
            if (polled.size() >= count)
            {
                break;
            }
            LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(200));
        }
        while (System.nanoTime() < deadlineNs);
        final List<Completion> result = new ArrayList<>(polled.subList(0, Math.min(count, polled.size())));
        polled.subList(0, result.size()).clear();
        return result;
    }

    private void drain()
    {
        if (null == cq)
        {
            return;
        }
        int n;
        while ((n = cq.poll(completions, completions.length)) > 0)
        {
            for (int i = 0; i < n; i++)
            {
                final WorkCompletion wc = completions[i];
                polled.add(new Completion(wc.wrId(), wc.status(), wc.opcode(), wc.byteLength(), wc.immediateData(),
                    wc.hasImmediate()));
            }
        }
    }

    @Override
    public QueuePairState state()
    {
        drain();
        return qp.state();
    }

    @Override
    public void destroyQueuePair()
    {
        if (!alive)
        {
            return;
        }
        if (null != qp)
        {
            qp.close();
            qp = null;
        }
        for (final MemoryRegion region : regions.values())
        {
            region.deregister();
        }
        regions.clear();
        if (null != cq)
        {
            cq.close();
            cq = null;
        }
        if (null != pd)
        {
            pd.close();
            pd = null;
        }
        polled.clear();
        nextOffset = 0;
    }

    @Override
    public void kill()
    {
        alive = false;
        if (null != killer)
        {
            killer.run();
        }
        else
        {
            device.close();
        }
    }

    @Override
    public boolean isAlive()
    {
        return alive;
    }

    @Override
    public void close()
    {
        try
        {
            if (alive)
            {
                destroyQueuePair();
            }
        }
        finally
        {
            fabric.close();
        }
    }
}
