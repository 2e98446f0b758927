package io.verbus.fabric;

/**
 * Status of a {@link WorkCompletion}, with the values of {@code enum ibv_wc_status}.
 * <p>
 * Any status other than {@link #SUCCESS} moves the QP to {@link QueuePairState#ERR}; the WRs still
 * outstanding on it then complete with {@link #WR_FLUSH_ERR}.
 */
public enum WorkCompletionStatus
{
    /** The WR completed. */
    SUCCESS(0),
    /** A local length error: the SEND did not fit the posted RECV, or a length beyond a limit. */
    LOC_LEN_ERR(1),
    /** A local QP operation error: the WR was inconsistent with the QP. */
    LOC_QP_OP_ERR(2),
    LOC_EEC_OP_ERR(3),
    /** A local protection error: the lkey or the local address range did not match a region with the needed right. */
    LOC_PROT_ERR(4),
    /** The QP was in ERR when the WR was executed: flushed without being run. */
    WR_FLUSH_ERR(5),
    MW_BIND_ERR(6),
    BAD_RESP_ERR(7),
    LOC_ACCESS_ERR(8),
    /** The responder found the request invalid (e.g. a SEND longer than its posted RECV). */
    REM_INV_REQ_ERR(9),
    /** The responder refused the access: unknown rkey, out of bounds, missing right, deregistered region. */
    REM_ACCESS_ERR(10),
    /** The responder could not run the operation. */
    REM_OP_ERR(11),
    /** The peer did not answer within the retry count: dead peer, lost connection, QP gone. */
    RETRY_EXC_ERR(12),
    /** The responder had no RECV posted for longer than the RNR retry allowance. */
    RNR_RETRY_EXC_ERR(13),
    LOC_RDD_VIOL_ERR(14),
    REM_INV_RD_REQ_ERR(15),
    REM_ABORT_ERR(16),
    INV_EECN_ERR(17),
    INV_EEC_STATE_ERR(18),
    FATAL_ERR(19),
    RESP_TIMEOUT_ERR(20),
    /** Anything else. */
    GENERAL_ERR(21);

    private static final WorkCompletionStatus[] BY_CODE = values();

    private final int code;

    WorkCompletionStatus(final int code)
    {
        this.code = code;
    }

    /**
     * @return the verbs {@code ibv_wc_status} value.
     */
    public int code()
    {
        return code;
    }

    /**
     * What an operator reading a log needs to know of this status: where the fault most likely is.
     *
     * @return a short plain-language description, without the status name.
     */
    public String meaning()
    {
        return switch (this)
        {
            case SUCCESS -> "completed";
            case LOC_LEN_ERR -> "a length this side's limits refuse";
            case LOC_QP_OP_ERR -> "a request this side's QP could not run (an internal error of the provider)";
            case LOC_PROT_ERR -> "this side's memory region does not cover the request (lkey, range or rights)";
            case WR_FLUSH_ERR -> "not run: the QP had already failed";
            case REM_INV_REQ_ERR -> "the peer found the request invalid";
            case REM_ACCESS_ERR -> "the peer refused the access (unknown rkey, out of bounds, missing right or " +
                "deregistered region: a peer that closed its ring, or a corrupt or hostile one)";
            case REM_OP_ERR -> "the peer could not run the request";
            case RETRY_EXC_ERR -> "the peer stopped answering (process stopped or dead, connection lost, QP gone)";
            case RNR_RETRY_EXC_ERR -> "the peer had no receive posted for longer than its allowance";
            case FATAL_ERR -> "the device failed";
            case RESP_TIMEOUT_ERR -> "the peer's response timed out";
            default -> "a device error (verbs status " + code + ")";
        };
    }

    /**
     * Map a verbs value without allocating.
     *
     * @param code an {@code ibv_wc_status} value.
     * @return the status, or {@link #GENERAL_ERR} for values this SPI does not know.
     */
    public static WorkCompletionStatus fromCode(final int code)
    {
        return code >= 0 && code < BY_CODE.length ? BY_CODE[code] : GENERAL_ERR;
    }
}
