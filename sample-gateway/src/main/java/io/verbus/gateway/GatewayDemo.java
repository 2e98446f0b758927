package io.verbus.gateway;

import java.io.PrintStream;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

/**
 * {@code ./verbus demo}: runs the trading gateway with the embedded driver and prints the tick-to-trade report.
 * Exit codes: 0 done and every request answered once, 1 a check failed or the run broke, 2 bad flags.
 * Ctrl-C ends the run early through a shutdown hook that stops the agents, closes Verbus and lets the report print.
 */
public final class GatewayDemo
{
    private static final long SHUTDOWN_GRACE_MS = TimeUnit.SECONDS.toMillis(10);

    private GatewayDemo()
    {
    }

    /**
     * @param args flags, see {@link GatewayConfig#usage()}.
     */
    public static void main(final String[] args)
    {
        final GatewayConfig config;
        try
        {
            config = GatewayConfig.parse(args);
        }
        catch (final IllegalArgumentException ex)
        {
            System.err.println("gateway: " + ex.getMessage());
            System.err.println("Run with --help for the flags.");
            System.exit(2);
            return;
        }
        if (config.help())
        {
            System.out.print(GatewayConfig.usage());
            return;
        }

        final int exitCode = runWithShutdownHook(config, System.out);
        if (exitCode != 0)
        {
            System.exit(exitCode);
        }
    }

    static int runWithShutdownHook(final GatewayConfig config, final PrintStream out)
    {
        final AtomicBoolean stopRequested = new AtomicBoolean();
        final AtomicBoolean hookRan = new AtomicBoolean();
        final AtomicReference<Gateway> gateway = new AtomicReference<>();
        final CountDownLatch finished = new CountDownLatch(1);
        final Thread hook = new Thread(() ->
        {
            hookRan.set(true);
            stopRequested.set(true);
            try
            {
                if (!finished.await(SHUTDOWN_GRACE_MS, TimeUnit.MILLISECONDS) && null != gateway.get())
                {
                    // The run did not wind down in time: stop the agents and close Verbus from here.
                    gateway.get().close();
                }
            }
            catch (final InterruptedException ignore)
            {
                Thread.currentThread().interrupt();
            }
        }, "gateway-shutdown");
        Runtime.getRuntime().addShutdownHook(hook);

        int exitCode;
        try
        {
            final GatewayRun.Result result = config.launchesProcesses() ?
                SeparateProcesses.run(config, out, stopRequested, gateway) :
                GatewayRun.run(config, out, stopRequested, gateway);
            final boolean measuring = null != result.filesDirectory();
            if (measuring && result.ordersSent() == 0 && !result.interrupted())
            {
                out.println("gateway: no order was sent, nothing was measured: is the other side of every channel " +
                    "running and reachable?");
            }
            exitCode = !measuring ||
                (result.everyRequestAnsweredOnce() && (result.ordersSent() > 0 || result.interrupted())) ? 0 : 1;
        }
        catch (final Exception ex)
        {
            out.println("gateway: run failed: " + ex);
            ex.printStackTrace(out);
            exitCode = 1;
        }
        finally
        {
            finished.countDown();
        }

        if (!hookRan.get())
        {
            try
            {
                Runtime.getRuntime().removeShutdownHook(hook);
            }
            catch (final IllegalStateException shutdownInProgress)
            {
                // the JVM is exiting already; the hook sees finished and returns
            }
        }
        out.flush();
        return hookRan.get() ? 0 : exitCode;
    }
}
