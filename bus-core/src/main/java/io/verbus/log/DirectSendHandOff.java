package io.verbus.log;

import io.verbus.common.VarHandles;
import io.verbus.media.MediaSender;
import org.agrona.concurrent.NanoClock;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;

/**
 * Lets a direct-mode media sender be driven by the exclusive publication's writer while it writes, and by the
 * driver's sender agent while the writer is idle, so an idle publication still heartbeats, admits new subscribers,
 * reads their status and drops dead ones without any call from the writer.
 * <p>
 * Why a hand-off rather than heartbeats from another thread: liveness is not only the heartbeat. Admitting a
 * subscriber, reading status slots, updating the publisher limit, reaping completions and evicting dead peers are
 * all duty-cycle work on the one thread that owns the sender (and its QPs). Running that whole duty cycle on the
 * agent while the writer is idle keeps every media's behaviour identical to the non-direct case, with no second
 * code path inside the media.
 * <p>
 * Ownership is one int: FREE, WRITER, AGENT or CLOSED. The writer takes it with an uncontended compare-and-set
 * around each send and releases it with a release store: no lock (neither side ever waits for the other), no
 * allocation, no system call. The agent steps in only once it has seen the writer's activity count unchanged for
 * {@link #WRITER_IDLE_BEFORE_AGENT_NS}, so the two rarely meet. When they do meet, the writer does not wait: it
 * raises {@code pending} and retries once; the agent, after releasing, sees {@code pending} and runs another duty
 * cycle, so data the writer appended is sent within the agent's cycle, never left behind. (Each side writes its
 * own flag before reading the other's, with volatile semantics, so at least one of them sees the other.)
 * <p>
 * Every transfer of ownership is a release/acquire pair on {@code owner}, so the sender's plain fields are seen
 * consistently by whichever thread holds it: one thread at a time owns the sender and its QPs.
 * <p>
 * The writer's send is {@link MediaSender#sendNow()}: post what was appended, nothing else. The rest of the duty
 * cycle (status slots, limits, completions, liveness, new subscribers) runs on a cadence: while the writer is
 * active the agent raises {@code dutyDue} every {@link #WRITER_DUTY_INTERVAL_NS}, and the writer's next send runs
 * one full {@link MediaSender#doWork()} after posting. So the writer's hot path reads no clock, and a writer that
 * never pauses still heartbeats, reads credits and admits subscribers.
 * <p>
 * A send can leave committed data behind: the send queue is full because the NIC (or the tcp provider's socket) is
 * behind, a {@code commit=imm} subscriber has no receive posted, a post was cut short. Whoever owned the sender then
 * raises {@code unsent} before releasing it ({@link MediaSender#hasUnsentData()}), and the agent drives the sender
 * from its next call on, as it does for {@code pending}, until a cycle leaves nothing behind. Without it the end of a
 * burst waited for the writer's next call or for the idle threshold: 1-10 ms after a 20,000-message burst on tcp.
 */
public final class DirectSendHandOff implements MediaSender
{
    /** The agent waits this long after the writer's last send before driving the sender itself. */
    public static final long WRITER_IDLE_BEFORE_AGENT_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /** While the writer is active, the agent asks it for a full duty cycle at most this often. */
    public static final long WRITER_DUTY_INTERVAL_NS = TimeUnit.MICROSECONDS.toNanos(100);
    /** Bound on back-to-back agent duty cycles caused by a writer that met the agent. */
    private static final int MAX_AGENT_CYCLES_PER_CALL = 4;

    static final int FREE = 0;
    static final int WRITER = 1;
    static final int AGENT = 2;
    static final int CLOSED = 3;

    private static final VarHandle OWNER = VarHandles.field(MethodHandles.lookup(), "owner", int.class);
    private static final VarHandle PENDING = VarHandles.field(MethodHandles.lookup(), "pending", boolean.class);
    private static final VarHandle WRITER_SENDS = VarHandles.field(MethodHandles.lookup(), "writerSends", long.class);
    private static final VarHandle DUTY_DUE = VarHandles.field(MethodHandles.lookup(), "dutyDue", boolean.class);
    private static final VarHandle UNSENT = VarHandles.field(MethodHandles.lookup(), "unsent", boolean.class);

    private final MediaSender sender;
    private final NanoClock clock;

    @SuppressWarnings("unused") private int owner = FREE;
    @SuppressWarnings("unused") private boolean pending;
    @SuppressWarnings("unused") private long writerSends;
    @SuppressWarnings("unused") private boolean dutyDue;
    @SuppressWarnings("unused") private boolean unsent;

    // Agent-thread state.
    private long seenWriterSends = -1;
    private long seenAtNs;
    private long dutyRequestedAtNs;
    private volatile long agentCycles;

    /**
     * @param sender the media sender the writer sends with directly.
     * @param clock  the driver's clock, read by the agent to tell an idle writer.
     */
    public DirectSendHandOff(final MediaSender sender, final NanoClock clock)
    {
        this.sender = sender;
        this.clock = clock;
    }

    /** @return the media sender handed between the writer and the agent. */
    public MediaSender sender()
    {
        return sender;
    }

