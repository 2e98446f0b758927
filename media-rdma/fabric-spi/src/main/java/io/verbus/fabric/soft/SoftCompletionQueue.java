package io.verbus.fabric.soft;

import io.verbus.common.VarHandles;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionOpcode;
import io.verbus.fabric.WorkCompletionStatus;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The completion queue of the soft providers (shm, tcp): a bounded many-producer, one-consumer ring of
 * primitive columns, so producing and polling allocate nothing.
 * <p>
 * Producers (the tcp NIC thread, the shm progress of send and receive queues) claim a slot with a CAS on
 * the tail, fill it, and publish it with a release store of its sequence; the polling thread reads the
 * sequence with acquire. A full queue refuses the completion and the producer retries later, so soft
 * providers never overrun a CQ. Polling first lets the attached {@link Progress} sources run (shm makes
 * its progress there) and, for each send or receive completion handed out, tells the owning QP that the
 * queue slots it covers are free again: as on hardware, slots return when the completion is polled.
 */
public final class SoftCompletionQueue implements CompletionQueue
{
    /**
     * Work a soft provider does when the CQ is polled.
     */
    public interface Progress
    {
        /**
         * @return units of work done.
         */
        int progress();
    }

    /**
     * Told when a completion it produced has been polled.
     */
    public interface SlotReclaimer
    {
        /**
         * @param receiveQueue true for a receive-queue completion.
         * @param index        position in that queue of the WR the completion reports.
         */
        void onCompletionPolled(boolean receiveQueue, long index);
    }

    private static final VarHandle SEQUENCES = MethodHandles.arrayElementVarHandle(long[].class);
    private static final VarHandle ARMED = VarHandles.field(MethodHandles.lookup(), "armed", int.class);
    private static final int DISARMED = 0;
    private static final int ARMED_NEXT = 1;
    private static final int ARMED_SOLICITED = 2;

    private static final WorkCompletionStatus[] STATUSES = WorkCompletionStatus.values();
    private static final WorkCompletionOpcode[] OPCODES = WorkCompletionOpcode.values();
    private static final Progress[] NO_PROGRESS = new Progress[0];

    private final int depth;
    private final int mask;
    private final long[] sequences;
    private final long[] wrIds;
    private final byte[] statuses;
    private final byte[] opcodes;
    private final int[] byteLengths;
    private final int[] immediates;
    private final boolean[] hasImmediates;
    private final int[] qpNumbers;
    private final int[] vendorErrors;
    private final SlotReclaimer[] reclaimers;
    private final boolean[] receiveQueues;
    private final long[] queueIndices;
    private final AtomicLong tail = new AtomicLong();
    private final AtomicLong headForProducers = new AtomicLong();
    private final Runnable onClose;
    private final SoftCompletionChannel channel;
    private final AtomicLong eventsQueued = new AtomicLong();
    private long eventsTaken;
    private long eventsAcknowledged;
    @SuppressWarnings("unused") private volatile int armed;
    private long head;
    private volatile Progress[] progressSources = NO_PROGRESS;
    private volatile boolean closed;

    /**
     * @param depth   entries the queue holds.
     * @param onClose run when closed (e.g. remove from the device), may be null.
     */
    public SoftCompletionQueue(final int depth, final Runnable onClose)
    {
        this(depth, onClose, null);
    }

    /**
     * @param depth   entries the queue holds.
     * @param onClose run when closed (e.g. remove from the device), may be null.
     * @param channel where the events go once armed, or null.
     */
    public SoftCompletionQueue(final int depth, final Runnable onClose, final SoftCompletionChannel channel)
    {
        if (depth < 1)
        {
            throw new IllegalArgumentException("completion queue depth must be >= 1: " + depth);
        }
        this.depth = depth;
        final int capacity = Integer.highestOneBit(depth - 1 == 0 ? 1 : depth - 1) << 1;
        this.mask = capacity - 1;
        sequences = new long[capacity];
        for (int i = 0; i < capacity; i++)
        {
            sequences[i] = i;
        }
        wrIds = new long[capacity];
        statuses = new byte[capacity];
        opcodes = new byte[capacity];
        byteLengths = new int[capacity];
        immediates = new int[capacity];
        hasImmediates = new boolean[capacity];
        qpNumbers = new int[capacity];
        vendorErrors = new int[capacity];
        reclaimers = new SlotReclaimer[capacity];
        receiveQueues = new boolean[capacity];
        queueIndices = new long[capacity];
        this.onClose = onClose;
        this.channel = channel;
        if (null != channel)
        {
            channel.attach(this);
        }
    }

    /**
     * Append a completion; any thread.
     *
     * @return false if the queue is full (the caller retries later).
     */
    public boolean offer(
        final long wrId,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate,
        final int qpNumber,
        final SlotReclaimer reclaimer,
        final boolean receiveQueue,
        final long queueIndex)
    {
        return offer(wrId, status, opcode, byteLength, immediate, hasImmediate, qpNumber, reclaimer, receiveQueue,
            queueIndex, false);
    }

