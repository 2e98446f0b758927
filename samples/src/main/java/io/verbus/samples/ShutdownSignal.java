package io.verbus.samples;

import java.util.concurrent.TimeUnit;

/**
 * Runs an action when the JVM is asked to stop (Ctrl-C, SIGTERM), then gives the thread that registered it a few
 * seconds to finish, so a sample that loops until stopped leaves its loop and closes its Verbus (publications,
 * subscriptions, the counters file) before the JVM exits. The samples' counterpart of Agrona's {@code SigInt}.
 */
public final class ShutdownSignal
{
    /** How long the JVM waits for the sample to close after the signal. */
    public static final long GRACE_MS = TimeUnit.SECONDS.toMillis(5);

    private ShutdownSignal()
    {
    }

    /**
     * @param action to run on the signal, typically {@code () -> running.set(false)}.
     */
    public static void register(final Runnable action)
    {
        final Thread sample = Thread.currentThread();
        Runtime.getRuntime().addShutdownHook(new Thread(() ->
        {
            action.run();
            try
            {
                sample.join(GRACE_MS);
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
            }
        }, "sample-shutdown"));
    }
}
