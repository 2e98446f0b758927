package io.verbus.driver;

import org.agrona.concurrent.Agent;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Wraps an agent so that its thread pins itself to a CPU in {@code onStart}, and lets the launcher wait for the
 * outcome so a pinning failure surfaces from {@code Verbus.launch} rather than only in a log.
 */
public final class PinnedAgent implements Agent
{
    private final Agent delegate;
    private final int cpu;
    private final CountDownLatch started = new CountDownLatch(1);
    private volatile RuntimeException startFailure;

    /**
     * @param delegate the agent to run.
     * @param cpu      the CPU to pin to, or {@link Affinity#NO_CPU}.
     */
    public PinnedAgent(final Agent delegate, final int cpu)
    {
        this.delegate = delegate;
        this.cpu = cpu;
    }

    public void onStart()
    {
        try
        {
            if (Affinity.NO_CPU != cpu)
            {
                Affinity.pinCurrentThread(cpu);
            }
            delegate.onStart();
        }
        catch (final RuntimeException ex)
        {
            startFailure = ex;
            throw ex;
        }
        finally
        {
            started.countDown();
        }
    }

    public int doWork() throws Exception
    {
        return delegate.doWork();
    }

    public void onClose()
    {
        delegate.onClose();
    }

    public String roleName()
    {
        return delegate.roleName();
    }

    /** @return the CPU this agent's thread is pinned to, or -1. */
    public int cpu()
    {
        return cpu;
    }

    /**
     * Waits for {@code onStart} to finish on the agent's thread.
     *
     * @throws IllegalStateException with the cause when pinning or starting failed, or on timeout.
     */
    public void awaitStart(final long timeout, final TimeUnit unit)
    {
        try
        {
            if (!started.await(timeout, unit))
            {
                throw new IllegalStateException(roleName() + " did not start within " + timeout + " " + unit);
            }
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while starting " + roleName(), ex);
        }
        final RuntimeException failure = startFailure;
        if (null != failure)
        {
            throw new IllegalStateException(
                "could not start " + roleName() + " pinned to CPU " + cpu + ": " + failure.getMessage(), failure);
        }
    }
}
