package io.verbus.fabric;

/**
 * Logical state of a device port, as {@code enum ibv_port_state}.
 */
public enum PortState
{
    NOP(0), DOWN(1), INIT(2), ARMED(3), ACTIVE(4), ACTIVE_DEFER(5);

    private static final PortState[] BY_CODE = values();

    private final int code;

    PortState(final int code)
    {
        this.code = code;
    }

    /**
     * @return the verbs value of this state.
     */
    public int code()
    {
        return code;
    }

    /**
     * @param code a verbs {@code ibv_port_state} value.
     * @return the state.
     * @throws IllegalArgumentException if the value is unknown.
     */
    public static PortState fromCode(final int code)
    {
        if (code < 0 || code >= BY_CODE.length)
        {
            throw new IllegalArgumentException("unknown port state " + code);
        }
        return BY_CODE[code];
    }
}
