package io.verbus.fabric.soft;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.MemoryRegion;

import java.lang.foreign.MemorySegment;

/**
 * A memory region of the soft providers: the registered segment, its keys, rights and protection domain.
 * Registration state is volatile so that other threads (the tcp NIC, shm peers through the published
 * table) stop honouring the keys as soon as it is deregistered.
 */
public class SoftMemoryRegion implements MemoryRegion
{
    private final SoftRegionTable table;
    private final MemorySegment segment;
    private final long address;
    private final long length;
    private final int key;
    private final int accessFlags;
    private final int protectionDomainId;
    private volatile boolean registered = true;

    /**
     * @param table              the device's key table, to release the key on deregistration.
     * @param segment            registered memory.
     * @param key                lkey and rkey (one value, as most verbs devices do).
     * @param accessFlags        rights.
     * @param protectionDomainId owning PD.
     */
    public SoftMemoryRegion(
        final SoftRegionTable table,
        final MemorySegment segment,
        final int key,
        final int accessFlags,
        final int protectionDomainId)
    {
        this.table = table;
        this.segment = segment;
        this.address = segment.address();
        this.length = segment.byteSize();
        this.key = key;
        this.accessFlags = accessFlags;
        this.protectionDomainId = protectionDomainId;
    }

    /**
     * Check that a local WR may use {@code [address, address + length)} with {@code requiredAccess}.
     *
     * @return true if allowed.
     */
    public final boolean permits(
        final int protectionDomainId, final long address, final long length, final int requiredAccess)
    {
        return registered &&
            this.protectionDomainId == protectionDomainId &&
            (accessFlags & requiredAccess) == requiredAccess &&
            address >= this.address &&
            length >= 0 &&
            address - this.address <= this.length - length;
    }

    /**
     * @param absoluteAddress an address inside the region.
     * @return its offset in {@link #segment()}.
     */
    public final long offsetOf(final long absoluteAddress)
    {
        return absoluteAddress - address;
    }

    /**
     * @return the PD id.
     */
    public final int protectionDomainId()
    {
        return protectionDomainId;
    }

    @Override
    public final MemorySegment segment()
    {
        return segment;
    }

    @Override
    public final long address()
    {
        return address;
    }

    @Override
    public final long length()
    {
        return length;
    }

    @Override
    public final int lkey()
    {
        return key;
    }

    @Override
    public final int rkey()
    {
        return key;
    }

    @Override
    public final int accessFlags()
    {
        return accessFlags;
    }

    @Override
    public final boolean isRegistered()
    {
        return registered;
    }

    @Override
    public void deregister()
    {
        if (registered)
        {
            registered = false;
            table.release(this);
        }
    }

    @Override
    public String toString()
    {
        return "MemoryRegion{address=0x" + Long.toHexString(address) + ", length=" + length + ", key=0x" +
            Integer.toHexString(key) + ", access=" + AccessFlags.toString(accessFlags) + ", registered=" +
            registered + '}';
    }
}
