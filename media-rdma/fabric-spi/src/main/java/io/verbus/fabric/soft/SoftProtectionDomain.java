package io.verbus.fabric.soft;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.Device;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SharedReceiveQueue;

import java.lang.foreign.MemorySegment;
import java.util.Objects;

/**
 * Protection domain of the soft providers: an id that regions and QPs carry and that every access checks.
 */
public final class SoftProtectionDomain implements ProtectionDomain
{
    private final SoftDevice device;
    private final int id;
    private volatile boolean closed;

    SoftProtectionDomain(final SoftDevice device, final int id)
    {
        this.device = device;
        this.id = id;
    }

    /**
     * @return the id regions and QPs of this PD carry.
     */
    public int id()
    {
        return id;
    }

    @Override
    public MemoryRegion registerMemory(final MemorySegment segment, final int accessFlags)
    {
        requireOpen();
        Objects.requireNonNull(segment, "segment");
        AccessFlags.validate(accessFlags);
        if (!segment.isNative())
        {
            throw new IllegalArgumentException("only native memory can be registered, got a heap segment");
        }
        if (segment.byteSize() == 0 || segment.byteSize() > device.attributes().maxMemoryRegionLength())
        {
            throw new IllegalArgumentException("region length must be in [1, " +
                device.attributes().maxMemoryRegionLength() + "]: " + segment.byteSize());
        }
        return device.registerMemory(this, segment, accessFlags);
    }

    @Override
    public QueuePair createQueuePair(final QueuePairConfig config)
    {
        requireOpen();
        config.validate(device.attributes());
        return device.createQueuePair(this, config);
    }

    @Override
    public SharedReceiveQueue createSharedReceiveQueue(final int depth)
    {
        requireOpen();
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

    private void requireOpen()
    {
        if (closed)
        {
            throw new IllegalStateException("protection domain " + id + " is closed");
        }
    }

    @Override
    public void close()
    {
        closed = true;
    }
}
