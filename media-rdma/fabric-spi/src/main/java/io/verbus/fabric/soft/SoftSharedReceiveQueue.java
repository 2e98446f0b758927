package io.verbus.fabric.soft;

import io.verbus.fabric.PostResult;
import io.verbus.fabric.SharedReceiveQueue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The shared receive queue of the soft providers. Each posted RECV takes a free <em>descriptor</em> (wrId, buffer,
 * length, lkey as primitive columns) and is appended, by descriptor number, to a ring in a small header that whoever
 * consumes receives claims them through: the posted count (release by the poster), the claimed count (a
 * compare-and-set per claim, so QPs served by different threads, or by another process for shm, each take a different
 * RECV), the ring and the posted lengths by descriptor. tcp keeps the header in native memory; shm in a file its peers
 * map, since there the sender's process claims the receive.
 * <p>
 * Claims go in posting order. A descriptor is free again once the completion of the QP that consumed it has been
 * polled (before the poll returns), in any order across QPs, so an application that reposts a buffer on its
 * completion always finds a free descriptor, as with a hardware SRQ.
 */
public class SoftSharedReceiveQueue implements SharedReceiveQueue, SoftCompletionQueue.SlotReclaimer
{
    /** Header: the depth (int), the PD id (int). */
    public static final int DEPTH_OFFSET = 0;
    /** Header: the PD id of the SRQ. */
    public static final int PD_OFFSET = 4;
    /** Header: RECVs posted (long, release). */
    public static final int POSTED_OFFSET = 64;
    /** Header: RECVs claimed by consumers (long, compare-and-set). */
    public static final int CLAIMED_OFFSET = 128;
    /** Header: the ring of posted descriptors, one int per position (claim index % depth), then the lengths. */
    public static final int RING_OFFSET = 192;

    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final VarHandle BUSY = MethodHandles.arrayElementVarHandle(int[].class);

    private final SoftProtectionDomain protectionDomain;
    private final MemorySegment header;
    private final int depth;
    private final long[] wrIds;
    private final long[] addresses;
    private final int[] lengths;
    private final int[] lkeys;
    private final int[] busy;
    private final Runnable onClose;
    private long tail;
    private int nextFree;
    private volatile boolean closed;

    /**
     * @param protectionDomain the PD whose regions the RECVs name.
     * @param depth            RECVs the pool holds.
     * @param header           at least {@link #headerLength(int)} zeroed bytes, shared with whoever claims.
     * @param onClose          run once when closed, may be null.
     */
    public SoftSharedReceiveQueue(
        final SoftProtectionDomain protectionDomain, final int depth, final MemorySegment header,
        final Runnable onClose)
    {
        this.protectionDomain = protectionDomain;
        this.depth = depth;
        this.header = header;
        this.onClose = onClose;
        wrIds = new long[depth];
        addresses = new long[depth];
        lengths = new int[depth];
        lkeys = new int[depth];
        busy = new int[depth];
        header.set(ValueLayout.JAVA_INT, PD_OFFSET, protectionDomain.id());
        header.set(ValueLayout.JAVA_INT, DEPTH_OFFSET, depth);
        VarHandle.releaseFence();
    }

    /**
     * @param depth RECVs the pool holds.
     * @return bytes of header it needs.
     */
    public static long headerLength(final int depth)
    {
        return RING_OFFSET + 8L * depth;
    }

    /** Compare-and-set tries per claim: contention between honest initiators settles in a few. */
    static final int MAX_CLAIM_ATTEMPTS = 1024;

    private static long lengthOffset(final int depth, final int descriptor)
    {
        return RING_OFFSET + 4L * depth + 4L * descriptor;
    }

