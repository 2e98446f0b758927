package io.verbus.fabric.verbs;

import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.FabricException;
import org.agrona.collections.ArrayUtil;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.ADDRESS;
import static java.lang.foreign.ValueLayout.JAVA_INT;
import static java.lang.foreign.ValueLayout.JAVA_SHORT;

/**
 * {@code struct ibv_comp_channel}: {@link #requestNotify} is {@code ibv_req_notify_cq} through the context's ops table
 * (it is static inline, as post and poll are); {@link #awaitEvent} waits in {@code poll(2)} on the channel's file
 * descriptor for the timeout, then takes the event with {@code ibv_get_cq_event}, which then reads without blocking;
 * {@link #ackEvents} is {@code ibv_ack_cq_events}. One thread waits at a time.
 */
final class VerbsCompletionChannel implements CompletionChannel
{
    private static final short POLLIN = 1;
    private static final int EINTR = 4;
    private static final VerbsCompletionQueue[] NO_QUEUES = new VerbsCompletionQueue[0];

    private final VerbsDevice device;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment channel;
    private final int fd;
    private final MemorySegment pollFd;
    private final MemorySegment eventCq;
    private final MemorySegment eventContext;
    private final MemorySegment capture;
    private volatile VerbsCompletionQueue[] queues = NO_QUEUES;
    private boolean closed;

    VerbsCompletionChannel(final VerbsDevice device)
    {
        this.device = device;
        try
        {
            capture = LibIbverbs.newErrnoCapture(arena);
            final MemorySegment created =
                (MemorySegment)device.lib.createCompChannel.invokeExact(capture, device.context);
            if (MemorySegment.NULL.equals(created))
            {
                throw new FabricException("ibv_create_comp_channel on " + device.name() + " failed with " +
                    LibIbverbs.describeErrno(LibIbverbs.errno(capture)));
            }
            channel = created.reinterpret(IbvAbi.CompChannel.LAYOUT.byteSize());
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
        catch (final Throwable ex)
        {
            arena.close();
            throw new FabricException("ibv_create_comp_channel failed", ex);
        }
        fd = channel.get(JAVA_INT, IbvAbi.CompChannel.FD);
        pollFd = arena.allocate(8, 8); // struct pollfd { int fd; short events; short revents; }
        pollFd.set(JAVA_INT, 0, fd);
        pollFd.set(JAVA_SHORT, 4, POLLIN);
        eventCq = arena.allocate(ADDRESS);
        eventContext = arena.allocate(ADDRESS);
    }

    MemorySegment nativeChannel()
    {
        return channel;
    }

    VerbsDevice device()
    {
        return device;
    }

    synchronized void attach(final VerbsCompletionQueue cq)
    {
        queues = ArrayUtil.add(queues, cq);
    }

    synchronized void detach(final VerbsCompletionQueue cq)
    {
        queues = ArrayUtil.remove(queues, cq);
    }

    private VerbsCompletionQueue owned(final CompletionQueue cq)
    {
        if (cq instanceof VerbsCompletionQueue verbs && verbs.channel() == this)
        {
            return verbs;
        }
        throw new IllegalArgumentException("completion queue was not created with this channel");
    }

    @Override
    public void requestNotify(final CompletionQueue cq, final boolean solicitedOnly)
    {
        final VerbsCompletionQueue verbs = owned(cq);
        if (null == device.ops.reqNotifyCq)
        {
            throw new FabricException("the verbs provider of " + device.name() + " has no req_notify_cq entry");
        }
        final int solicited = solicitedOnly ? 1 : 0;
        final int rc;
        try
        {
            rc = (int)device.ops.reqNotifyCq.invokeExact(verbs.nativeCq(), solicited);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_req_notify_cq failed", ex);
        }
        VerbsDevice.check(rc, "ibv_req_notify_cq");
    }

    @Override
    public synchronized CompletionQueue awaitEvent(final long timeoutNs)
    {
        if (closed)
        {
            throw new IllegalStateException("completion channel is closed");
        }
        final long deadlineNs = System.nanoTime() + Math.max(0, timeoutNs);
        while (true)
        {
            final long remainingNs = deadlineNs - System.nanoTime();
            // poll(2) does not see a Java interrupt: an interrupted thread only takes what is queued (see the SPI).
            final boolean interrupted = Thread.currentThread().isInterrupted();
            final int timeoutMs = remainingNs <= 0 || interrupted ? 0 :
                (int)Math.min(Integer.MAX_VALUE, TimeUnit.NANOSECONDS.toMillis(remainingNs + 999_999));
            pollFd.set(JAVA_SHORT, 6, (short)0);
            final int ready;
            try
            {
                ready = (int)device.lib.poll.invokeExact(capture, pollFd, 1L, timeoutMs);
            }
            catch (final Throwable ex)
            {
                throw new FabricException("poll on the completion channel failed", ex);
            }
            if (ready < 0)
            {
                final int errno = LibIbverbs.errno(capture);
                if (errno == EINTR)
                {
                    continue;
                }
                throw new FabricException("poll on the completion channel of " + device.name() + " failed with " +
                    LibIbverbs.describeErrno(errno));
            }
            if (ready == 0)
            {
                if (remainingNs <= 0 || interrupted)
                {
                    return null;
                }
                continue;
            }
            return takeEvent();
        }
    }

    private CompletionQueue takeEvent()
    {
        final int rc;
        try
        {
            rc = (int)device.lib.getCqEvent.invokeExact(capture, channel, eventCq, eventContext);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_get_cq_event failed", ex);
        }
        if (rc != 0)
        {
            throw new FabricException("ibv_get_cq_event on " + device.name() + " failed with " +
                LibIbverbs.describeErrno(LibIbverbs.errno(capture)));
        }
        final long address = eventCq.get(ADDRESS, 0).address();
        for (final VerbsCompletionQueue cq : queues)
        {
            if (cq.nativeCq().address() == address)
            {
                return cq;
            }
        }
        throw new FabricException("ibv_get_cq_event returned a CQ this channel does not know: 0x" +
            Long.toHexString(address));
    }

    @Override
    public void ackEvents(final CompletionQueue cq, final int count)
    {
        if (count < 0)
        {
            throw new IllegalArgumentException("count must be >= 0: " + count);
        }
        try
        {
            device.lib.ackCqEvents.invokeExact(owned(cq).nativeCq(), count);
        }
        catch (final RuntimeException ex)
        {
            throw ex;
        }
        catch (final Throwable ex)
        {
            throw new FabricException("ibv_ack_cq_events failed", ex);
        }
    }

    @Override
    public int fileDescriptor()
    {
        return fd;
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        if (queues.length > 0)
        {
            throw new IllegalStateException("completion channel still has " + queues.length + " completion queue(s)");
        }
        closed = true;
        final int rc = VerbsDevice.call(device.lib.destroyCompChannel, channel);
        device.onClosed(this);
        arena.close();
        VerbsDevice.check(rc, "ibv_destroy_comp_channel");
    }

    @Override
    public String toString()
    {
        return "VerbsCompletionChannel{" + device.name() + ", fd=" + fd + '}';
    }
}
