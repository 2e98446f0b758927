package io.verbus.fabric.verbs;

import io.verbus.fabric.FabricException;

/**
 * The verbs provider cannot run here: no libibverbs, no RDMA device, or no ACTIVE port. The message says
 * which, how to fix it, and which soft providers work without RDMA hardware.
 */
public final class VerbsUnavailableException extends FabricException
{
    /** Appended to every reason: what to use instead. */
    public static final String SOFT_PROVIDERS_HINT =
        "without RDMA hardware use the soft providers: provider=tcp (across hosts) or provider=shm (one host); " +
        "provider=auto falls back to them";

    private static final long serialVersionUID = 1L;

    public VerbsUnavailableException(final String message)
    {
        super(message);
    }

    public VerbsUnavailableException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