    /**
     * Claim the next posted RECV of the pool whose header is {@code header}; any thread or process. The descriptor is
     * read before the compare-and-set: while the claimed count is still at that position the poster cannot reuse the
     * ring entry (it posts at most depth ahead of the claims), so a successful CAS proves the entry was the one read.
     * The header is the pool owner's to write, so the depth is the one validated when it was opened, a descriptor
     * outside it is refused, and the compare-and-set is tried a bounded number of times: a peer that keeps rewriting
     * the claimed count gets an RNR answer, not a posting thread spinning forever.
     *
     * @param depth the pool's depth as validated against its file.
     * @return the claimed RECV's descriptor, or -1 if none is posted and unclaimed (RNR), or none could be claimed
     * within {@link #MAX_CLAIM_ATTEMPTS} tries.
     * @throws IllegalStateException if the ring names a descriptor outside the pool (a broken owner).
     */
    public static long claim(final MemorySegment header, final int depth)
    {
        for (int attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++)
        {
            final long claimed = (long)LONG.getVolatile(header, (long)CLAIMED_OFFSET);
            final long posted = (long)LONG.getAcquire(header, (long)POSTED_OFFSET);
            if (claimed >= posted || claimed < 0)
            {
                return -1;
            }
            final int descriptor = header.get(ValueLayout.JAVA_INT, RING_OFFSET + 4L * (int)(claimed % depth));
            if (descriptor < 0 || descriptor >= depth)
            {
                throw new IllegalStateException("shared receive queue names descriptor " + descriptor +
                    " of a pool of " + depth);
            }
            if (LONG.compareAndSet(header, (long)CLAIMED_OFFSET, claimed, claimed + 1))
            {
                return descriptor;
            }
        }
        return -1;
    }

    /**
     * @return the posted length of the claimed RECV {@code descriptor} of the pool whose header is {@code header}.
     */
    public static int postedLength(final MemorySegment header, final int depth, final long descriptor)
    {
        return header.get(ValueLayout.JAVA_INT, lengthOffset(depth, (int)descriptor));
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
        final int slot = freeDescriptor();
        if (slot < 0)
        {
            return PostResult.RECEIVE_QUEUE_FULL;
        }
        wrIds[slot] = wrId;
        addresses[slot] = address;
        lengths[slot] = length;
        lkeys[slot] = lkey;
        busy[slot] = 1;
        header.set(ValueLayout.JAVA_INT, lengthOffset(depth, slot), length);
        header.set(ValueLayout.JAVA_INT, RING_OFFSET + 4L * (int)(tail % depth), slot);
        tail++;
        LONG.setRelease(header, (long)POSTED_OFFSET, tail);
        onPosted();
        return PostResult.OK;
    }

    private int freeDescriptor()
    {
        for (int i = 0; i < depth; i++)
        {
            final int candidate = nextFree + i < depth ? nextFree + i : nextFree + i - depth;
            if ((int)BUSY.getAcquire(busy, candidate) == 0)
            {
                nextFree = candidate + 1 == depth ? 0 : candidate + 1;
                return candidate;
            }
        }
        return -1;
    }

    /**
     * Hook: a RECV was posted.
     */
    protected void onPosted()
    {
    }

    /**
     * @return the next posted and unclaimed RECV's descriptor, claimed now, or -1 (RNR).
     */
    public long claim()
    {
        return claim(header, depth);
    }

    /**
     * @return the wrId of the RECV in descriptor {@code index}.
     */
    public long wrId(final long index)
    {
        return wrIds[(int)(index % depth)];
    }

    /**
     * @return the buffer address of RECV {@code index}.
     */
    public long address(final long index)
    {
        return addresses[(int)(index % depth)];
    }

    /**
     * @return the buffer length of RECV {@code index}.
     */
    public int length(final long index)
    {
        return lengths[(int)(index % depth)];
    }

    /**
     * @return the lkey of RECV {@code index}.
     */
    public int lkey(final long index)
    {
        return lkeys[(int)(index % depth)];
    }

    /**
     * Free descriptor {@code index}: its completion has been polled.
     */
    public void release(final long index)
    {
        BUSY.setRelease(busy, (int)(index % depth), 0);
    }

    @Override
    public void onCompletionPolled(final boolean receiveQueue, final long index)
    {
        release(index);
    }

    /**
     * @return the PD the SRQ belongs to.
     */
    public SoftProtectionDomain protectionDomain()
    {
        return protectionDomain;
    }

    /**
     * @return the claim header.
     */
    public MemorySegment header()
    {
        return header;
    }

    @Override
    public int depth()
    {
        return depth;
    }

    /**
     * @return true once closed.
     */
    public boolean isClosed()
    {
        return closed;
    }

    @Override
    public void close()
    {
        if (!closed)
        {
            closed = true;
            if (null != onClose)
            {
                onClose.run();
            }
        }
    }
}
