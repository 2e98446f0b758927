package io.verbus.fabric.tcp;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

import static io.verbus.fabric.tcp.TcpQueuePair.NONE;

/**
 * When a QP's framed requests are written: at once, or held in the outbound connection's buffer to coalesce with
 * the posts that follow; and the write itself, whose measured cost sets how long holding lasts.
 * <p>
 * The second post in a row that comes sooner after the last write's end than a write costs (at most
 * {@link #HOLD_TRIGGER_MAX_NS}: a poster that streams; see {@link #HOLD_TRIGGER_POSTS}) holds its frames in the
 * connection's buffer while posts keep coming, for about {@link #HOLD_WRITE_COSTS} writes' cost (at least
 * {@link #MIN_HOLD_NS}, at most {@code tcpCoalesceNs}) or {@link #COALESCE_MAX_BYTES}; they go out in one write, made
 * by the next post or poll past that point (the NIC thread if the application stops calling). An isolated post (a
 * ping-pong, a request, a credit) is written at once.
 * <p>
 * Run by the holder of its QP's engine lock only (see {@link TcpQueuePair}): its fields are plain, and the lock's
 * acquire and release carry them between the threads that take turns holding it.
 */
final class TcpWriteCoalescer
{
    /** Held frames are written once the poster has not posted for this long (or what a write costs, if more). */
    static final long STREAM_GAP_NS = TimeUnit.MICROSECONDS.toNanos(2);
    /**
     * A post starts holding only if it comes within this (or what a write costs, if less) of the last write's end:
     * never more, so that a slow host (writes inflated by preemption) does not make isolated posts wait.
     */
    static final long HOLD_TRIGGER_MAX_NS = TimeUnit.MICROSECONDS.toNanos(10);
    /**
     * Holding starts only at the this-many-th post in a row that came within a write's cost of the last write's end:
     * a stream. One such post is as often a coincidence (a heartbeat or a credit just before a ping): held, it would
     * wait for the next poll of its QP, which a ping-pong application makes only now and then while it waits.
     */
    static final int HOLD_TRIGGER_POSTS = 2;
    /** Frames are held for up to this many writes' cost (at least {@link #MIN_HOLD_NS}, at most coalesceNs). */
    static final int HOLD_WRITE_COSTS = 8;
    /** See {@link #HOLD_WRITE_COSTS}. */
    static final long MIN_HOLD_NS = TimeUnit.MICROSECONDS.toNanos(20);
    /** Most bytes held back to coalesce before they are written anyway. */
    static final int COALESCE_MAX_BYTES = 64 * 1024;
    /** A loopback write of a few frames, before any is measured. */
    static final long INITIAL_WRITE_COST_NS = TimeUnit.MICROSECONDS.toNanos(2);

    private final TcpQueuePair qp;
    private final long coalesceNs;
    private long lastPostEndNs;
    private long lastWriteEndNs;
    /**
     * What a write of requests costs, a moving average with outliers clamped (a write the scheduler preempted is not
     * what writes cost): posts closer together than this are coalesced.
     */
    private long writeCostNs = INITIAL_WRITE_COST_NS;
    /** When frames were first held back to coalesce, NONE if what is pending (if anything) is not held back. */
    private long coalescingSinceNs = NONE;
    /** Posts in a row that came within a write's cost of the last write's end. */
    private int closePosts;
    /** Diagnostics, read by tests: writes of request frames so far. */
    private long requestWrites;

    /**
     * @param qp         whose requests it writes; a connection whose write fails is lost through it.
     * @param coalesceNs longest time frames are held ({@code tcpCoalesceNs}), 0 to write every post at once.
     * @param longAgoNs  a time long before now, in nanoTime's arithmetic: no post and no write yet.
     */
    TcpWriteCoalescer(final TcpQueuePair qp, final long coalesceNs, final long longAgoNs)
    {
        this.qp = qp;
        this.coalesceNs = coalesceNs;
        this.lastPostEndNs = longAgoNs;
        this.lastWriteEndNs = longAgoNs;
    }

