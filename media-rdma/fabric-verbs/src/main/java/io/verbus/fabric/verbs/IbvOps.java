package io.verbus.fabric.verbs;

import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.MethodHandle;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;

/**
 * The hot-path verbs of one device context: {@code ibv_post_send}, {@code ibv_post_recv},
 * {@code ibv_poll_cq}, {@code ibv_req_notify_cq} and {@code ibv_post_srq_recv} are static inline functions in
 * {@code <infiniband/verbs.h>} that jump through the provider's function table in {@code struct ibv_context.ops}.
 * There is no symbol to look up, so this reads their function pointers from the opened context and makes downcall
 * handles on those addresses.
 * <p>
 * The handles are critical ({@link Linker.Option#critical(boolean)}): no thread-state transition around the
 * call. That is right for these functions only because a provider's post and poll never block, never call
 * back into Java and return in well under a microsecond on hardware (rxe's post does a short system call).
 */
final class IbvOps
{
    private static final FunctionDescriptor POST = FunctionDescriptor.of(JAVA_INT, ADDRESS, ADDRESS, ADDRESS);
    private static final FunctionDescriptor NOTIFY = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT);
    private static final FunctionDescriptor POLL = FunctionDescriptor.of(JAVA_INT, ADDRESS, JAVA_INT, ADDRESS);

    /** int post_send(struct ibv_qp *, struct ibv_send_wr *, struct ibv_send_wr **bad_wr). */
    final MethodHandle postSend;
    /** int post_recv(struct ibv_qp *, struct ibv_recv_wr *, struct ibv_recv_wr **bad_wr). */
    final MethodHandle postRecv;
    /** int poll_cq(struct ibv_cq *, int num_entries, struct ibv_wc *). */
    final MethodHandle pollCq;
    /**
     * int req_notify_cq(struct ibv_cq *, int solicited_only): {@code ibv_req_notify_cq}, also inline. Not critical:
     * rxe's (and other kernel-assisted providers') arm is a system call. Null if the device has none.
     */
    final MethodHandle reqNotifyCq;
    /** int post_srq_recv(struct ibv_srq *, struct ibv_recv_wr *, struct ibv_recv_wr **bad_wr); null if none. */
    final MethodHandle postSrqRecv;

    /**
     * @param context an opened {@code struct ibv_context *}, reinterpreted to at least its layout size.
     */
    IbvOps(final MemorySegment context)
    {
        final Linker linker = Linker.nativeLinker();
        // critical(true): also lets a caller pass a heap segment directly (e.g. an INLINE source); the WR and
        // SGE structs themselves stay native because the provider follows pointers stored inside them.
        final Linker.Option critical = Linker.Option.critical(true);
        postSend = linker.downcallHandle(slot(context, IbvAbi.ContextOps.POST_SEND, "post_send"), POST, critical);
        postRecv = linker.downcallHandle(slot(context, IbvAbi.ContextOps.POST_RECV, "post_recv"), POST, critical);
        pollCq = linker.downcallHandle(slot(context, IbvAbi.ContextOps.POLL_CQ, "poll_cq"), POLL, critical);
        reqNotifyCq = optional(linker, context, IbvAbi.ContextOps.REQ_NOTIFY_CQ, NOTIFY);
        postSrqRecv = optional(linker, context, IbvAbi.ContextOps.POST_SRQ_RECV, POST, critical);
    }

    /**
     * @return a handle on an ops slot a device may leave empty (no SRQ, no completion events), or null: the verb
     * that needs it then says so.
     */
    private static MethodHandle optional(
        final Linker linker, final MemorySegment context, final long opsOffset, final FunctionDescriptor descriptor,
        final Linker.Option... options)
    {
        final MemorySegment function = context.get(ADDRESS, IbvAbi.Context.OPS + opsOffset);
        return MemorySegment.NULL.equals(function) ? null : linker.downcallHandle(function, descriptor, options);
    }

    private static MemorySegment slot(final MemorySegment context, final long opsOffset, final String name)
    {
        final MemorySegment function = context.get(ADDRESS, IbvAbi.Context.OPS + opsOffset);
        if (MemorySegment.NULL.equals(function))
        {
            throw new VerbsUnavailableException("the verbs provider of this device has no " + name + " entry");
        }
        return function;
    }
}
