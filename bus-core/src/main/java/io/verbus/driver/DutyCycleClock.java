package io.verbus.driver;

import org.agrona.concurrent.Agent;
import org.agrona.concurrent.CachedNanoClock;
import org.agrona.concurrent.NanoClock;

/**
 * The time at the start of the current duty cycle, for the agents one thread runs as a composite (SHARED and INVOKER
 * modes): this agent goes first, reads the clock once, and the agents after it read {@link #clock()}.
 * <p>
 * Why: on a VM a clock read costs tens of nanoseconds (kvm-clock here), and an idle {@code invoke()} used to read it
 * once per agent, about half of what the call cost (JMH {@code RdmaHopBenchmark.invokeIdle}). An application loop
 * that calls {@code invoke()} between polls pays that on every pass, and a message that arrives meanwhile waits for it.
 * <p>
 * Only duty-cycle work may read it. Between two {@code invoke()} calls it stands still, so what runs on another
 * thread (a writer reading credits, a control thread's handshake, a client closing a log) keeps the source clock:
 * a stale time stamped there could later look like a silent peer.
 */
public final class DutyCycleClock implements Agent
{
    private final NanoClock source;
    private final CachedNanoClock cached = new CachedNanoClock();

    /**
     * @param source the clock read once per duty cycle.
     */
    public DutyCycleClock(final NanoClock source)
    {
        this.source = source;
        cached.update(source.nanoTime());
    }

    /**
     * @return the time this agent last read: the start of the current duty cycle.
     */
    public NanoClock clock()
    {
        return cached;
    }

    public int doWork()
    {
        cached.update(source.nanoTime());
        return 0;
    }

    public String roleName()
    {
        return "verbus-duty-cycle-clock";
    }
}