    /**
     * @return true while framed requests are held back to coalesce.
     */
    boolean isHolding()
    {
        return NONE != coalescingSinceNs;
    }

    /**
     * @return writes of request frames so far (plain: the caller fences).
     */
    long requestWrites()
    {
        return requestWrites;
    }

    /**
     * A post has framed its WRs at {@code nowNs}: write them or hold them (see {@link #writeAfterPost}), and note
     * when the post ended.
     */
    void onPostFramed(final TcpConnection connection, final long nowNs)
    {
        final boolean wrote = writeAfterPost(connection, nowNs);
        lastPostEndNs = wrote ? System.nanoTime() : nowNs;
    }

    /**
     * Write what was just framed, or hold it to coalesce with what follows: the {@link #HOLD_TRIGGER_POSTS}th post in a
     * row that comes within what a write costs (at most {@link #HOLD_TRIGGER_MAX_NS}) of the last write's end starts
     * holding, so an isolated post, whose predecessor is long written, goes out at once; holding lasts while posts
     * keep coming, up to {@link #holdNs()} (about {@link #HOLD_WRITE_COSTS} writes' cost) or
     * {@link #COALESCE_MAX_BYTES}.
     *
     * @return true if it wrote.
     */
    private boolean writeAfterPost(final TcpConnection connection, final long nowNs)
    {
        if (null == connection || !connection.isUsable() || !connection.hasPendingWrites())
        {
            return false;
        }
        if (coalesceNs > 0 && connection.pendingWriteBytes() < COALESCE_MAX_BYTES)
        {
            if (NONE != coalescingSinceNs)
            {
                if (nowNs - coalescingSinceNs < holdNs() && nowNs - lastPostEndNs < flushGapNs())
                {
                    return false;
                }
            }
            else if (nowNs - lastWriteEndNs < Math.min(writeCostNs, HOLD_TRIGGER_MAX_NS))
            {
                if (++closePosts >= HOLD_TRIGGER_POSTS)
                {
                    coalescingSinceNs = nowNs;
                    return false;
                }
            }
            else
            {
                closePosts = 0;
            }
        }
        writeRequests(connection);
        return true;
    }

    /**
     * @return how long after the last post held frames wait for another: the poster has stopped streaming.
     */
    private long flushGapNs()
    {
        return Math.max(STREAM_GAP_NS, Math.min(writeCostNs, HOLD_TRIGGER_MAX_NS));
    }

    /**
     * @return how long frames may be held: enough posts to spend about one part in {@link #HOLD_WRITE_COSTS} of the
     * time in writes (when a write costs 2-3 us on an idle host: {@link #MIN_HOLD_NS}), within coalesceNs.
     */
    private long holdNs()
    {
        return Math.min(coalesceNs, Math.max(MIN_HOLD_NS, HOLD_WRITE_COSTS * writeCostNs));
    }

    /**
     * Write held-back or blocked request frames, unless the poster is still streaming within its coalescing time.
     */
    int writeHeldRequests(final TcpConnection connection, final long nowNs)
    {
        if (null == connection || !connection.isUsable() || !connection.hasPendingWrites())
        {
            return 0;
        }
        if (NONE != coalescingSinceNs && nowNs - coalescingSinceNs < holdNs() &&
            nowNs - lastPostEndNs < flushGapNs() && connection.pendingWriteBytes() < COALESCE_MAX_BYTES)
        {
            return 0;
        }
        writeRequests(connection);
        return 1;
    }

    void writeRequests(final TcpConnection connection)
    {
        if (null == connection || !connection.isUsable())
        {
            return;
        }
        coalescingSinceNs = NONE;
        requestWrites++;
        final long startNs = System.nanoTime();
        try
        {
            connection.flush();
        }
        catch (final IOException ex)
        {
            qp.lose(connection);
        }
        final long endNs = System.nanoTime();
        final long costNs = writeCostNs;
        writeCostNs = costNs + ((Math.min(endNs - startNs, 4 * costNs) - costNs) >> 3);
        lastWriteEndNs = endNs;
    }
}
