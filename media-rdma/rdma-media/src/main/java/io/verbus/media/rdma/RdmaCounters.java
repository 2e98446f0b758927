package io.verbus.media.rdma;

import io.verbus.counters.CounterTypes;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

/**
 * The rdma media's counter types (in bus-core's reserved range) and their allocation. The counters manager is
 * shared with the driver and not thread-safe, so every allocation and free synchronises on it.
 */
public final class RdmaCounters
{
    public static final int BYTES_POSTED_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE;
    public static final int WRS_POSTED_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 1;
    public static final int INLINE_WRS_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 2;
    public static final int SIGNALED_WRS_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 3;
    public static final int COMPLETION_ERRORS_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 4;
    /** Value: the verbs code of the {@link io.verbus.fabric.QueuePairState} (RESET 0, INIT 1, RTR 2, RTS 3, ERR 6). */
    public static final int QP_STATE_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 5;
    /** Publisher side: bytes the subscriber has not consumed yet; subscriber side: bytes not polled yet. */
    public static final int SUBSCRIBER_LAG_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 6;
    /** The TCP port a publication's control endpoint listens on (useful with port 0). */
    public static final int CONTROL_PORT_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 7;
    /** Handshakes refused (bad proof, bad field, timeout) by a publication or subscription. */
    public static final int HANDSHAKES_REJECTED_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 8;
    /** Connections currently established by a publication or subscription. */
    public static final int CONNECTIONS_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 9;
    /** Torn or inconsistent position/status block reads (retried; a WRITE in progress). */
    public static final int TORN_READS_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 10;
    /** The connection's agreed commit mode: 0 counter, 1 imm (the handshake's codes). */
    public static final int COMMIT_MODE_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 11;
    /** commit=imm, subscriber side: WRITE_WITH_IMM receive completions the image reaped (each reposts its RECV). */
    public static final int IMMEDIATES_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 12;
    /**
     * commit=imm, publisher side: times a chain was held back because the subscriber had no RECV left for another
     * WRITE_WITH_IMM; what a responder would otherwise answer with RNR (and the requester retry). It is not lost: the
     * data goes with the next chain once the subscriber's status reports it reaped earlier immediates.
     */
    public static final int RECEIVE_CREDIT_STALLS_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 13;
    /** A {@code join=recent} subscription: bytes caught up by RDMA READ of the publisher's log, all connections. */
    public static final int CATCH_UP_BYTES_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 14;
    /** A {@code join=recent} subscription: how long its last catch-up took, nanoseconds. */
    public static final int CATCH_UP_TIME_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 15;
    /** A {@code join=recent} subscription: bytes asked for that the publisher's log no longer held (gaps). */
    public static final int CATCH_UP_GAP_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 16;
    /**
     * An {@code idle=event} subscription's connection: times its polling thread blocked on the completion channel and
     * was woken by an immediate's completion (a wait that timed out does not count).
     */
    public static final int WAKE_UPS_TYPE_ID = CounterTypes.MEDIA_RDMA_TYPE_ID_BASE + 17;
    /** The last type id the media allocates. */
    public static final int LAST_TYPE_ID = WAKE_UPS_TYPE_ID;

    private RdmaCounters()
    {
    }

    public static AtomicCounter allocate(final CountersManager manager, final int typeId, final String label)
    {
        if (null == manager)
        {
            return null;
        }
        synchronized (manager)
        {
            return manager.newCounter(label, typeId);
        }
    }

    public static void free(final CountersManager manager, final AtomicCounter counter)
    {
        if (null != manager && null != counter)
        {
            synchronized (manager)
            {
                counter.close();
            }
        }
    }

    /** Write a value once per duty cycle; a missing (null) counter is a no-op so tests may run without any. */
    public static void set(final AtomicCounter counter, final long value)
    {
        if (null != counter)
        {
            counter.setRelease(value);
        }
    }

    /**
     * The counters of one side of a channel (a sender or a receiver): torn slot reads and live connections.
     */
    static final class Side
    {
        private final CountersManager manager;
        private final AtomicCounter tornReads;
        private final AtomicCounter connections;

        /**
         * @param manager          where counters live (null: none).
         * @param tornReadsLabel   label of the torn reads counter.
         * @param connectionsLabel label of the connections counter.
         */
        Side(final CountersManager manager, final String tornReadsLabel, final String connectionsLabel)
        {
            this.manager = manager;
            tornReads = allocate(manager, TORN_READS_TYPE_ID, tornReadsLabel);
            AtomicCounter allocated = null;
            try
            {
                allocated = allocate(manager, CONNECTIONS_TYPE_ID, connectionsLabel);
            }
            finally
            {
                if (null == allocated)
                {
                    RdmaCounters.free(manager, tornReads);
                }
            }
            connections = allocated;
        }

