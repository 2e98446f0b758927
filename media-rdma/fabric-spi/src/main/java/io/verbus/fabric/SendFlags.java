package io.verbus.fabric;

/**
 * Flags of a send-queue {@link WorkRequest}, with the values of {@code enum ibv_send_flags}.
 */
public final class SendFlags
{
    /** Wait for all earlier READs and atomics on this QP to complete before executing this WR. */
    public static final int FENCE = 1;
    /** Report a {@link WorkCompletion} for this WR; unsignaled WRs are reaped by a later signaled one. */
    public static final int SIGNALED = 1 << 1;
    /** Ask the responder to raise a solicited event (carried through; soft providers ignore it). */
    public static final int SOLICITED = 1 << 2;
    /** Copy the payload into the WR at post time (up to {@code maxInlineData}); the lkey is not used. */
    public static final int INLINE = 1 << 3;

    /** Every flag this SPI knows. */
    public static final int ALL = FENCE | SIGNALED | SOLICITED | INLINE;

    private SendFlags()
    {
    }

    /**
     * @param flags send flags.
     * @param flag  one flag.
     * @return true if {@code flag} is set.
     */
    public static boolean isSet(final int flags, final int flag)
    {
        return (flags & flag) != 0;
    }
}
