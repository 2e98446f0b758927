package io.verbus.fabric;

import java.util.Objects;
import java.util.concurrent.TimeUnit;

/**
 * How to create an RC {@link QueuePair} (the parts of {@code ibv_qp_init_attr} and the connection-time
 * {@code ibv_qp_attr} Verbus sets). Fluent, validated by {@link ProtectionDomain#createQueuePair}.
 */
public final class QueuePairConfig
{
    /** Default send and receive queue depth. */
    public static final int DEFAULT_QUEUE_DEPTH = 128;
    /** Default requested inline capacity in bytes. */
    public static final int DEFAULT_MAX_INLINE_DATA = 64;
    /** Default time a peer may stay silent before outstanding WRs fail with RETRY_EXC_ERR. */
    public static final long DEFAULT_RETRY_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(2);
    /** RNR retry count meaning "retry forever", as in verbs. */
    public static final int RNR_RETRY_INFINITE = 7;
    /** Default RNR retry count. */
    public static final int DEFAULT_RNR_RETRY_COUNT = RNR_RETRY_INFINITE;
    /** Default wait between RNR retries. */
    public static final long DEFAULT_RNR_TIMEOUT_NS = TimeUnit.MILLISECONDS.toNanos(10);

    private CompletionQueue sendCompletionQueue;
    private CompletionQueue receiveCompletionQueue;
    private SharedReceiveQueue sharedReceiveQueue;
    private int maxSendWorkRequests = DEFAULT_QUEUE_DEPTH;
    private int maxReceiveWorkRequests = DEFAULT_QUEUE_DEPTH;
    private int maxInlineData = DEFAULT_MAX_INLINE_DATA;
    private int portNumber = 1;
    private long retryTimeoutNs = DEFAULT_RETRY_TIMEOUT_NS;
    private int rnrRetryCount = DEFAULT_RNR_RETRY_COUNT;
    private long rnrTimeoutNs = DEFAULT_RNR_TIMEOUT_NS;

    /**
     * @param cq where send-queue completions go.
     * @return this.
     */
    public QueuePairConfig sendCompletionQueue(final CompletionQueue cq)
    {
        this.sendCompletionQueue = cq;
        return this;
    }

    /**
     * @param cq where receive-queue completions go.
     * @return this.
     */
    public QueuePairConfig receiveCompletionQueue(final CompletionQueue cq)
    {
        this.receiveCompletionQueue = cq;
        return this;
    }

    /**
     * @param cq where both queues' completions go.
     * @return this.
     */
    public QueuePairConfig completionQueue(final CompletionQueue cq)
    {
        return sendCompletionQueue(cq).receiveCompletionQueue(cq);
    }

    /**
     * @param srq the shared receive queue the QP takes its receives from (of the same PD), or null for its own
     *            receive queue; {@link #maxReceiveWorkRequests} then bounds only what the provider keeps per QP.
     * @return this.
     */
    public QueuePairConfig sharedReceiveQueue(final SharedReceiveQueue srq)
    {
        this.sharedReceiveQueue = srq;
        return this;
    }

    /**
     * @param depth send queue depth: most WRs posted and not yet reaped by a completion.
     * @return this.
     */
    public QueuePairConfig maxSendWorkRequests(final int depth)
    {
        this.maxSendWorkRequests = depth;
        return this;
    }

    /**
     * @param depth receive queue depth: most RECVs posted and not yet consumed.
     * @return this.
     */
    public QueuePairConfig maxReceiveWorkRequests(final int depth)
    {
        this.maxReceiveWorkRequests = depth;
        return this;
    }

    /**
     * @param bytes requested inline capacity; the QP may grant more ({@link QueuePair#maxInlineData()}).
     * @return this.
     */
    public QueuePairConfig maxInlineData(final int bytes)
    {
        this.maxInlineData = bytes;
        return this;
    }

    /**
     * @param portNumber 1-based device port the QP uses.
     * @return this.
     */
    public QueuePairConfig portNumber(final int portNumber)
    {
        this.portNumber = portNumber;
        return this;
    }

    /**
     * @param timeoutNs how long a peer may stay silent (no ack, dead process, lost connection) before the
     *                  outstanding WRs fail with RETRY_EXC_ERR; verbs maps it to timeout and retry_cnt.
     * @return this.
     */
    public QueuePairConfig retryTimeoutNs(final long timeoutNs)
    {
        this.retryTimeoutNs = timeoutNs;
        return this;
    }

    /**
     * @param count RNR retries before RNR_RETRY_EXC_ERR; {@link #RNR_RETRY_INFINITE} waits forever.
     * @return this.
     */
    public QueuePairConfig rnrRetryCount(final int count)
    {
        this.rnrRetryCount = count;
        return this;
    }

    /**
     * @param timeoutNs wait between RNR retries.
     * @return this.
     */
    public QueuePairConfig rnrTimeoutNs(final long timeoutNs)
    {
        this.rnrTimeoutNs = timeoutNs;
        return this;
    }

    public CompletionQueue sendCompletionQueue()
    {
        return sendCompletionQueue;
    }

    public CompletionQueue receiveCompletionQueue()
    {
        return receiveCompletionQueue;
    }

    public SharedReceiveQueue sharedReceiveQueue()
    {
        return sharedReceiveQueue;
    }

    public int maxSendWorkRequests()
    {
        return maxSendWorkRequests;
    }

    public int maxReceiveWorkRequests()
    {
        return maxReceiveWorkRequests;
    }

    public int maxInlineData()
    {
        return maxInlineData;
    }

    public int portNumber()
    {
        return portNumber;
    }

    public long retryTimeoutNs()
    {
        return retryTimeoutNs;
    }

    public int rnrRetryCount()
    {
        return rnrRetryCount;
    }

    public long rnrTimeoutNs()
    {
        return rnrTimeoutNs;
    }

    /**
     * Check the configuration against a device; providers call this first.
     *
     * @param attributes the device's limits.
     * @throws IllegalArgumentException naming the first bad field.
     */
    public void validate(final DeviceAttributes attributes)
    {
        Objects.requireNonNull(sendCompletionQueue, "sendCompletionQueue");
        Objects.requireNonNull(receiveCompletionQueue, "receiveCompletionQueue");
        requireRange("maxSendWorkRequests", maxSendWorkRequests, 1, attributes.maxQueuePairWorkRequests());
        requireRange("maxReceiveWorkRequests", maxReceiveWorkRequests, 1, attributes.maxQueuePairWorkRequests());
        requireRange("maxInlineData", maxInlineData, 0, attributes.maxInlineData());
        attributes.port(portNumber);
        if (retryTimeoutNs <= 0)
        {
            throw new IllegalArgumentException("retryTimeoutNs must be > 0: " + retryTimeoutNs);
        }
        requireRange("rnrRetryCount", rnrRetryCount, 0, RNR_RETRY_INFINITE);
        if (rnrTimeoutNs <= 0)
        {
            throw new IllegalArgumentException("rnrTimeoutNs must be > 0: " + rnrTimeoutNs);
        }
    }

    private static void requireRange(final String name, final int value, final int min, final int max)
    {
        if (value < min || value > max)
        {
            throw new IllegalArgumentException(name + " must be in [" + min + ", " + max + "]: " + value);
        }
    }
}
