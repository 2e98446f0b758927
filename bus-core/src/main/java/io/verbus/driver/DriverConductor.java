package io.verbus.driver;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;

import java.util.ArrayDeque;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;
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

    /**
     * Unblock checks, retiring closed logs and lingering resources run at most this often: they act on timeouts of
     * milliseconds to seconds, and walking every log's frames on each duty cycle would cost an invoking application
     * thread (invoker mode) time on every poll.
     */
    static final long TIMER_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final System.Logger LOGGER = System.getLogger("io.verbus.Verbus");

    private final NanoClock nanoClock;
    private final long lingerTimeoutNs;
    private final long publicationUnblockTimeoutNs;
    private final AtomicCounter unblockedPublications;
    private final Consumer<NativeLog> retireHandler;
    private final ManyToOneConcurrentArrayQueue<Runnable> commandQueue =
        new ManyToOneConcurrentArrayQueue<>(COMMAND_QUEUE_CAPACITY);
    private final ArrayDeque<Lingering> lingering = new ArrayDeque<>();
    private long lastTimerCheckNs;
    private volatile NativeLog[] logs = new NativeLog[0];

    private record Lingering(long deadlineNs, AutoCloseable resource)
    {
    }

    /**
     * @param nanoClock                   for linger deadlines and the unblock timeout.
     * @param lingerTimeoutNs             how long closed things stay around.
     * @param publicationUnblockTimeoutNs how long a log's committed frames may stop short of its tail before the
     *                                    hole is padded (see {@link NativeLog#checkForBlockedPublisher}).
     * @param unblockedPublications       counts the holes padded.
     * @param retireHandler               called on the conductor thread when a closed log may go: its images become
     *                                    unavailable and its memory is handed to {@link #linger(AutoCloseable)}.
     */
    public DriverConductor(
        final NanoClock nanoClock,
        final long lingerTimeoutNs,
        final long publicationUnblockTimeoutNs,
        final AtomicCounter unblockedPublications,
        final Consumer<NativeLog> retireHandler)
    {
        this.nanoClock = nanoClock;
        this.lingerTimeoutNs = lingerTimeoutNs;
        this.publicationUnblockTimeoutNs = publicationUnblockTimeoutNs;
        this.unblockedPublications = unblockedPublications;
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
        if (nowNs - lastTimerCheckNs < TIMER_INTERVAL_NS)
        {
            return work;
        }
        lastTimerCheckNs = nowNs;
        for (final NativeLog log : logs)
        {
            final long unblockedPosition = log.checkForBlockedPublisher(nowNs, publicationUnblockTimeoutNs);
            if (unblockedPosition >= 0)
            {
                onUnblocked(log, unblockedPosition);
                work++;
            }
        }
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

    private void onUnblocked(final NativeLog log, final long position)
    {
        final int holes = log.lastUnblockCount();
        unblockedPublications.getAndAdd(holes);
        // One line per check: a log is checked again only a whole timeout later, so this cannot flood the log.
        if (io.verbus.log.LogUnblocker.REPAIRED == log.lastUnblockResult())
        {
            LOGGER.log(System.Logger.Level.ERROR, "publication log corrupt: " + log + " holds frames from " +
                "position " + position + " that no single writer writes (two threads offering on one " +
                "ExclusivePublication at once?); padded over " + holes + " stretches up to its tail, the last of " +
                log.lastRepairedBytes() + " bytes, the messages in them are lost. An ExclusivePublication takes " +
                "one thread at a time; use a Publication for several.");
            return;
        }
        LOGGER.log(System.Logger.Level.WARNING, "publication unblocked: " + log + " had space claimed but not " +
            "committed at position " + position + " for " + publicationUnblockTimeoutNs / 1_000_000 + " ms (a " +
            "BufferClaim neither committed nor aborted, or a writer that died mid-offer); padded over " +
            (1 == holes ? "it, that message is lost" : holes + " such holes, their messages are lost"));
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
