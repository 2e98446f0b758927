package io.verbus.fabric.verbs;

import io.verbus.fabric.FabricException;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.SharedReceiveQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct ibv_srq}: created with {@code ibv_create_srq} (one SGE per receive), posted to through the context's
 * {@code post_srq_recv} slot (static inline {@code ibv_post_srq_recv}) from one pre-allocated native WR, so posting
 * allocates nothing. The depth is what the device granted (rxe rounds up); a full SRQ refuses with ENOMEM, reported
 * as RECEIVE_QUEUE_FULL.
 */
final class VerbsSharedReceiveQueue implements SharedReceiveQueue
{
    private static final int ENOMEM = 12;
    private static final long SGE_OFFSET = IbvAbi.RecvWr.LAYOUT.byteSize();

    private final VerbsDevice device;
    private final VerbsProtectionDomain pd;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment srq;
    private final MethodHandle postSrqRecv;
    private final MemorySegment recvWr;
    private final MemorySegment badRecvWr;
    private final int depth;
    private boolean closed;

    VerbsSharedReceiveQueue(final VerbsDevice device, final VerbsProtectionDomain pd, final int requestedDepth)
    {
        this.device = device;
        this.pd = pd;
        this.postSrqRecv = device.ops.postSrqRecv;
        if (null == postSrqRecv)
        {
            arena.close();
            throw new FabricException("the verbs provider of " + device.name() + " has no post_srq_recv entry");
        }
        final MemorySegment init = arena.allocate(IbvAbi.SrqInitAttr.LAYOUT);
        init.set(JAVA_INT, IbvAbi.SrqInitAttr.MAX_WR, requestedDepth);
        init.set(JAVA_INT, IbvAbi.SrqInitAttr.MAX_SGE, 1);
        try
        {
            final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
            final MemorySegment created = (MemorySegment)device.lib.createSrq.invokeExact(capture, pd.pd, init);
            if (MemorySegment.NULL.equals(created))
            {
                throw new FabricException("ibv_create_srq(" + requestedDepth + ") on " + device.name() +
                    " failed with " + LibIbverbs.describeErrno(LibIbverbs.errno(capture)));
            }
            srq = created;
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
        catch (final Throwable ex)
        {
            arena.close();
            throw new FabricException("ibv_create_srq failed", ex);
        }
        depth = Math.max(requestedDepth, init.get(JAVA_INT, IbvAbi.SrqInitAttr.MAX_WR));
        recvWr = arena.allocate(SGE_OFFSET + IbvAbi.Sge.LAYOUT.byteSize(), 8);
        recvWr.set(JAVA_LONG, IbvAbi.RecvWr.SG_LIST, recvWr.address() + SGE_OFFSET);
        recvWr.set(JAVA_INT, IbvAbi.RecvWr.NUM_SGE, 1);
        badRecvWr = arena.allocate(ADDRESS);
    }

    MemorySegment nativeSrq()
    {
        return srq;
    }

    VerbsProtectionDomain protectionDomain()
    {
        return pd;
    }

    @Override
    public int postReceive(final long wrId, final long address, final int length, final int lkey)
    {
        if (closed)
        {
            return PostResult.INVALID_STATE;
        }
        if (length < 0)
        {
            return PostResult.INVALID_REQUEST;
        }
        final MemorySegment wr = recvWr;
        wr.set(JAVA_LONG, IbvAbi.RecvWr.WR_ID, wrId);
        wr.set(JAVA_LONG, SGE_OFFSET + IbvAbi.Sge.ADDR, address);
        wr.set(JAVA_INT, SGE_OFFSET + IbvAbi.Sge.LENGTH, length);
        wr.set(JAVA_INT, SGE_OFFSET + IbvAbi.Sge.LKEY, lkey);
        final int rc;
        try
        {
            rc = (int)postSrqRecv.invokeExact(srq, wr, badRecvWr);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("post_srq_recv failed", ex);
        }
        if (rc != 0)
        {
            return rc == ENOMEM ? PostResult.RECEIVE_QUEUE_FULL : PostResult.INVALID_REQUEST;
        }
        return PostResult.OK;
    }

    @Override
    public int depth()
    {
        return depth;
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        final int rc = VerbsDevice.call(device.lib.destroySrq, srq);
        device.onClosed(this);
        arena.close();
        VerbsDevice.check(rc, "ibv_destroy_srq");
    }

    @Override
    public String toString()
    {
        return "VerbsSharedReceiveQueue{" + device.name() + ", depth=" + depth + '}';
    }
}
