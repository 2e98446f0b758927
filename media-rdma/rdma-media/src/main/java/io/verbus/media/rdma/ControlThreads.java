package io.verbus.media.rdma;

import io.verbus.common.BoundedWait;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Waiting on control threads (never the data path): sleeping, polling for a condition, joining a thread and
 * closing a socket. An interrupt ends a sleep early and stays set for the caller, whose loop checks its own
 * {@code running} flag; a close that fails is over anyway. Waiting for a condition or for a thread to end is not cut
 * short by an interrupt (the interrupt stays set for after): those waits are how a close on the application's thread
 * knows the control threads are done with what it frees next. With an interrupted closing thread they returned at
 * once, the close freed the shm device while a control thread still released its peers ("Already closed" in 6 of 20
 * closes), and the wait each is bounded by its timeout anyway.
 */
final class ControlThreads
{
    /** How long a control thread waits for the owner (sender or receiver) to let go of a connection it closes. */
    static final long RETIRE_WAIT_MS = TimeUnit.SECONDS.toMillis(10);
    /** How long a close waits for each control thread to end. */
    static final long CLOSE_JOIN_MS = TimeUnit.SECONDS.toMillis(15);

    private ControlThreads()
    {
    }

    static void sleep(final long ms)
    {
        try
        {
            Thread.sleep(ms);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Polls {@code condition} every millisecond until it holds or {@code timeoutMs} passed (see {@link BoundedWait}).
     *
     * @return whether it holds.
     */
    static boolean await(final BooleanSupplier condition, final long timeoutMs)
    {
        return BoundedWait.poll(condition, TimeUnit.MILLISECONDS.toNanos(timeoutMs));
    }

    /** Joins {@code thread} for up to {@code timeoutMs}, an interrupt notwithstanding (see {@link BoundedWait}). */
    static void join(final Thread thread, final long timeoutMs)
    {
        BoundedWait.join(thread, TimeUnit.MILLISECONDS.toNanos(timeoutMs));
    }

    static void closeQuietly(final Closeable closeable)
    {
        try
        {
            closeable.close();
        }
        catch (final IOException ignore)
        {
            // closing anyway
        }
    }
}
