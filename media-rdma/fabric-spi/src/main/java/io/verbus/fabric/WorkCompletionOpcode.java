package io.verbus.fabric;

/**
 * What a {@link WorkCompletion} reports on, with the values of {@code enum ibv_wc_opcode}.
 */
public enum WorkCompletionOpcode
{
    SEND(0),
    RDMA_WRITE(1),
    RDMA_READ(2),
    COMP_SWAP(3),
    FETCH_ADD(4),
    /** A RECV consumed by a SEND. */
    RECV(128),
    /** A RECV consumed by a WRITE_WITH_IMM: the data was placed, the immediate is in the completion. */
    RECV_RDMA_WITH_IMM(129);

    private final int code;

    WorkCompletionOpcode(final int code)
    {
        this.code = code;
    }

    /**
     * @return the verbs {@code ibv_wc_opcode} value.
     */
    public int code()
    {
        return code;
    }

    /**
     * @param code an {@code ibv_wc_opcode} value.
     * @return the opcode.
     * @throws IllegalArgumentException if the value is not one this SPI uses.
     */
    public static WorkCompletionOpcode fromCode(final int code)
    {
        return switch (code)
        {
            case 0 -> SEND;
            case 1 -> RDMA_WRITE;
            case 2 -> RDMA_READ;
            case 3 -> COMP_SWAP;
            case 4 -> FETCH_ADD;
            case 128 -> RECV;
            case 129 -> RECV_RDMA_WITH_IMM;
            default -> throw new IllegalArgumentException("unknown work completion opcode " + code);
        };
    }
}
