package io.verbus.bench.contender;

import io.verbus.bench.Ponger;
import io.verbus.bench.StreamSubscriber;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * The far end of a cross-process contender: a child JVM running {@link EchoProcessMain} (the echoing or counting
 * end, pinned to the ponger's CPU). The harness's own ponger / subscriber thread only watches it: it sleeps between
 * looks, so the two spinning threads on the machine are the pinger here and the child's loop, as in production.
 * The child ends when its standard input closes, so it never outlives the harness.
 */
final class RemoteEnd implements AutoCloseable
{
    /**
     * How long the watching thread sleeps between looks at the child. It runs on the ponger's CPU, where the child's
     * echoing thread spins: each wake-up takes that CPU from the echo for a moment (every 200 us, as it was, cost the
     * two-process rows their tail, and in the Soft-RoCE guest a futex round per wake-up), and a dead child needs no
     * faster notice than this (the pinger's stall timeout is seconds).
     */
    private static final long WATCH_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(100);
    private static final long EXIT_WAIT_MS = 5_000;

    private final Process process;
    private final Path log;

    private RemoteEnd(final Process process, final Path log)
    {
        this.process = process;
        this.log = log;
    }

    /**
     * Starts the child with this JVM's flags and class path.
     *
     * @param log  where its output goes.
     * @param args for {@link EchoProcessMain}.
     */
    static RemoteEnd start(final Path log, final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        for (final String jvmArg : ManagementFactory.getRuntimeMXBean().getInputArguments())
        {
            if (!jvmArg.startsWith("-agentlib") && !jvmArg.startsWith("-javaagent"))
            {
                command.add(jvmArg);
            }
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(EchoProcessMain.class.getName());
        command.addAll(List.of(args));
        final Process process = new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
        return new RemoteEnd(process, log);
    }

    /** @throws IllegalStateException when the child has exited. */
    void checkAlive()
    {
        if (!process.isAlive())
        {
            throw new IllegalStateException("the child process exited with " + process.exitValue() + " (log " +
                log + ")");
        }
    }

    /** A ponger that only watches the child, which echoes in its own process. */
    Ponger watchingPonger()
    {
        return () ->
        {
            checkAlive();
            LockSupport.parkNanos(WATCH_INTERVAL_NS);
            return 0;
        };
    }

    /**
     * A subscriber that reads the child's running count of received messages, which the child offers as 8-byte
     * messages on the back stream about once a millisecond (so the last receipt time is late by up to that).
     *
     * @param poller polls the back stream, handing each count message to the consumer.
     */
    StreamSubscriber countingSubscriber(final CountPoller poller)
    {
        return new StreamSubscriber()
        {
            private long reported;
            private long seen;

            @Override
            public int poll(final int length)
            {
                poller.poll((buffer, offset) -> reported = Math.max(reported, buffer.getLong(offset)));
                final long delta = reported - seen;
                seen = reported;
                if (0 == delta)
                {
                    checkAlive();
                    LockSupport.parkNanos(WATCH_INTERVAL_NS);
                }
                return (int)delta;
            }
        };
    }

    /** Polls the back stream of counts. */
    @FunctionalInterface
    interface CountPoller
    {
        void poll(CountConsumer consumer);
    }

    /** Takes one count message. */
    @FunctionalInterface
    interface CountConsumer
    {
        void onCount(DirectBuffer buffer, int offset);
    }

    /** @return a direct buffer for one count message. */
    static UnsafeBuffer countBuffer()
    {
        return new UnsafeBuffer(ByteBuffer.allocateDirect(Long.BYTES));
    }

    @Override
    public void close()
    {
        try
        {
            process.getOutputStream().close(); // the child's stdin: it exits on end of input
            if (!process.waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS))
            {
                process.destroyForcibly().waitFor(EXIT_WAIT_MS, TimeUnit.MILLISECONDS);
            }
        }
        catch (final IOException | InterruptedException ex)
        {
            process.destroyForcibly();
        }
    }
}
