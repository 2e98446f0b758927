package io.verbus.fabric;

/**
 * RC queue pair states, with the values of {@code enum ibv_qp_state} (SQD and SQE are not used).
 */
public enum QueuePairState
{
    /** Created, nothing allowed. */
    RESET(0),
    /** Initialised: RECVs may be posted, nothing is received yet. */
    INIT(1),
    /** Ready to receive: connected to the peer's QP, incoming requests are served. */
    RTR(2),
    /** Ready to send: WRs on the send queue execute. */
    RTS(3),
    /** Failed: every outstanding and newly posted WR completes with {@link WorkCompletionStatus#WR_FLUSH_ERR}. */
    ERR(6);

    private final int code;

    QueuePairState(final int code)
    {
        this.code = code;
    }

    /**
     * @return the verbs {@code ibv_qp_state} value.
     */
    public int code()
    {
        return code;
    }

    /**
     * @param code an {@code ibv_qp_state} value.
     * @return the state.
     * @throws IllegalArgumentException for states this SPI does not use.
     */
    public static QueuePairState fromCode(final int code)
    {
        return switch (code)
        {
            case 0 -> RESET;
            case 1 -> INIT;
            case 2 -> RTR;
            case 3 -> RTS;
            case 6 -> ERR;
            default -> throw new IllegalArgumentException("unsupported queue pair state " + code);
        };
    }
}
