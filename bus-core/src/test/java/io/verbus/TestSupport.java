package io.verbus;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.junit.jupiter.api.Assertions.fail;

/**
 * Shared helpers: contexts that never busy-spin (the machine has 2 cores shared by several builds), and waits
 * bounded by both time and iteration count.
 */
public final class TestSupport
{
    public static final long DEFAULT_TIMEOUT_MS = 30_000;

    private TestSupport()
    {
    }

    /** A context in a private dir with sleeping agents, on one shared driver thread. */
    public static Verbus.Context context(final Path dir)
    {
        return new Verbus.Context()
            .dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping")
            .termLength(64 * 1024)
            .lingerTimeoutNs(TimeUnit.MILLISECONDS.toNanos(200));
    }

    /**
     * Runs {@code step} until {@code condition} holds, sleeping a little between tries; fails after the timeout or
     * after a bounded number of tries.
     */
    public static void await(final String what, final BooleanSupplier condition, final Runnable step)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(DEFAULT_TIMEOUT_MS);
        for (long i = 0; i < 10_000_000L; i++)
        {
            if (condition.getAsBoolean())
            {
                return;
            }
            step.run();
            if (System.nanoTime() > deadlineNs)
            {
                break;
            }
            if ((i & 15) == 15)
            {
                sleep(1);
            }
            else
            {
                Thread.yield();
            }
        }
        fail("timed out waiting for " + what);
    }

    public static void await(final String what, final BooleanSupplier condition)
    {
        await(what, condition, () -> {});
    }

    public static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
            throw new IllegalStateException(ex);
        }
    }
}
