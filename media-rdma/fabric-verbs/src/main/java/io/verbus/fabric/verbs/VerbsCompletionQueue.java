package io.verbus.fabric.verbs;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;
import org.agrona.collections.ArrayUtil;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static io.verbus.fabric.verbs.IbvConstants.IBV_WC_RECV;
import static io.verbus.fabric.verbs.IbvConstants.IBV_WC_WITH_IMM;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * {@code struct ibv_cq}, polled through the context's {@code poll_cq} slot into a pre-allocated native
 * array of {@code struct ibv_wc}; each entry is copied into the caller's reusable {@link WorkCompletion}.
 * Polling allocates nothing and makes no system call on hardware.
 * <p>
 * Each completion is also reported to its QP, which reclaims send-queue slots only when a completion
 * covering them has been polled, the accounting a hardware provider does in user space.
 */
final class VerbsCompletionQueue implements CompletionQueue
{
    /** Completions taken from the device per poll call at most. */
    static final int POLL_BATCH = 32;
    private static final long WC_SIZE = IbvAbi.Wc.LAYOUT.byteSize();
    private static final VerbsQueuePair[] NO_QUEUE_PAIRS = new VerbsQueuePair[0];

    private final VerbsDevice device;
    private final VerbsCompletionChannel channel;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment cq;
    private final MemorySegment completions;
    private final MethodHandle pollCq;
    private final int depth;
    private volatile VerbsQueuePair[] queuePairs = NO_QUEUE_PAIRS;
    private boolean closed;

    VerbsCompletionQueue(final VerbsDevice device, final int depth, final VerbsCompletionChannel channel)
    {
        this.device = device;
        this.channel = channel;
        this.pollCq = device.ops.pollCq;
        try
        {
            final MemorySegment capture = LibIbverbs.newErrnoCapture(arena);
            // A local, not a conditional in the call: as an argument of invokeExact a conditional is typed Object.
            final MemorySegment channelPointer = null == channel ? MemorySegment.NULL : channel.nativeChannel();
            final MemorySegment cq = (MemorySegment)device.lib.createCq.invokeExact(
                capture, device.context, depth, MemorySegment.NULL, channelPointer, 0);
            if (MemorySegment.NULL.equals(cq))
            {
                throw new FabricException("ibv_create_cq(" + depth + ") on " + device.name() + " failed with " +
                    LibIbverbs.describeErrno(LibIbverbs.errno(capture)));
            }
            this.cq = cq.reinterpret(IbvAbi.Cq.LAYOUT.byteSize());
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
        catch (final Throwable ex)
        {
            arena.close();
            throw new FabricException("ibv_create_cq failed", ex);
        }
        this.depth = this.cq.get(JAVA_INT, IbvAbi.Cq.CQE);
        this.completions = arena.allocate(WC_SIZE * POLL_BATCH, 8);
        if (null != channel)
        {
            channel.attach(this);
        }
    }

    /**
     * @return the channel the CQ was created with, or null.
     */
    VerbsCompletionChannel channel()
    {
        return channel;
    }

    @Override
    public int poll(final WorkCompletion[] completions, final int max)
    {
        final int limit = Math.min(Math.min(max, completions.length), POLL_BATCH);
        if (limit <= 0)
        {
            return 0;
        }
        final int polled;
        try
        {
            polled = (int)pollCq.invokeExact(cq, limit, this.completions);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("poll_cq failed", ex);
        }
        if (polled < 0)
        {
            throw new FabricException("poll_cq on " + device.name() + " failed with " + polled +
                " (the CQ overran or the device failed)");
        }

        final VerbsQueuePair[] queuePairs = this.queuePairs;
        for (int i = 0; i < polled; i++)
        {
            final long base = i * WC_SIZE;
            final MemorySegment wcs = this.completions;
            final int statusCode = wcs.get(JAVA_INT, base + IbvAbi.Wc.STATUS);
            final int opcodeCode = wcs.get(JAVA_INT, base + IbvAbi.Wc.OPCODE);
            final int qpNumber = wcs.get(JAVA_INT, base + IbvAbi.Wc.QP_NUM);
            final boolean hasImmediate = (wcs.get(JAVA_INT, base + IbvAbi.Wc.WC_FLAGS) & IBV_WC_WITH_IMM) != 0;
            final WorkCompletionStatus status = WorkCompletionStatus.fromCode(statusCode);
            final long wrId = wcs.get(JAVA_LONG, base + IbvAbi.Wc.WR_ID);
            WorkCompletionOpcode opcode = null;
            for (final VerbsQueuePair qp : queuePairs)
            {
                if (qp.qpNumber() == qpNumber)
                {
                    if (statusCode != 0)
                    {
                        // Verbs leaves an error completion's opcode undefined: the QP knows the WR by its id.
                        opcode = qp.onErrorCompletion(wrId);
                    }
                    else if (opcodeCode >= IBV_WC_RECV)
                    {
                        qp.onReceiveCompletion();
                    }
                    else
                    {
                        qp.onSendCompletion();
                    }
                    break;
                }
            }
            if (null == opcode)
            {
                opcode = knownOpcode(opcodeCode);
            }
            completions[i].set(
                wrId,
                status,
                opcode,
                wcs.get(JAVA_INT, base + IbvAbi.Wc.BYTE_LEN),
                hasImmediate ? Integer.reverseBytes(wcs.get(JAVA_INT, base + IbvAbi.Wc.IMM_DATA)) : 0,
                hasImmediate,
                qpNumber,
                wcs.get(JAVA_INT, base + IbvAbi.Wc.VENDOR_ERR));

        }
        return polled;
    }

    private static WorkCompletionOpcode knownOpcode(final int code)
    {
        return switch (code)
        {
            case 0, 1, 2, 3, 4, 128, 129 -> WorkCompletionOpcode.fromCode(code);
            default -> WorkCompletionOpcode.SEND;
        };
    }

    @Override
    public int depth()
    {
        return depth;
    }

    MemorySegment nativeCq()
    {
        return cq;
    }

    VerbsDevice device()
    {
        return device;
    }

    synchronized void attach(final VerbsQueuePair qp)
    {
        queuePairs = ArrayUtil.add(queuePairs, qp);
    }

    synchronized void detach(final VerbsQueuePair qp)
    {
        queuePairs = ArrayUtil.remove(queuePairs, qp);
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        if (queuePairs.length > 0)
        {
            throw new IllegalStateException("completion queue still has " + queuePairs.length + " queue pair(s)");
        }
        closed = true;
        final int rc = VerbsDevice.call(device.lib.destroyCq, cq);
        if (null != channel)
        {
            channel.detach(this);
        }
        device.onClosed(this);
        arena.close();
        VerbsDevice.check(rc, "ibv_destroy_cq");
    }

    @Override
    public String toString()
    {
        return "VerbsCompletionQueue{" + device.name() + ", depth=" + depth + '}';
    }
}
