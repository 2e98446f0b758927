package io.verbus.fabric;

/**
 * One completion, a reusable mutable holder that {@link CompletionQueue#poll(WorkCompletion[], int)} fills.
 * <p>
 * Allocate an array of them once and poll into it forever: polling allocates nothing. On an error status
 * only {@link #wrId()}, {@link #status()} and {@link #qpNumber()} are meaningful, as in verbs.
 */
public final class WorkCompletion
{
    private long wrId;
    private WorkCompletionStatus status = WorkCompletionStatus.SUCCESS;
    private WorkCompletionOpcode opcode = WorkCompletionOpcode.SEND;
    private int byteLength;
    private int immediateData;
    private boolean hasImmediate;
    private int qpNumber;
    private int vendorError;

    /**
     * Allocate an array of holders for a poll batch.
     *
     * @param length how many completions one poll may return.
     * @return the array, every element allocated.
     */
    public static WorkCompletion[] newArray(final int length)
    {
        final WorkCompletion[] completions = new WorkCompletion[length];
        for (int i = 0; i < length; i++)
        {
            completions[i] = new WorkCompletion();
        }
        return completions;
    }

    /**
     * Fill every field; used by providers.
     *
     * @return this.
     */
    public WorkCompletion set(
        final long wrId,
        final WorkCompletionStatus status,
        final WorkCompletionOpcode opcode,
        final int byteLength,
        final int immediateData,
        final boolean hasImmediate,
        final int qpNumber,
        final int vendorError)
    {
        this.wrId = wrId;
        this.status = status;
        this.opcode = opcode;
        this.byteLength = byteLength;
        this.immediateData = immediateData;
        this.hasImmediate = hasImmediate;
        this.qpNumber = qpNumber;
        this.vendorError = vendorError;
        return this;
    }

    /**
     * @return the id the application gave the WR.
     */
    public long wrId()
    {
        return wrId;
    }

    /**
     * @return the status.
     */
    public WorkCompletionStatus status()
    {
        return status;
    }

    /**
     * @return true if {@link #status()} is SUCCESS.
     */
    public boolean isSuccess()
    {
        return status == WorkCompletionStatus.SUCCESS;
    }

    /**
     * @return the operation completed.
     */
    public WorkCompletionOpcode opcode()
    {
        return opcode;
    }

    /**
     * @return bytes received (RECV, RECV_RDMA_WITH_IMM) or transferred.
     */
    public int byteLength()
    {
        return byteLength;
    }

    /**
     * @return the immediate (host order) if {@link #hasImmediate()}.
     */
    public int immediateData()
    {
        return immediateData;
    }

    /**
     * @return true if the completion carries an immediate (WRITE_WITH_IMM, SEND_WITH_IMM at the receiver).
     */
    public boolean hasImmediate()
    {
        return hasImmediate;
    }

    /**
     * @return the local QP number the WR was posted to.
     */
    public int qpNumber()
    {
        return qpNumber;
    }

    /**
     * @return a provider-specific error detail, 0 if none.
     */
    public int vendorError()
    {
        return vendorError;
    }

    @Override
    public String toString()
    {
        return "WorkCompletion{wrId=" + wrId + ", status=" + status + ", opcode=" + opcode +
            ", byteLength=" + byteLength + (hasImmediate ? ", imm=" + immediateData : "") +
            ", qpn=" + qpNumber + (vendorError != 0 ? ", vendorError=" + vendorError : "") + '}';
    }
}
