package io.verbus.fabric.shm;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;

/**
 * Runs a file-channel call that must not fail because of the calling thread's interrupt status.
 * <p>
 * Why: the shm provider maps a peer's region file the first time a WR names it, on the thread that posts the WR,
 * which in direct mode is the application's publishing thread. A {@code FileChannel} closes itself and throws
 * {@link ClosedByInterruptException} when its caller is interrupted, so an application thread whose interrupt flag
 * was set (an executor being shut down, a cancelled task) made the mapping fail, the WR fail with a remote access
 * error and the subscriber be dropped, again at every reconnect: 0 of 20,000 messages arrived. The bus's data path
 * is memory and non-blocking sockets otherwise, which an interrupt does not touch; this keeps the one file call on it
 * the same. The interrupt is not consumed: the flag is cleared for the call and set again after it.
 */
final class InterruptImmuneIo
{
    /** An interrupt that arrives during the call closes its channel; the call runs again, on a new one. */
    static final int MAX_ATTEMPTS = 3;

    /**
     * A call that opens (and closes) its own channel, so that it can run again after an interrupt closed it.
     *
     * @param <T> what it returns.
     */
    @FunctionalInterface
    interface IoCall<T>
    {
        T call() throws IOException;
    }

    private InterruptImmuneIo()
    {
    }

    /**
     * @param call the file-channel work, opening its own channel.
     * @param <T>  what it returns.
     * @return what {@code call} returned.
     * @throws IOException what {@code call} threw, or the {@link ClosedByInterruptException} of its last attempt.
     */
    static <T> T call(final IoCall<T> call) throws IOException
    {
        boolean interrupted = Thread.interrupted();
        try
        {
            for (int attempt = 1; ; attempt++)
            {
                try
                {
                    return call.call();
                }
                catch (final ClosedByInterruptException ex)
                {
                    interrupted |= Thread.interrupted();
                    if (attempt >= MAX_ATTEMPTS)
                    {
                        throw ex;
                    }
                }
            }
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }
}
