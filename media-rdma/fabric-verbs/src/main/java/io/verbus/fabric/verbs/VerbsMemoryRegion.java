package io.verbus.fabric.verbs;

import io.verbus.fabric.FabricException;
import io.verbus.fabric.MemoryRegion;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;

import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * {@code struct ibv_mr}: memory pinned and registered with the device; the keys are read once.
 */
final class VerbsMemoryRegion implements MemoryRegion
{
    private static final int ENOMEM = 12;

    private final VerbsProtectionDomain pd;
    private final MemorySegment segment;
    private final int accessFlags;
    private final MemorySegment mr;
    private final int lkey;
    private final int rkey;
    private boolean registered;

    VerbsMemoryRegion(final VerbsProtectionDomain pd, final MemorySegment segment, final int accessFlags)
    {
        this.pd = pd;
        this.segment = segment;
        this.accessFlags = accessFlags;
        final LibIbverbs lib = pd.verbsDevice().lib;
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
            // The SPI's access flag bits are the verbs IBV_ACCESS_* values (checked by VerbsAbiTest's constants).
            final MemorySegment mr = (MemorySegment)lib.regMr.invokeExact(
                capture, pd.pd, segment, segment.byteSize(), accessFlags);
            if (MemorySegment.NULL.equals(mr))
            {
                final int errno = LibIbverbs.errno(capture);
                throw new FabricException("ibv_reg_mr of " + segment.byteSize() + " bytes failed with " +
                    LibIbverbs.describeErrno(errno) + (errno == ENOMEM ?
                    ": the pinned-memory limit (RLIMIT_MEMLOCK) or the device's MR resources are exhausted; " +
                    MemlockLimit.FIX_HINT : ""));
            }
            this.mr = mr.reinterpret(IbvAbi.Mr.LAYOUT.byteSize());
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_reg_mr failed", ex);
        }
        lkey = this.mr.get(JAVA_INT, IbvAbi.Mr.LKEY);
        rkey = this.mr.get(JAVA_INT, IbvAbi.Mr.RKEY);
        registered = true;
    }

    @Override
    public MemorySegment segment()
    {
        return segment;
    }

    @Override
    public long address()
    {
        return segment.address();
    }

    @Override
    public long length()
    {
        return segment.byteSize();
    }

    @Override
    public int lkey()
    {
        return lkey;
    }

    @Override
    public int rkey()
    {
        return rkey;
    }

    @Override
    public int accessFlags()
    {
        return accessFlags;
    }

    @Override
    public synchronized boolean isRegistered()
    {
        return registered;
    }

    @Override
    public synchronized void deregister()
    {
        if (!registered)
        {
            return;
        }
        registered = false;
        final int rc = VerbsDevice.call(pd.verbsDevice().lib.deregMr, mr);
        pd.onRegionDeregistered(this);
        VerbsDevice.check(rc, "ibv_dereg_mr");
    }

    @Override
    public String toString()
    {
        return "VerbsMemoryRegion{address=0x" + Long.toHexString(address()) + ", length=" + length() +
            ", lkey=" + lkey + ", rkey=" + rkey + '}';
    }
}
