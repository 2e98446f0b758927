package io.verbus.common;

import java.io.IOException;
import java.nio.channels.ClosedByInterruptException;
import java.util.function.Supplier;

/**
 * Runs a file-channel call that must not fail because of the calling thread's interrupt status.
 * <p>
 * Why: a {@code FileChannel} closes itself and throws {@link ClosedByInterruptException} when its caller is
 * interrupted, and some of Verbus's file calls run on the application's threads: the shm provider maps a peer's
 * region file the first time a WR names it, on the thread that posts the WR (in direct mode the application's
 * publishing thread), and a publication's or an image's log is created or mapped on the thread that adds it. An
 * application thread whose interrupt flag was set (an executor being shut down, a cancelled task) made the first
 * fail with a remote access error and the subscriber be dropped at every reconnect (0 of 20,000 messages arrived),
 * and the second fail as "cannot map the driver's log". The data path is memory and non-blocking sockets otherwise,
 * which an interrupt does not touch (nor, on JDK 25, {@code Files.readAllBytes} and its kin, which read through an
 * uninterruptible channel: checked). The interrupt is not consumed: the flag is cleared for the call and set again
 * after it.
 */
public final class InterruptImmuneIo
{
    /** An interrupt that arrives during the call closes its channel; the call runs again, on a new one. */
    public static final int MAX_ATTEMPTS = 3;

    /**
     * A call that opens (and closes) its own channel, so that it can run again after an interrupt closed it.
     *
     * @param <T> what it returns.
     */
    @FunctionalInterface
    public interface IoCall<T>
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
    public static <T> T call(final IoCall<T> call) throws IOException
    {
        return call(call, MAX_ATTEMPTS);
    }

    /**
     * As {@link #call(IoCall)} for a call that cannot simply run again (it creates a file): one attempt, so an
     * interrupt that arrives during it still fails it, with its {@link ClosedByInterruptException}.
     *
     * @param call the file-channel work.
     * @param <T>  what it returns.
     * @return what {@code call} returned.
     * @throws IOException what {@code call} threw.
     */
    public static <T> T callOnce(final IoCall<T> call) throws IOException
    {
        return call(call, 1);
    }

    /**
     * For work whose file calls happen inside a library (Aeron's client and embedded driver map their files through
     * {@code FileChannel}s on the calling thread): the interrupt is cleared for the work and set again after it; an
     * interrupt that arrives meanwhile still fails it.
     *
     * @param work what to run.
     * @param <T>  what it returns.
     * @return what {@code work} returned.
     */
    public static <T> T withInterruptCleared(final Supplier<T> work)
    {
        final boolean interrupted = Thread.interrupted();
        try
        {
            return work.get();
        }
        finally
        {
            if (interrupted)
            {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * {@link #withInterruptCleared(Supplier)} for work that returns nothing (a close).
     *
     * @param work what to run.
     */
    public static void runWithInterruptCleared(final Runnable work)
    {
        withInterruptCleared(() ->
        {
            work.run();
            return null;
        });
    }

    private static <T> T call(final IoCall<T> call, final int maxAttempts) throws IOException
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
                    if (attempt >= maxAttempts)
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
