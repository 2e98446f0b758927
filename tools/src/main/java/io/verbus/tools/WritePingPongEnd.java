package io.verbus.tools;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkRequestBatch;

import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * One end of a two-process RDMA WRITE ping-pong: one RC QP, its CQ and one registered page holding this end's
 * inbox (written by the peer) and its send sources. Allocated once; {@link #send(long, PollMode)} and
 * {@link #await(long, PollMode)} allocate nothing.
 * <pre>
 *   0    inbox: the message (its last 8 bytes carry the sequence)
 *   1024 inbox: the 8-byte counter the peer WRITEs after the message (counter mode)
 *   2048 source of the message, 3072 source of the counter
 * </pre>
 */
final class WritePingPongEnd implements AutoCloseable
{
    /** How the receiving side learns that a message arrived. */
    enum PollMode
    {
        /**
         * The rdma media's commit: the message WRITE, then a separate 8-byte counter WRITE on the same QP, both in
         * one post (one doorbell); the reader polls the counter with an acquire load and only then reads the data.
         */
        COUNTER("counter"),
        /** perftest's {@code ib_write_lat}: one WRITE, the reader polls the message's last bytes. */
        LAST_BYTES("last-bytes");

        final String label;

        PollMode(final String label)
        {
            this.label = label;
        }

        static PollMode of(final String label)
        {
            for (final PollMode mode : values())
            {
                if (mode.label.equals(label))
                {
                    return mode;
                }
            }
            throw new IllegalArgumentException("unknown poll mode '" + label + "' (counter or last-bytes)");
        }
    }

    /** The sequence the client sends to end a phase early (its time bound ran out before its count). */
    static final long STOP_SEQUENCE = -1;
    static final int MAX_SIZE = 1024;
    static final int INBOX_OFFSET = 0;
    static final int COUNTER_OFFSET = 1024;
    private static final int MESSAGE_SOURCE_OFFSET = 2048;
    private static final int COUNTER_SOURCE_OFFSET = 3072;
    private static final int MEMORY_LENGTH = 4096;
    private static final int SIGNAL_EVERY = 16;
    private static final int CQ_POLL_EVERY_SPINS = 64;
    private static final int SEND_QUEUE_DEPTH = 128;
    /**
     * A message that has not arrived in this long is lost. Far beyond any round trip: a starved host (the test suite
     * on a loaded machine, the emulated guest) can keep one end off the CPU for seconds.
     */
    private static final long ARRIVAL_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(20);
    /** The peer may stay silent this long before the WRITEs fail (the providers' default is 2 s); see above. */
    private static final long RETRY_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final VarHandle LONG_ACQUIRE = JAVA_LONG.varHandle();

    private final int size;
    private final ProtectionDomain pd;
    private final CompletionQueue cq;
    private final QueuePair qp;
    private final MemorySegment memory;
    private final MemoryRegion region;
    private final WorkRequestBatch batch = new WorkRequestBatch(2);
    private final WorkCompletion[] completions = WorkCompletion.newArray(16);
    private final boolean inlineMessage;
    private final boolean inlineCounter;
    private long remoteAddress;
    private int remoteKey;
    private long posts;
    private long outstandingSignaled;

    WritePingPongEnd(final Device device, final int size)
    {
        if (size < Long.BYTES || size > MAX_SIZE)
        {
            throw new IllegalArgumentException("size must be 8.." + MAX_SIZE + " bytes: " + size);
        }
        this.size = size;
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(SEND_QUEUE_DEPTH);
        qp = pd.createQueuePair(new QueuePairConfig().completionQueue(cq).maxInlineData(size)
            .retryTimeoutNs(RETRY_TIMEOUT_NS).maxSendWorkRequests(SEND_QUEUE_DEPTH).maxReceiveWorkRequests(1)
            .portNumber(device.attributes().ports().getFirst().portNumber()));
        memory = device.allocateMemory(MEMORY_LENGTH);
        region = pd.registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        inlineMessage = qp.maxInlineData() >= size;
        inlineCounter = qp.maxInlineData() >= Long.BYTES;
    }

    QueuePairConnectionInfo localConnectionInfo()
    {
        return qp.localConnectionInfo();
    }

    long inboxAddress()
    {
        return region.address() + INBOX_OFFSET;
    }

    int rkey()
    {
        return region.rkey();
    }

    int maxInlineData()
    {
        return qp.maxInlineData();
    }

    /**
     * @param remote        the peer's QP.
     * @param remoteInbox   the peer's inbox address.
     * @param remoteRegionKey the peer's rkey.
     */
    void connect(final QueuePairConnectionInfo remote, final long remoteInbox, final int remoteRegionKey)
    {
        qp.connect(remote);
        remoteAddress = remoteInbox;
        remoteKey = remoteRegionKey;
    }

    /** WRITEs message {@code sequence} into the peer's inbox, and in counter mode the counter after it. */
    void send(final long sequence, final PollMode mode)
    {
        memory.set(JAVA_LONG, MESSAGE_SOURCE_OFFSET + size - Long.BYTES, sequence);
        final boolean signaled = ++posts % SIGNAL_EVERY == 0;
        final int messageFlags = inlineMessage ? SendFlags.INLINE : 0;
        batch.clear();
        if (PollMode.COUNTER == mode)
        {
            memory.set(JAVA_LONG, COUNTER_SOURCE_OFFSET, sequence);
            batch.add().write(sequence, region.address() + MESSAGE_SOURCE_OFFSET, size, region.lkey(),
                remoteAddress, remoteKey, messageFlags);
            batch.add().write(sequence, region.address() + COUNTER_SOURCE_OFFSET, Long.BYTES, region.lkey(),
                remoteAddress - INBOX_OFFSET + COUNTER_OFFSET, remoteKey,
                (inlineCounter ? SendFlags.INLINE : 0) | (signaled ? SendFlags.SIGNALED : 0));
        }
        else
        {
            batch.add().write(sequence, region.address() + MESSAGE_SOURCE_OFFSET, size, region.lkey(),
                remoteAddress, remoteKey, messageFlags | (signaled ? SendFlags.SIGNALED : 0));
        }
        final int result = qp.postSend(batch);
        if (PostResult.OK != result)
        {
            throw new IllegalStateException("post of WRITE " + sequence + " failed: " + PostResult.toString(result));
        }
        if (signaled)
        {
            outstandingSignaled++;
        }
        reap();
    }

    /**
     * Spins until message {@code sequence} (or {@link #STOP_SEQUENCE}) has arrived in this end's inbox; in counter
     * mode it then requires the message's own sequence to match (the data was placed before the counter that
     * published it).
     *
     * @return the sequence that arrived: {@code sequence} or {@link #STOP_SEQUENCE}.
     */
    long await(final long sequence, final PollMode mode)
    {
        final long polledOffset = PollMode.COUNTER == mode ? COUNTER_OFFSET : INBOX_OFFSET + size - Long.BYTES;
        long deadlineNs = 0;
        int spins = 0;
        long arrived;
        while ((arrived = (long)LONG_ACQUIRE.getAcquire(memory, polledOffset)) != sequence && STOP_SEQUENCE != arrived)
        {
            // The CQ is polled now and then while waiting, as the media's duty cycle does: a software provider
            // (tcp) moves its bytes on the polling thread, and on a NIC it reaps the send completions early.
            if (++spins % CQ_POLL_EVERY_SPINS == 0)
            {
                reap();
            }
            if (0 == deadlineNs)
            {
                deadlineNs = System.nanoTime() + ARRIVAL_TIMEOUT_NS;
            }
            else if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("WRITE " + sequence + " did not arrive within 20 s (" + mode.label +
                    " polling, last seen " + (long)LONG_ACQUIRE.getAcquire(memory, polledOffset) + ")");
            }
            Thread.onSpinWait();
        }
        if (PollMode.COUNTER == mode)
        {
            final long carried = (long)LONG_ACQUIRE.getAcquire(memory, (long)INBOX_OFFSET + size - Long.BYTES);
            if (carried != arrived)
            {
                throw new IllegalStateException("counter " + arrived + " arrived before its message (message " +
                    "holds " + carried + ")");
            }
        }
        return arrived;
    }

    /**
     * Zeroes the polled words of this end's inbox after a phase, while the peer writes nothing (it waits for the
     * phase's end over the socket): a stop sequence left there would end the next phase at once, in either mode.
     */
    void clearInbox()
    {
        LONG_ACQUIRE.setRelease(memory, (long)COUNTER_OFFSET, 0L);
        LONG_ACQUIRE.setRelease(memory, (long)INBOX_OFFSET + size - Long.BYTES, 0L);
    }

    /** Reaps the completions of the signaled WRITEs still outstanding, for at most 20 s. */
    void drain()
    {
        final long deadlineNs = System.nanoTime() + ARRIVAL_TIMEOUT_NS;
        while (outstandingSignaled > 0 && System.nanoTime() < deadlineNs)
        {
            reap();
        }
    }

    private void reap()
    {
        outstandingSignaled -= WriteCompletions.reap(cq, completions);
    }

    @Override
    public void close()
    {
        qp.close();
        region.deregister();
        cq.close();
        pd.close();
    }
}
