package io.verbus.fabric.soft;

import io.verbus.fabric.PostResult;
import io.verbus.fabric.SharedReceiveQueue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The shared receive queue of the soft providers: the posted RECVs as primitive columns, plus a small header that
 * whoever consumes receives claims them through: the posted count (release by the poster), the claimed count
 * (a compare-and-set per claim, so QPs served by different threads, or by another process for shm, each take a
 * different RECV), and the posted lengths. tcp keeps the header in native memory; shm in a file its peers map, since
 * there the sender's process claims the receive.
 * <p>
 * Claims go in posting order; a RECV's slot is freed when the QP that claimed it has consumed it (copied the payload
 * and produced its completion), which may be out of order across QPs: a post finding its slot still in use is
 * refused with RECEIVE_QUEUE_FULL for the moment.
 */
public class SoftSharedReceiveQueue implements SharedReceiveQueue
{
    /** Header: the depth (int), the PD id (int). */
    public static final int DEPTH_OFFSET = 0;
    /** Header: the PD id of the SRQ. */
    public static final int PD_OFFSET = 4;
    /** Header: RECVs posted (long, release). */
    public static final int POSTED_OFFSET = 64;
    /** Header: RECVs claimed by consumers (long, compare-and-set). */
    public static final int CLAIMED_OFFSET = 128;
    /** Header: the posted lengths, one int per slot. */
    public static final int LENGTHS_OFFSET = 192;

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
        return LENGTHS_OFFSET + 4L * depth;
    }

    /**
     * Claim the next posted RECV of the pool whose header is {@code header}; any thread or process.
     *
     * @return its index, or -1 if none is posted and unclaimed (RNR).
     */
    public static long claim(final MemorySegment header)
    {
        while (true)
        {
            final long claimed = (long)LONG.getVolatile(header, (long)CLAIMED_OFFSET);
            final long posted = (long)LONG.getAcquire(header, (long)POSTED_OFFSET);
            if (claimed >= posted)
            {
                return -1;
            }
            if (LONG.compareAndSet(header, (long)CLAIMED_OFFSET, claimed, claimed + 1))
            {
                return claimed;
            }
        }
    }

    /**
     * @return the posted length of RECV {@code index} of the pool whose header is {@code header}.
     */
    public static int postedLength(final MemorySegment header, final int depth, final long index)
    {
        return header.get(ValueLayout.JAVA_INT, LENGTHS_OFFSET + 4L * (int)(index % depth));
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
        final int slot = (int)(tail % depth);
        if ((int)BUSY.getAcquire(busy, slot) != 0)
        {
            return PostResult.RECEIVE_QUEUE_FULL;
        }
        wrIds[slot] = wrId;
        addresses[slot] = address;
        lengths[slot] = length;
        lkeys[slot] = lkey;
        busy[slot] = 1;
        header.set(ValueLayout.JAVA_INT, LENGTHS_OFFSET + 4L * slot, length);
        tail++;
        LONG.setRelease(header, (long)POSTED_OFFSET, tail);
        onPosted();
        return PostResult.OK;
    }

    /**
     * Hook: a RECV was posted.
     */
    protected void onPosted()
    {
    }

    /**
     * @return the next posted and unclaimed RECV's index, claimed now, or -1 (RNR).
     */
    public long claim()
    {
        return claim(header);
    }

    /**
     * @return the wrId of RECV {@code index}.
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
     * Free the slot of RECV {@code index}: its consumer copied the payload and reported it.
     */
    public void release(final long index)
    {
        BUSY.setRelease(busy, (int)(index % depth), 0);
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