    /**
     * Append a completion; any thread.
     *
     * @param solicited true for the receive completion of a WR the peer posted with SOLICITED.
     * @return false if the queue is full (the caller retries later).
     */
    public boolean offer(
        final long wrId,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediate,
        final boolean hasImmediate,
        final int qpNumber,
        final SlotReclaimer reclaimer,
        final boolean receiveQueue,
        final long queueIndex,
        final boolean solicited)
    {
        long claimed;
        do
        {
            claimed = tail.get();
            if (claimed - headForProducers.get() >= depth)
            {
                return false;
            }
        }
        while (!tail.compareAndSet(claimed, claimed + 1));

        final int i = (int)claimed & mask;
        wrIds[i] = wrId;
        statuses[i] = (byte)status.ordinal();
        opcodes[i] = (byte)opcode.ordinal();
        byteLengths[i] = byteLength;
        immediates[i] = immediate;
        hasImmediates[i] = hasImmediate;
        qpNumbers[i] = qpNumber;
        vendorErrors[i] = 0;
        reclaimers[i] = reclaimer;
        receiveQueues[i] = receiveQueue;
        queueIndices[i] = queueIndex;
        SEQUENCES.setRelease(sequences, i, claimed + 1);
        if (null != channel)
        {
            fireIfArmed(solicited || status != WorkCompletionStatus.SUCCESS);
        }
        return true;
    }

    /**
     * After publishing a completion: if armed (for this kind of completion), disarm and queue one event. The full
     * fence orders the publication before the read of the arm, as {@link #arm} orders the arm before the caller's
     * poll, so a completion racing an arm is either polled or fires.
     */
    private void fireIfArmed(final boolean firesSolicited)
    {
        VarHandle.fullFence();
        final int mode = armed;
        if (mode == DISARMED || (mode == ARMED_SOLICITED && !firesSolicited))
        {
            return;
        }
        if (ARMED.compareAndSet(this, mode, DISARMED))
        {
            eventsQueued.incrementAndGet();
            channel.signal();
        }
    }

    void arm(final boolean solicitedOnly)
    {
        armed = solicitedOnly ? ARMED_SOLICITED : ARMED_NEXT;
        VarHandle.fullFence();
    }

    boolean isArmed()
    {
        return armed != DISARMED;
    }

    /**
     * Take one queued event; the channel's waiter only.
     */
    boolean takeEvent()
    {
        if (eventsQueued.get() > eventsTaken)
        {
            eventsTaken++;
            return true;
        }
        return false;
    }

    synchronized void acknowledgeEvents(final int count)
    {
        if (count < 0 || eventsAcknowledged + count > eventsTaken)
        {
            throw new IllegalArgumentException("cannot acknowledge " + count + " events: " +
                (eventsTaken - eventsAcknowledged) + " taken and not acknowledged");
        }
        eventsAcknowledged += count;
    }

    /**
     * @return the channel the CQ was created with, or null.
     */
    SoftCompletionChannel channel()
    {
        return channel;
    }

    /**
     * Run the progress sources (the soft NIC work a poll does first) without taking completions.
     *
     * @return units of work done.
     */
    int progress()
    {
        int work = 0;
        for (final Progress source : progressSources)
        {
            work += source.progress();
        }
        return work;
    }

    /**
     * @return completions appended and not yet polled (approximate while producers run).
     */
    public int size()
    {
        return (int)(tail.get() - headForProducers.get());
    }

    @Override
    public int poll(final WorkCompletion[] completions, final int max)
    {
        final Progress[] sources = progressSources;
        for (final Progress source : sources)
        {
            source.progress();
        }

        final int limit = Math.min(max, completions.length);
        int count = 0;
        long position = head;
        while (count < limit)
        {
            final int i = (int)position & mask;
            if ((long)SEQUENCES.getAcquire(sequences, i) != position + 1)
            {
                break;
            }
            completions[count++].set(
                wrIds[i],
                STATUSES[statuses[i]],
                OPCODES[opcodes[i]],
                byteLengths[i],
                immediates[i],
                hasImmediates[i],
                qpNumbers[i],
                vendorErrors[i]);
            final SlotReclaimer reclaimer = reclaimers[i];
            reclaimers[i] = null;
            SEQUENCES.setRelease(sequences, i, position + mask + 1);
            position++;
            if (null != reclaimer)
            {
                reclaimer.onCompletionPolled(receiveQueues[i], queueIndices[i]);
            }
        }
        if (count > 0)
        {
            head = position;
            headForProducers.lazySet(position);
        }
        return count;
    }

    @Override
    public int depth()
    {
        return depth;
    }

    /**
     * Run {@code source} on every poll; control path.
     *
     * @param source progress to add.
     */
    public synchronized void addProgress(final Progress source)
    {
        final Progress[] old = progressSources;
        final Progress[] updated = java.util.Arrays.copyOf(old, old.length + 1);
        updated[old.length] = source;
        progressSources = updated;
    }

    /**
     * @param source progress to stop running.
     */
    public synchronized void removeProgress(final Progress source)
    {
        final Progress[] old = progressSources;
        int found = -1;
        for (int i = 0; i < old.length; i++)
        {
            if (old[i] == source)
            {
                found = i;
                break;
            }
        }
        if (found >= 0)
        {
            final Progress[] updated = new Progress[old.length - 1];
            System.arraycopy(old, 0, updated, 0, found);
            System.arraycopy(old, found + 1, updated, found, old.length - found - 1);
            progressSources = updated;
        }
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
            if (null != channel)
            {
                channel.detach(this);
            }
            if (null != onClose)
            {
                onClose.run();
            }
        }
    }
}
