package io.verbus.common;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BoundedWaitTest
{
    private static final long OTHER_THREAD_MS = 200;
    private static final long BOUND_NS = TimeUnit.SECONDS.toNanos(10);

    @AfterEach
    void clearInterrupt()
    {
        Thread.interrupted(); // JUnit runs the next test on this thread
    }

    @Test
    void joinOnAnInterruptedThreadWaitsForTheThreadToEndAndKeepsTheInterrupt() throws Exception
    {
        final AtomicBoolean finished = new AtomicBoolean();
        final Thread other = new Thread(() ->
        {
            sleepQuietly(OTHER_THREAD_MS);
            finished.set(true);
        });
        other.start();
        Thread.currentThread().interrupt();

        assertTrue(BoundedWait.join(other, BOUND_NS));

        assertTrue(finished.get(), "the join returned before the thread ended");
        assertTrue(Thread.currentThread().isInterrupted(), "the interrupt was consumed");
    }

    @Test
    void latchWaitOnAnInterruptedThreadLastsUntilTheCountDown()
    {
        final CountDownLatch latch = new CountDownLatch(1);
        final AtomicBoolean countedDown = new AtomicBoolean();
        final Thread other = new Thread(() ->
        {
            sleepQuietly(OTHER_THREAD_MS);
            countedDown.set(true);
            latch.countDown();
        });
        other.start();
        Thread.currentThread().interrupt();

        assertTrue(BoundedWait.await(latch, BOUND_NS));

        assertTrue(countedDown.get());
        assertTrue(Thread.currentThread().isInterrupted());
    }

    @Test
    void anInterruptArrivingDuringThePollDoesNotEndItAndIsSetAfter() throws Exception
    {
        final Thread waiter = Thread.currentThread();
        final AtomicBoolean condition = new AtomicBoolean();
        final Thread other = new Thread(() ->
        {
            sleepQuietly(OTHER_THREAD_MS / 2);
            waiter.interrupt();
            sleepQuietly(OTHER_THREAD_MS / 2);
            condition.set(true);
        });
        other.start();

        assertTrue(BoundedWait.poll(condition::get, BOUND_NS));

        assertTrue(Thread.currentThread().isInterrupted());
        other.join();
    }

    @Test
    void theBoundEndsAWaitWhoseConditionNeverHolds()
    {
        Thread.currentThread().interrupt();
        final long startNs = System.nanoTime();

        assertFalse(BoundedWait.poll(() -> false, TimeUnit.MILLISECONDS.toNanos(50)));

        assertTrue(System.nanoTime() - startNs >= TimeUnit.MILLISECONDS.toNanos(50));
        assertTrue(Thread.currentThread().isInterrupted());
    }

    private static void sleepQuietly(final long ms)
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
}
