package io.verbus.driver;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.function.Consumer;

/**
 * The driver's housekeeping agent: flow control and term cleaning for native logs, retirement of closed logs once
 * their subscribers drained (or the linger passed), and unmapping of retired resources after a linger so that no
 * reader mid-poll touches unmapped memory.
 */
public final class DriverConductor implements Agent
{
    /** Capacity of the command queue. */
    public static final int COMMAND_QUEUE_CAPACITY = 1024;

    private final NanoClock nanoClock;
    private final long lingerTimeoutNs;
    private final Consumer<NativeLog> retireHandler;
    private final ManyToOneConcurrentArrayQueue<Runnable> commandQueue =
        new ManyToOneConcurrentArrayQueue<>(COMMAND_QUEUE_CAPACITY);
    private final ArrayDeque<Lingering> lingering = new ArrayDeque<>();
    private volatile NativeLog[] logs = new NativeLog[0];

    private record Lingering(long deadlineNs, AutoCloseable resource)
    {
    }

    /**
     * @param nanoClock       for linger deadlines.
     * @param lingerTimeoutNs how long closed things stay around.
     * @param retireHandler   called on the conductor thread when a closed log may go: its images become
     *                        unavailable and its memory is handed to {@link #linger(AutoCloseable)}.
     */
    public DriverConductor(
        final NanoClock nanoClock, final long lingerTimeoutNs, final Consumer<NativeLog> retireHandler)
    {
        this.nanoClock = nanoClock;
        this.lingerTimeoutNs = lingerTimeoutNs;
        this.retireHandler = retireHandler;
    }

    public String roleName()
    {
        return "verbus-conductor";
    }

    public int doWork()
    {
        int work = 0;
        Runnable command;
        while (null != (command = commandQueue.poll()))
        {
            command.run();
            work++;
        }

        final NativeLog[] logs = this.logs;
        for (final NativeLog log : logs)
        {
            work += log.conductorDuty();
        }

        final long nowNs = nanoClock.nanoTime();
        for (final NativeLog log : logs)
        {
            if (log.isClosed() && (log.isDrained() || nowNs - log.closedTimeNs() >= lingerTimeoutNs))
            {
                removeLog(log);
                retireHandler.accept(log);
                work++;
            }
        }

        while (!lingering.isEmpty() && nowNs - lingering.peekFirst().deadlineNs() >= 0)
        {
            closeQuietly(lingering.pollFirst().resource());
            work++;
        }

        return work;
    }

    public void onClose()
    {
        while (!lingering.isEmpty())
        {
            closeQuietly(lingering.pollFirst().resource());
        }
    }

    /** Adds a log to the duty cycle. Thread-safe. */
    public synchronized void addLog(final NativeLog log)
    {
        final NativeLog[] old = logs;
        final NativeLog[] updated = Arrays.copyOf(old, old.length + 1);
        updated[old.length] = log;
        logs = updated;
    }

    /** Removes a log from the duty cycle. Thread-safe. */
    public synchronized void removeLog(final NativeLog log)
    {
        logs = Arrays.stream(logs).filter(l -> l != log).toArray(NativeLog[]::new);
    }

    /** @return the logs in the duty cycle. */
    public NativeLog[] logs()
    {
        return logs;
    }

    /**
     * Runs a command on the conductor thread.
     *
     * @return false when the queue is full.
     */
    public boolean offer(final Runnable command)
    {
        return commandQueue.offer(command);
    }

    /**
     * Closes a resource after the linger timeout. Call on the conductor thread.
     */
    public void linger(final AutoCloseable resource)
    {
        lingering.addLast(new Lingering(nanoClock.nanoTime() + lingerTimeoutNs, resource));
    }

    /** @return how many resources wait to be closed. */
    public int lingeringCount()
    {
        return lingering.size();
    }

    private static void closeQuietly(final AutoCloseable resource)
    {
        try
        {
            resource.close();
        }
        catch (final Exception ignore)
        {
            // Closing retired memory cannot usefully fail; nothing else depends on it.
        }
    }
}
