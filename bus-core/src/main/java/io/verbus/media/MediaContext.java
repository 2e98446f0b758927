package io.verbus.media;

import io.verbus.ThreadingMode;
import io.verbus.memory.MemoryMapper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

import java.nio.file.Path;

/**
 * The driver's services as a media sees them. Verbus fills one per Verbus instance; a media's own tests may build
 * one with the fluent setters. Counters allocated through {@link #countersManager()} appear in
 * {@code ./verbus stat}; use type ids from {@link io.verbus.counters.CounterTypes}'s media ranges. The counters
 * manager is not thread-safe: allocate and free inside {@code synchronized (countersManager)}. Verbus holds that
 * same monitor for all its own allocations and while it calls the factory and the {@link ImageSink}.
 */
public final class MediaContext
{
    private CountersManager countersManager;
    private ErrorHandler errorHandler;
    private AtomicCounter errorCounter;
    private NanoClock nanoClock;
    private NanoClock dutyCycleClock;
    private EpochNanoClock epochNanoClock;
    private MemoryMapper memoryMapper;
    private Path verbusDir;
    private String idleStrategyName;
    private ThreadingMode threadingMode;

    /** @return the driver's counters, in the shared counters file. */
    public CountersManager countersManager()
    {
        return countersManager;
    }

    /** @return this. */
    public MediaContext countersManager(final CountersManager countersManager)
    {
        this.countersManager = countersManager;
        return this;
    }

    /** @return where to report errors; Verbus logs and counts them. */
    public ErrorHandler errorHandler()
    {
        return errorHandler;
    }

    /** @return this. */
    public MediaContext errorHandler(final ErrorHandler errorHandler)
    {
        this.errorHandler = errorHandler;
        return this;
    }

    /** @return the driver's error counter (incremented by {@link #errorHandler()} already). */
    public AtomicCounter errorCounter()
    {
        return errorCounter;
    }

    /** @return this. */
    public MediaContext errorCounter(final AtomicCounter errorCounter)
    {
        this.errorCounter = errorCounter;
        return this;
    }

    /** @return a monotonic clock for timeouts. */
    public NanoClock nanoClock()
    {
        return nanoClock;
    }

    /** @return this. */
    public MediaContext nanoClock(final NanoClock nanoClock)
    {
        this.nanoClock = nanoClock;
        return this;
    }

    /**
     * The clock for work done inside the driver's duty cycle (a receiver's or sender agent's {@code doWork}): in
     * SHARED and INVOKER modes the time read once at the cycle's start, which stands still between cycles. Code that
     * also runs on other threads (a writer, a control thread) uses {@link #nanoClock()}.
     *
     * @return the duty-cycle clock, or {@link #nanoClock()} when none was set.
     */
    public NanoClock dutyCycleClock()
    {
        return null != dutyCycleClock ? dutyCycleClock : nanoClock;
    }

    /** @return this. */
    public MediaContext dutyCycleClock(final NanoClock dutyCycleClock)
    {
        this.dutyCycleClock = dutyCycleClock;
        return this;
    }

    /** @return a wall clock with nanosecond resolution, for heartbeats shown to people. */
    public EpochNanoClock epochNanoClock()
    {
        return epochNanoClock;
    }

    /** @return this. */
    public MediaContext epochNanoClock(final EpochNanoClock epochNanoClock)
    {
        this.epochNanoClock = epochNanoClock;
        return this;
    }

    /** @return the mapper for rings and other shared memory (huge pages when available). */
    public MemoryMapper memoryMapper()
    {
        return memoryMapper;
    }

    /** @return this. */
    public MediaContext memoryMapper(final MemoryMapper memoryMapper)
    {
        this.memoryMapper = memoryMapper;
        return this;
    }

    /** @return the Verbus dir: the counters file and mapped files live here. */
    public Path verbusDir()
    {
        return verbusDir;
    }

    /** @return this. */
    public MediaContext verbusDir(final Path verbusDir)
    {
        this.verbusDir = verbusDir;
        return this;
    }

    /** @return the idle strategy name the driver's agents use (see {@code io.verbus.driver.IdleStrategies}). */
    public String idleStrategyName()
    {
        return idleStrategyName;
    }

    /** @return this. */
    public MediaContext idleStrategyName(final String idleStrategyName)
    {
        this.idleStrategyName = idleStrategyName;
        return this;
    }

    /** @return how the driver's agents are threaded. */
    public ThreadingMode threadingMode()
    {
        return threadingMode;
    }

    /** @return this. */
    public MediaContext threadingMode(final ThreadingMode threadingMode)
    {
        this.threadingMode = threadingMode;
        return this;
    }
}
