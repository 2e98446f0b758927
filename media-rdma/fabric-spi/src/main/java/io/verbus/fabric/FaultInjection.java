package io.verbus.fabric;

import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

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
    private volatile double crossWriteFraction;
    private volatile long crossWriteHoldNs;
    private SplittableRandom crossWriteRandom = new SplittableRandom(0);
    private final AtomicLong crossWriteReorders = new AtomicLong();
    private volatile long operationDelayNs;
    private volatile long maxMessageLength;
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
     * Place WRITEs of one QP out of order <em>across</em> WRITEs, as a fabric with adaptive routing or relaxed
     * ordering may: for the chosen fraction of plain WRITEs that have a next WRITE (or WRITE_WITH_IMM) of the same QP
     * already at hand, the next one's bytes are placed first, then, {@code holdNs} later, this one's. Completions and
     * immediate data stay in order: a WRITE_WITH_IMM's receive completion is produced only after every earlier WRITE of
     * the QP is placed. So a reader that polls a counter written by the last plain WRITE can see the counter before the
     * data; one that waits for the WRITE_WITH_IMM's completion cannot.
     *
     * @param fraction of plain WRITEs delayed, in [0, 1]; 0 turns the fault off.
     * @param seed     of the choice, so a run can be repeated.
     * @param holdNs   how long the delayed WRITE stays unplaced after the later one is visible.
     * @return this.
     */
    public synchronized FaultInjection crossWritePlacement(final double fraction, final long seed, final long holdNs)
    {
        if (!(fraction >= 0 && fraction <= 1) || holdNs < 0)
        {
            throw new IllegalArgumentException(
                "fraction must be in [0, 1] and holdNs >= 0: " + fraction + ", " + holdNs);
        }
        crossWriteRandom = new SplittableRandom(seed);
        crossWriteHoldNs = holdNs;
        crossWriteFraction = fraction;
        return this;
    }

    /**
     * @return the fraction of plain WRITEs placed after the next WRITE, 0 when off.
     */
    public double crossWriteFraction()
    {
        return crossWriteFraction;
    }

    /**
     * @return how long a delayed WRITE stays unplaced after the later one, in nanoseconds.
     */
    public long crossWriteHoldNs()
    {
        return crossWriteHoldNs;
    }

    /**
     * The provider asks, for a plain WRITE with a next WRITE at hand: delay this one?
     *
     * @return true if it must be placed after the next one (counted in {@link #crossWriteReorders()}).
     */
    public boolean delayThisWrite()
    {
        final double fraction = crossWriteFraction;
        if (fraction <= 0)
        {
            return false;
        }
        final boolean delay;
        synchronized (this)
        {
            delay = crossWriteRandom.nextDouble() < fraction;
        }
        if (delay)
        {
            crossWriteReorders.incrementAndGet();
        }
        return delay;
    }

    /**
     * @return how many WRITEs were placed after a later one so far.
     */
    public long crossWriteReorders()
    {
        return crossWriteReorders.get();
    }

    /**
     * A device opened after this call advertises (and enforces) this largest WR payload instead of its own, as
     * hardware with a small {@code max_msg_sz} would: so a test can make the sender cut its chains with a few frames'
     * worth of backlog instead of hundreds of MiB. shm only.
     *
     * @param length largest payload of one WR in bytes; 0 = the device's own.
     * @return this.
     */
    public FaultInjection maxMessageLength(final long length)
    {
        if (length < 0)
        {
            throw new IllegalArgumentException("maxMessageLength must be >= 0: " + length);
        }
        this.maxMessageLength = length;
        return this;
    }

    /** @return the largest WR payload devices opened from now on advertise; 0 = their own. */
    public long maxMessageLength()
    {
        return maxMessageLength;
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
