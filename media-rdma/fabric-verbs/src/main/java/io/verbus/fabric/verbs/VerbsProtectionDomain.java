package io.verbus.fabric.verbs;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.Device;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SharedReceiveQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * {@code struct ibv_pd}: registers memory (after the RLIMIT_MEMLOCK check) and creates RC QPs.
 */
final class VerbsProtectionDomain implements ProtectionDomain
{
    private final VerbsDevice device;
    final MemorySegment pd;
    private final List<VerbsMemoryRegion> regions = new CopyOnWriteArrayList<>();
    private final List<VerbsQueuePair> queuePairs = new CopyOnWriteArrayList<>();
    private boolean closed;

    VerbsProtectionDomain(final VerbsDevice device)
    {
        this.device = device;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
            final MemorySegment pd = (MemorySegment)device.lib.allocPd.invokeExact(capture, device.context);
            if (MemorySegment.NULL.equals(pd))
            {
                throw new FabricException("ibv_alloc_pd on " + device.name() + " failed with " +
                    LibIbverbs.describeErrno(LibIbverbs.errno(capture)));
            }
            this.pd = pd;
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_alloc_pd failed", ex);
        }
    }

    @Override
    public MemoryRegion registerMemory(final MemorySegment segment, final int accessFlags)
    {
        device.ensureOpen();
        ensureOpen();
        AccessFlags.validate(accessFlags);
        if (!segment.isNative())
        {
            throw new IllegalArgumentException("only native memory can be registered, got a heap segment");
        }
        if (segment.byteSize() <= 0)
        {
            throw new IllegalArgumentException("cannot register an empty segment");
        }
        if ((accessFlags & AccessFlags.REMOTE_ATOMIC) != 0 && !device.attributes().atomicsSupported())
        {
            throw new IllegalArgumentException("device " + device.name() + " does not support atomics: " +
                AccessFlags.toString(accessFlags));
        }
        MemlockLimit.checkCanPin(segment.byteSize());
        final VerbsMemoryRegion region = new VerbsMemoryRegion(this, segment, accessFlags);
        regions.add(region);
        return region;
    }

    @Override
    public QueuePair createQueuePair(final QueuePairConfig config)
    {
        device.ensureOpen();
        ensureOpen();
        config.validate(device.attributes());
        if (!(config.sendCompletionQueue() instanceof VerbsCompletionQueue sendCq) ||
            !(config.receiveCompletionQueue() instanceof VerbsCompletionQueue receiveCq))
        {
            throw new IllegalArgumentException("completion queues must come from a verbs device");
        }
        if (sendCq.device() != device || receiveCq.device() != device)
        {
            throw new IllegalArgumentException("completion queues must come from device " + device.name());
        }
        final VerbsSharedReceiveQueue srq;
        if (null == config.sharedReceiveQueue())
        {
            srq = null;
        }
        else if (config.sharedReceiveQueue() instanceof VerbsSharedReceiveQueue verbs &&
            verbs.protectionDomain() == this)
        {
            srq = verbs;
        }
        else
        {
            throw new IllegalArgumentException("sharedReceiveQueue must come from this protection domain");
        }
        final VerbsQueuePair qp = new VerbsQueuePair(device, this, sendCq, receiveCq, config, srq);
        queuePairs.add(qp);
        device.onQueuePairCreated(qp);
        return qp;
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(final int depth)
    {
        device.ensureOpen();
        ensureOpen();
        final int max = device.attributes().maxQueuePairWorkRequests();
        if (depth < 1 || depth > max)
        {
            throw new IllegalArgumentException("shared receive queue depth must be in [1, " + max + "]: " + depth);
        }
        return device.createSharedReceiveQueue(this, depth);
    }

    @Override
    public Device device()
    {
        return device;
    }

    VerbsDevice verbsDevice()
    {
        return device;
    }

    void onRegionDeregistered(final VerbsMemoryRegion region)
    {
        regions.remove(region);
    }

    void onQueuePairClosed(final VerbsQueuePair qp)
    {
        queuePairs.remove(qp);
    }

    private void ensureOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("protection domain is closed");
        }
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        if (!regions.isEmpty() || !queuePairs.isEmpty())
        {
            throw new IllegalStateException("protection domain still has " + regions.size() + " region(s) and " +
                queuePairs.size() + " queue pair(s): close them first");
        }
        closed = true;
        final int rc = VerbsDevice.call(device.lib.deallocPd, pd);
        device.onClosed(this);
        VerbsDevice.check(rc, "ibv_dealloc_pd");
    }

    /** Device close: deregister what is left, then free the PD. */
    void closeWithRegions()
    {
        for (final VerbsMemoryRegion region : regions)
        {
            region.deregister();
        }
        close();
    }

    @Override
    public String toString()
    {
        return "VerbsProtectionDomain{" + device.name() + '}';
    }
}
