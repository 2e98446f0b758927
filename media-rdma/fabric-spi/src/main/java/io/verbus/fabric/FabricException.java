package io.verbus.fabric;

/**
 * A fabric operation outside the data path failed (open, register, create, connect).
 * Data-path failures are completion statuses and post results, never exceptions.
 */
public class FabricException extends RuntimeException
{
    private static final long serialVersionUID = 1L;

    public FabricException(final String message)
    {
        super(message);
    }

    public FabricException(final String message, final Throwable cause)
    {
        super(message, cause);
    }
}
