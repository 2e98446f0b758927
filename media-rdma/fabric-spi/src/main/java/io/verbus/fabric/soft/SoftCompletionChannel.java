package io.verbus.fabric.soft;

import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;

import java.util.Arrays;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The completion channel of the soft providers. An armed {@link SoftCompletionQueue} that gets a completion
 * disarms itself, counts one event and unparks the waiter. The waiter publishes itself before it looks for events
 * and the producer counts the event before it looks for a waiter (both volatile), so one of the two always sees the
 * other: a completion between the arm and the wait is never lost.
 * <p>
 * While it waits, the waiter makes the progress of its armed CQs' QPs every
 * {@link CompletionChannel#SOFT_PROGRESS_INTERVAL_NS} (a soft NIC's receive side runs when its CQ is polled: shm takes
 * the deposits a peer process wrote, tcp reads the socket), so it needs no other thread. One waiter at a time.
 */
public final class SoftCompletionChannel implements CompletionChannel
{
    private static final SoftCompletionQueue[] NONE = new SoftCompletionQueue[0];

    private final Runnable onClose;
    private volatile SoftCompletionQueue[] queues = NONE;
    private volatile Thread waiter;
    private int nextScan;
    private volatile boolean closed;

    /**
     * @param onClose run once when closed, may be null.
     */
    public SoftCompletionChannel(final Runnable onClose)
    {
        this.onClose = onClose;
    }

    synchronized void attach(final SoftCompletionQueue cq)
    {
        final SoftCompletionQueue[] old = queues;
        final SoftCompletionQueue[] updated = Arrays.copyOf(old, old.length + 1);
        updated[old.length] = cq;
        queues = updated;
    }

    synchronized void detach(final SoftCompletionQueue cq)
    {
        queues = Arrays.stream(queues).filter(q -> q != cq).toArray(SoftCompletionQueue[]::new);
    }

    /**
     * An armed CQ fired: it has counted its event; wake the waiter.
     */
    void signal()
    {
        final Thread thread = waiter;
        if (null != thread)
        {
            LockSupport.unpark(thread);
        }
    }

    private SoftCompletionQueue owned(final CompletionQueue cq)
    {
        if (cq instanceof SoftCompletionQueue soft && soft.channel() == this)
        {
            return soft;
        }
        throw new IllegalArgumentException("completion queue was not created with this channel");
    }

    @Override
    public void requestNotify(final CompletionQueue cq, final boolean solicitedOnly)
    {
        owned(cq).arm(solicitedOnly);
    }

    @Override
    public CompletionQueue awaitEvent(final long timeoutNs)
    {
        if (closed)
        {
            throw new IllegalStateException("completion channel is closed");
        }
        final long deadlineNs = System.nanoTime() + Math.max(0, timeoutNs);
        waiter = Thread.currentThread();
        try
        {
            while (true)
            {
                SoftCompletionQueue cq = takeEvent();
                if (null != cq)
                {
                    return cq;
                }
                progressArmed();
                cq = takeEvent();
                if (null != cq)
                {
                    return cq;
                }
                final long remainingNs = deadlineNs - System.nanoTime();
                if (remainingNs <= 0 || Thread.currentThread().isInterrupted())
                {
                    return null; // interrupted: parkNanos would return at once, and this loop spin to the deadline
                }
                LockSupport.parkNanos(this, Math.min(remainingNs, SOFT_PROGRESS_INTERVAL_NS));
            }
        }
        finally
        {
            waiter = null;
        }
    }

    private SoftCompletionQueue takeEvent()
    {
        final SoftCompletionQueue[] all = queues;
        for (int i = 0; i < all.length; i++)
        {
            final SoftCompletionQueue cq = all[(nextScan + i) % all.length];
            if (cq.takeEvent())
            {
                nextScan = (nextScan + i + 1) % all.length;
                return cq;
            }
        }
        return null;
    }

    private void progressArmed()
    {
        for (final SoftCompletionQueue cq : queues)
        {
            if (cq.isArmed())
            {
                cq.progress();
            }
        }
    }

    @Override
    public void ackEvents(final CompletionQueue cq, final int count)
    {
        owned(cq).acknowledgeEvents(count);
    }

    @Override
    public int fileDescriptor()
    {
        return -1;
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

    @Override
    public String toString()
    {
        return "SoftCompletionChannel{queues=" + queues.length + ", waiting=" +
            (null != waiter) + ", progressIntervalUs=" + TimeUnit.NANOSECONDS.toMicros(SOFT_PROGRESS_INTERVAL_NS) + '}';
    }
}
