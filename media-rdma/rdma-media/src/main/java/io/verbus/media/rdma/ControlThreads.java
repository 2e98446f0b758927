package io.verbus.media.rdma;

import java.io.Closeable;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Waiting on control threads (never the data path): sleeping, polling for a condition, joining a thread and
 * closing a socket. An interrupt ends the wait early and stays set for the caller, whose loop checks its own
 * {@code running} flag; a close that fails is over anyway.
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
     * Polls {@code condition} every millisecond until it holds or {@code timeoutMs} passed.
     *
     * @return whether it holds.
     */
    static boolean await(final BooleanSupplier condition, final long timeoutMs)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean() && System.nanoTime() < deadlineNs)
        {
            sleep(1);
        }
        return condition.getAsBoolean();
    }

    static void join(final Thread thread, final long timeoutMs)
    {
        try
        {
            thread.join(timeoutMs);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
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
