package io.verbus.fabric;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * Test-only faults for the soft providers (shm, tcp): what a real fabric may do that a well-behaved soft
 * one never would. Set on a {@link FabricContext}; the devices opened from it consult it while running, so
 * a test may change it at any time. The verbs provider ignores it.
 */
public final class FaultInjection
{
    /**
     * Order in which the bytes of one WRITE are placed in the target memory. RDMA promises no order within
     * one WRITE, only between WRITEs, so a correct protocol passes with any of these.
     */
    public enum WritePlacement
    {
        /** Front to back, one bulk copy. */
        IN_ORDER,
        /** Back to front, byte by byte. */
        REVERSE,
        /** 8-byte chunks in a pseudo-random order. */
        SHUFFLED
    }

    private volatile WritePlacement writePlacement = WritePlacement.IN_ORDER;
    private volatile long operationDelayNs;
    private volatile boolean killed;
    private final AtomicInteger connectionDrops = new AtomicInteger();

    /**
     * @param placement byte placement order for every WRITE from now on.
     * @return this.
     */
    public FaultInjection writePlacement(final WritePlacement placement)
    {
        this.writePlacement = placement;
        return this;
    }

    /**
     * @return byte placement order of WRITEs.
     */
    public WritePlacement writePlacement()
    {
        return writePlacement;
    }

    /**
     * @param delay    how long the device holds each operation before executing it (0 = none).
     * @param timeUnit unit of delay.
     * @return this.
     */
    public FaultInjection operationDelay(final long delay, final TimeUnit timeUnit)
    {
        this.operationDelayNs = timeUnit.toNanos(delay);
        return this;
    }

    /**
     * @return the delay applied to each operation, in nanoseconds.
     */
    public long operationDelayNs()
    {
        return operationDelayNs;
    }

    /**
     * Make the devices using this behave as if their process died: no heartbeat, no responses, no
     * execution. Peers detect it within their liveness or retry timeout. Irreversible.
     *
     * @return this.
     */
    public FaultInjection kill()
    {
        killed = true;
        return this;
    }

    /**
     * @return true once {@link #kill()} was called.
     */
    public boolean isKilled()
    {
        return killed;
    }

    /**
     * Ask the tcp devices to drop every connection they hold now (once).
     *
     * @return this.
     */
    public FaultInjection dropConnections()
    {
        connectionDrops.incrementAndGet();
        return this;
    }

    /**
     * @return how many times {@link #dropConnections()} was called; devices act when it changes.
     */
    public int connectionDropCount()
    {
        return connectionDrops.get();
    }
}