        void publish(final long tornReadCount, final int connectionCount)
        {
            set(tornReads, tornReadCount);
            set(connections, connectionCount);
        }

        void free()
        {
            RdmaCounters.free(manager, tornReads);
            RdmaCounters.free(manager, connections);
        }
    }

    /** A subscription's catch-up counters (control thread); none allocated for a subscription without one. */
    static final class CatchUp
    {
        private final CountersManager manager;
        private final AtomicCounter bytes;
        private final AtomicCounter timeNs;
        private final AtomicCounter gapBytes;
        private volatile long bytesTotal;
        private volatile long gapTotal;

        CatchUp(final CountersManager manager, final String name)
        {
            this.manager = manager;
            bytes = allocate(manager, CATCH_UP_BYTES_TYPE_ID, "rdma catch-up bytes: " + name);
            timeNs = allocate(manager, CATCH_UP_TIME_TYPE_ID, "rdma catch-up last ns: " + name);
            gapBytes = allocate(manager, CATCH_UP_GAP_TYPE_ID, "rdma catch-up gap bytes: " + name);
        }

        void onCatchUp(final long readBytes, final long elapsedNs)
        {
            bytesTotal += readBytes;
            set(bytes, bytesTotal);
            set(timeNs, elapsedNs);
        }

        void onGap(final long length)
        {
            gapTotal += length;
            set(gapBytes, gapTotal);
        }

        long bytes()
        {
            return bytesTotal;
        }

        long gapBytes()
        {
            return gapTotal;
        }

        void close()
        {
            free(manager, bytes);
            free(manager, timeNs);
            free(manager, gapBytes);
        }
    }

    /**
     * The per-connection counters: bytes and WRs posted, inline and signaled WRs, completion errors, QP state,
     * and subscriber lag.
     */
    public static final class Connection
    {
        public final AtomicCounter bytesPosted;
        public final AtomicCounter wrsPosted;
        public final AtomicCounter inlineWrs;
        public final AtomicCounter signaledWrs;
        public final AtomicCounter completionErrors;
        public final AtomicCounter qpState;
        public final AtomicCounter lag;
        public final AtomicCounter commitMode;
        public final AtomicCounter immediates;
        public final AtomicCounter creditStalls;
        /** idle=event subscriber connections only, else null. */
        public final AtomicCounter wakeUps;
        private final CountersManager manager;

        public Connection(final CountersManager manager, final String name)
        {
            this(manager, name, false);
        }

        /**
         * @param manager    where counters live (null: none).
         * @param name       the connection's name, in every label.
         * @param eventIdle  true for an {@code idle=event} subscriber connection: it also counts wake-ups.
         */
        public Connection(final CountersManager manager, final String name, final boolean eventIdle)
        {
            this.manager = manager;
            bytesPosted = allocate(manager, BYTES_POSTED_TYPE_ID, "rdma bytes posted: " + name);
            wrsPosted = allocate(manager, WRS_POSTED_TYPE_ID, "rdma WRs posted: " + name);
            inlineWrs = allocate(manager, INLINE_WRS_TYPE_ID, "rdma inline WRs: " + name);
            signaledWrs = allocate(manager, SIGNALED_WRS_TYPE_ID, "rdma signaled WRs: " + name);
            completionErrors = allocate(manager, COMPLETION_ERRORS_TYPE_ID, "rdma completion errors: " + name);
            qpState = allocate(manager, QP_STATE_TYPE_ID, "rdma QP state: " + name);
            lag = allocate(manager, SUBSCRIBER_LAG_TYPE_ID, "rdma subscriber lag: " + name);
            commitMode = allocate(manager, COMMIT_MODE_TYPE_ID, "rdma commit mode (0 counter, 1 imm): " + name);
            immediates = allocate(manager, IMMEDIATES_TYPE_ID, "rdma immediate completions: " + name);
            creditStalls = allocate(manager, RECEIVE_CREDIT_STALLS_TYPE_ID,
                "rdma receive credit stalls (instead of RNR): " + name);
            wakeUps = eventIdle ? allocate(manager, WAKE_UPS_TYPE_ID, "rdma wake-ups (idle=event): " + name) : null;
        }

        public void close()
        {
            free(manager, bytesPosted);
            free(manager, wrsPosted);
            free(manager, inlineWrs);
            free(manager, signaledWrs);
            free(manager, completionErrors);
            free(manager, qpState);
            free(manager, lag);
            free(manager, commitMode);
            free(manager, immediates);
            free(manager, creditStalls);
            free(manager, wakeUps);
        }
    }
}
