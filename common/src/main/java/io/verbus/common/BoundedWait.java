package io.verbus.common;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * A wait that lasts until its condition holds or its bound passes, whatever the calling thread's interrupt status.
 * <p>
 * Why: these are the waits a close makes for another thread to be done with what the close frees next (a control
 * thread, a NIC thread's last pass over a QP). On a thread whose interrupt flag was set (an executor shutting down,
 * a cancelled task) the JDK's waits return at once, and the close then freed memory or counters that the other
 * thread still used. The bound keeps such a wait from ever hanging a close; an interrupt that arrives meanwhile is
 * not consumed, it is set again when the wait ends.
 */
public final class BoundedWait
{
    /**
     * One timed wait step of the JDK's ({@code Thread.join}, {@code CountDownLatch.await}, {@code Thread.sleep}).
     */
    @FunctionalInterface
    public interface Step
    {
        /**
         * @param remainingNs time left before the bound, > 0.
         * @throws InterruptedException when the thread is interrupted: the wait goes on.
         */
        void await(long remainingNs) throws InterruptedException;
    }

    private BoundedWait()
    {
    }

    /**
     * Run {@code step} until {@code done} holds or {@code timeoutNs} passed.
     *
     * @param done      the condition waited for.
     * @param timeoutNs the bound.
     * @param step      one timed wait, ended early by whatever makes {@code done} hold, if it can be.
     * @return whether {@code done} holds at the end.
     */
    public static boolean until(final BooleanSupplier done, final long timeoutNs, final Step step)
    {
        final long deadlineNs = System.nanoTime() + timeoutNs;
        boolean interrupted = false;
        long remainingNs;
        while (!done.getAsBoolean() && (remainingNs = deadlineNs - System.nanoTime()) > 0)
        {
            try
            {
                step.await(remainingNs);
            }
            catch (final InterruptedException ex)
            {
                interrupted = true;
            }
        }
        if (interrupted)
        {
            Thread.currentThread().interrupt();
        }
        return done.getAsBoolean();
    }

    /**
     * Wait for {@code thread} to end, for up to {@code timeoutNs}.
     *
     * @return true when it ended.
     */
    public static boolean join(final Thread thread, final long timeoutNs)
    {
        return until(() -> !thread.isAlive(), timeoutNs,
            (remainingNs) -> thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(remainingNs))));
    }

    /**
     * Wait for {@code latch} to reach zero, for up to {@code timeoutNs}.
     *
     * @return true when it did.
     */
    public static boolean await(final CountDownLatch latch, final long timeoutNs)
    {
        return until(() -> 0 == latch.getCount(), timeoutNs,
            (remainingNs) -> latch.await(remainingNs, TimeUnit.NANOSECONDS));
    }

    /**
     * Poll {@code condition} every millisecond until it holds, for up to {@code timeoutNs}.
     *
     * @return whether it holds.
     */
    public static boolean poll(final BooleanSupplier condition, final long timeoutNs)
    {
        return until(condition, timeoutNs, (remainingNs) -> Thread.sleep(1));
    }
}
