package io.verbus.fabric;

/**
 * Return codes of {@link QueuePair#postSend(WorkRequestBatch)} and {@link QueuePair#postReceive}. A failed
 * post is refused synchronously (as {@code ibv_post_send} returning an errno) and never produces a completion.
 */
public final class PostResult
{
    /** Every WR was posted. */
    public static final int OK = 0;
    /** The send queue has no room: reap completions first (as ENOMEM from verbs). */
    public static final int SEND_QUEUE_FULL = -1;
    /** The receive queue has no room. */
    public static final int RECEIVE_QUEUE_FULL = -2;
    /** An INLINE WR is longer than the QP's max inline data (as EINVAL from verbs). */
    public static final int INLINE_TOO_LONG = -3;
    /** The QP cannot take sends in its state (RESET, INIT or RTR) or receives (RESET). */
    public static final int INVALID_STATE = -4;
    /** The WR is malformed: negative length, misaligned atomic, immediate on a non-IMM opcode and the like. */
    public static final int INVALID_REQUEST = -5;

    private PostResult()
    {
    }

    /**
     * @param result a post result.
     * @return its name, for logs and exceptions.
     */
    public static String toString(final int result)
    {
        return switch (result)
        {
            case OK -> "OK";
            case SEND_QUEUE_FULL -> "SEND_QUEUE_FULL";
            case RECEIVE_QUEUE_FULL -> "RECEIVE_QUEUE_FULL";
            case INLINE_TOO_LONG -> "INLINE_TOO_LONG";
            case INVALID_STATE -> "INVALID_STATE";
            case INVALID_REQUEST -> "INVALID_REQUEST";
            default -> "UNKNOWN(" + result + ")";
        };
    }
}
