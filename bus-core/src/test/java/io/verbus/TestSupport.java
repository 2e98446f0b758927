package io.verbus;

import java.nio.file.Path;
import java.util.concurrent.CompletableFuture;
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

    /**
     * @return the command line of a child JVM with this JVM's module flags and class path, running {@code mainClass}.
     */
    public static java.util.List<String> childJava(final Class<?> mainClass, final String... args)
    {
        final java.util.List<String> command = new java.util.ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String argument : java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (argument.startsWith("--add-") || argument.startsWith("--enable-native-access") ||
                argument.startsWith("--sun-misc"))
            {
                command.add(argument);
            }
        }
        command.add("-Xmx128m");
        command.add("-XX:-CreateCoredumpOnCrash");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(mainClass.getName());
        command.addAll(java.util.List.of(args));
        return command;
    }

    /** Runs a child JVM to completion (bounded) and returns its exit code and merged output. */
    public static ChildResult runChild(final java.util.List<String> command, final long timeoutMs) throws Exception
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final CompletableFuture<String> output = CompletableFuture.supplyAsync(
            () ->
            {
                try
                {
                    return new String(process.getInputStream().readAllBytes());
                }
                catch (final java.io.IOException ex)
                {
                    return ex.toString();
                }
            });
        if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
        {
            process.destroyForcibly().waitFor(10, TimeUnit.SECONDS);
            return new ChildResult(-1, output.get(10, TimeUnit.SECONDS) + "\n(timed out)");
        }
        return new ChildResult(process.exitValue(), output.get(10, TimeUnit.SECONDS));
    }

    /** Exit code and output of a child JVM. */
    public record ChildResult(int exitCode, String output)
    {
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