    /**
     * Writer thread: send what the log holds, now; then, when the agent has asked for it, one full duty cycle.
     *
     * @return work done; 0 when the agent holds the sender (it then sends the new data in its cycle).
     */
    public int writerSendNow()
    {
        if (!acquireForWriter())
        {
            return 0;
        }
        try
        {
            int work = sender.sendNow();
            if ((boolean)DUTY_DUE.getAcquire(this))
            {
                DUTY_DUE.setRelease(this, false);
                work += sender.doWork();
            }
            markUnsent();
            return work;
        }
        finally
        {
            OWNER.setRelease(this, FREE);
        }
    }

    /**
     * Writer thread: a full duty cycle (connection and credit handling), as when the publication is blocked.
     *
     * @return work done; 0 when the agent holds the sender.
     */
    public int writerDoWork()
    {
        if (!acquireForWriter())
        {
            return 0;
        }
        try
        {
            final int work = sender.doWork();
            markUnsent();
            return work;
        }
        finally
        {
            OWNER.setRelease(this, FREE);
        }
    }

    /**
     * Owner only, before releasing: whether the call just made left data for the agent to send. A volatile store,
     * so that an agent that sees the writer's release of {@code owner} also sees this (and an agent that does not
     * yet see it sees it on its next call).
     */
    private void markUnsent()
    {
        final boolean hasUnsent = sender.hasUnsentData();
        if (hasUnsent != (boolean)UNSENT.getOpaque(this))
        {
            UNSENT.setVolatile(this, hasUnsent);
        }
    }

    private boolean acquireForWriter()
    {
        if (OWNER.compareAndSet(this, FREE, WRITER))
        {
            WRITER_SENDS.setOpaque(this, (long)WRITER_SENDS.getOpaque(this) + 1);
            return true;
        }
        // The agent holds it (or it is closed): tell the agent to run again after releasing, then try once more.
        PENDING.setVolatile(this, true);
        if (OWNER.compareAndSet(this, FREE, WRITER))
        {
            WRITER_SENDS.setOpaque(this, (long)WRITER_SENDS.getOpaque(this) + 1);
            return true;
        }
        return false;
    }

    /** Agent thread, writer active: ask the writer for a full duty cycle if none was asked for lately. */
    private void requestWriterDuty(final long nowNs)
    {
        if (nowNs - dutyRequestedAtNs >= WRITER_DUTY_INTERVAL_NS)
        {
            dutyRequestedAtNs = nowNs;
            DUTY_DUE.setRelease(this, true);
        }
    }

    /** @return duty cycles the agent has run for an idle writer (for tests and diagnostics). */
    public long agentCycles()
    {
        return agentCycles;
    }

    /** @return true while the last send left committed data that the agent will send (for tests and diagnostics). */
    public boolean hasUnsentData()
    {
        return (boolean)UNSENT.getVolatile(this);
    }

    /** @return true once the sender has been closed. */
    public boolean isClosed()
    {
        return CLOSED == (int)OWNER.getVolatile(this);
    }

    /** The sender agent's duty: drive the sender while the writer is idle, or has left data it could not send. */
    public int doWork()
    {
        final long writerSends = (long)WRITER_SENDS.getOpaque(this);
        final long nowNs = clock.nanoTime();
        final boolean mustRun = (boolean)PENDING.getVolatile(this) || (boolean)UNSENT.getVolatile(this);
        if (writerSends != seenWriterSends)
        {
            seenWriterSends = writerSends;
            seenAtNs = nowNs;
            if (!mustRun)
            {
                requestWriterDuty(nowNs);
                return 0;
            }
        }
        else if (nowNs - seenAtNs < WRITER_IDLE_BEFORE_AGENT_NS && !mustRun)
        {
            requestWriterDuty(nowNs);
            return 0;
        }

        int work = 0;
        for (int i = 0; i < MAX_AGENT_CYCLES_PER_CALL; i++)
        {
            if (!OWNER.compareAndSet(this, FREE, AGENT))
            {
                break; // the writer is sending (or the sender is closed)
            }
            // A read-modify-write, not a plain store: when it takes the writer's pending flag it also acquires what
            // the writer appended before raising it, so this cycle sends it (a plain store could overwrite the flag
            // with no such edge, leaving the data to the idle timer).
            PENDING.getAndSet(this, false);
            DUTY_DUE.setRelease(this, false); // this cycle is the duty the writer was asked for
            try
            {
                work += sender.doWork();
                agentCycles = agentCycles + 1; // only this thread writes it
                markUnsent();
            }
            finally
            {
                OWNER.setVolatile(this, FREE);
            }
            if (!(boolean)PENDING.getVolatile(this))
            {
                break;
            }
        }
        return work;
    }

    public boolean supportsDirectSend()
    {
        return false;
    }

    /** Not used: the writer sends through {@link #writerSendNow()}. */
    public int sendNow()
    {
        return 0;
    }

    /**
     * Closes the sender once, from whichever thread gets here first (the publication closing, or the agent
     * removing it), after waiting for the other side to finish its current duty cycle.
     */
    public void close()
    {
        while (true)
        {
            final int current = (int)OWNER.getVolatile(this);
            if (CLOSED == current)
            {
                return;
            }
            if (FREE == current && OWNER.compareAndSet(this, FREE, CLOSED))
            {
                break;
            }
            Thread.yield(); // the other side holds it for at most one duty cycle
        }
        sender.close();
    }
}
