package io.verbus.fabric;

/**
 * Operation of a send-queue {@link WorkRequest}, with the values of {@code enum ibv_wr_opcode}.
 */
public enum WorkRequestOpcode
{
    /** One-sided write of local bytes to remote memory (REMOTE_WRITE right). */
    RDMA_WRITE(0, WorkCompletionOpcode.RDMA_WRITE),
    /** RDMA_WRITE that also consumes a RECV at the responder and delivers a 32-bit immediate. */
    RDMA_WRITE_WITH_IMM(1, WorkCompletionOpcode.RDMA_WRITE),
    /** Two-sided send into the responder's next posted RECV. */
    SEND(2, WorkCompletionOpcode.SEND),
    /** SEND that also delivers a 32-bit immediate. */
    SEND_WITH_IMM(3, WorkCompletionOpcode.SEND),
    /** One-sided read of remote bytes into local memory (REMOTE_READ right, local LOCAL_WRITE). */
    RDMA_READ(4, WorkCompletionOpcode.RDMA_READ),
    /** 8-byte compare-and-swap on remote memory; the old value lands locally (REMOTE_ATOMIC right). */
    ATOMIC_CMP_AND_SWP(5, WorkCompletionOpcode.COMP_SWAP),
    /** 8-byte fetch-and-add on remote memory; the old value lands locally (REMOTE_ATOMIC right). */
    ATOMIC_FETCH_AND_ADD(6, WorkCompletionOpcode.FETCH_ADD);

    private static final WorkRequestOpcode[] BY_CODE = values();

    private final int code;
    private final WorkCompletionOpcode completionOpcode;

    WorkRequestOpcode(final int code, final WorkCompletionOpcode completionOpcode)
    {
        this.code = code;
        this.completionOpcode = completionOpcode;
    }

    /**
     * @return the verbs {@code ibv_wr_opcode} value.
     */
    public int code()
    {
        return code;
    }

    /**
     * @return the opcode its completion at the requester reports.
     */
    public WorkCompletionOpcode completionOpcode()
    {
        return completionOpcode;
    }

    /**
     * @return true for the two atomics.
     */
    public boolean isAtomic()
    {
        return this == ATOMIC_CMP_AND_SWP || this == ATOMIC_FETCH_AND_ADD;
    }

    /**
     * @return true if the responder consumes a RECV (SEND, SEND_WITH_IMM, RDMA_WRITE_WITH_IMM).
     */
    public boolean consumesReceive()
    {
        return this == SEND || this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /**
     * @return true if the WR carries an immediate.
     */
    public boolean hasImmediate()
    {
        return this == SEND_WITH_IMM || this == RDMA_WRITE_WITH_IMM;
    }

    /**
     * @return true if the WR names remote memory (address + rkey).
     */
    public boolean isOneSided()
    {
        return this != SEND && this != SEND_WITH_IMM;
    }

    /**
     * @param code an {@code ibv_wr_opcode} value.
     * @return the opcode.
     * @throws IllegalArgumentException if unknown.
     */
    public static WorkRequestOpcode fromCode(final int code)
    {
        if (code < 0 || code >= BY_CODE.length)
        {
            throw new IllegalArgumentException("unknown work request opcode " + code);
        }
        return BY_CODE[code];
    }
}
