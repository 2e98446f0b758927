package io.verbus.media.rdma;

import io.verbus.common.VarHandles;
import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.WorkCompletion;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * The image's bound under {@code commit=imm}: a position counts only once the RDMA_WRITE_WITH_IMM that carried it has
 * completed on this connection's receive CQ, which the responder produces only after every earlier WRITE of the QP is
 * placed. So however the fabric orders the placement of WRITEs, every frame below the bound has landed.
 * <p>
 * The polling thread reaps the receive CQ itself inside {@code poll} (no thread in between, as with the position
 * block of counter mode), rebuilds each position from its immediate ({@link ImmediateCommit#positionOf}), validates it
 * (monotonic, frame-aligned, at most two terms ahead of the consumer), keeps it in memory the remote side cannot
 * write, and posts the RECVs of what it reaped again on its next call, after the caller has handled the frames (in a
 * ping-pong, after the echo is posted): a post of a RECV is not on the path from the immediate to the application.
 * The publisher's credit ({@link ImmediateCommit}) comes back with the status WRITE that reports the consumption, and
 * the status reports no further than {@link #creditedPosition()}, the last immediate whose RECV is posted again, so a
 * credit never reaches the publisher before its RECV is posted. An empty CQ costs one poll of the CQ.
 * <p>
 * Before the image is announced the receiver agent drives the same method for the connection's self-test (the first
 * immediate, at the join position); once announced only the polling thread does. A failed receive completion (a
 * flush after a QP error) is not reposted: the agent drops the connection on the QP's state.
 * <p>
 * With {@code idle=event} the receive CQ was created on its own {@link CompletionChannel}, and the polling thread may
 * block between polls in {@link #awaitAdvance}: arm, reap once more (an immediate that completed after the last poll
 * but before the arm has queued no event, so it must be seen here), and only with nothing new wait for the event.
 * An immediate that completes after the arm queues an event, so the wait returns at once: no wake-up is lost.
 */
final class ImmediateBound extends AcceptedBound
{
    private static final VarHandle IMMEDIATES = VarHandles.field(MethodHandles.lookup(), "immediates", long.class);
    private static final VarHandle WAKE_UPS = VarHandles.field(MethodHandles.lookup(), "wakeUps", long.class);
    private static final VarHandle CREDITED = VarHandles.field(MethodHandles.lookup(), "credited", long.class);

    /**
     * Longest single wait in {@link #awaitAdvance}, whatever the caller asks: well below the linger (at least 1 s) that
     * keeps a dropped connection's CQ and channel alive after its image is gone, so a wait never outlives them.
     */
    static final long MAX_WAIT_NS = 250_000_000L;

    private final CompletionQueue receiveCq;
    private final CompletionChannel eventChannel;
    private final QueuePair qp;
    private final long receiveAddress;
    private final int receiveLkey;
    private final PositionBlockBound positionBlock;
    private final WorkCompletion[] completions = WorkCompletion.newArray(16);

    @SuppressWarnings("unused") private long immediates;
    @SuppressWarnings("unused") private long wakeUps;
    @SuppressWarnings("unused") private long credited;
    private long receivesPosted;
    /** Immediates reaped whose RECVs are not posted again yet (polling thread only). */
    private int receivesOwed;
    /** The position of the last of them: credited once they are posted (polling thread only). */
    private long owedUpToPosition;

    /**
     * @param receiveCq      the QP's receive CQ, reaped only here.
     * @param eventChannel   the channel {@code receiveCq} was created on (idle=event), or null.
     * @param qp             the QP whose receive queue this keeps posted.
     * @param receiveAddress a LOCAL_WRITE address RECVs name (a WRITE_WITH_IMM scatters nothing into it).
     * @param receiveLkey    its region's lkey.
     * @param positionBlock  the counter-mode reader of the same position block, asked only for the end of stream.
     * @param termLength     of the log.
     * @param joinPosition   the bound until the first immediate.
     */
    ImmediateBound(
        final CompletionQueue receiveCq,
        final CompletionChannel eventChannel,
        final QueuePair qp,
        final long receiveAddress,
        final int receiveLkey,
        final PositionBlockBound positionBlock,
        final int termLength,
        final long joinPosition)
    {
        super(termLength, joinPosition);
        this.receiveCq = receiveCq;
        this.eventChannel = eventChannel;
        this.qp = qp;
        this.receiveAddress = receiveAddress;
        this.receiveLkey = receiveLkey;
        this.positionBlock = positionBlock;
        CREDITED.setRelease(this, joinPosition);
    }

    /**
     * Post the connection's RECVs (control thread, after the QP left RESET and before the publisher is told READY).
     *
     * @param count RECVs to post.
     * @return true when all were posted.
     */
    boolean postReceives(final int count)
    {
        for (int i = 0; i < count; i++)
        {
            if (PostResult.OK != qp.postReceive(++receivesPosted, receiveAddress, 0, receiveLkey))
            {
                return false;
            }
        }
        return true;
    }

    public long acquire(final long consumerPosition)
    {
        if (null != invalidReason())
        {
            return INVALID; // sticky: the completion that failed is gone, and the image must still see it
        }
        if (0 != receivesOwed)
        {
            postOwedReceives();
        }
        final long current = current();
        final int count = receiveCq.poll(completions, completions.length);
        if (0 == count)
        {
            return current;
        }
        long accepted = current;
        int reaped = 0;
        for (int i = 0; i < count; i++)
        {
            final WorkCompletion completion = completions[i];
            if (!completion.isSuccess() || !completion.hasImmediate())
            {
                continue; // flushed by a QP error: the agent drops the connection on the QP's state
            }
            reaped++;
            final long position = ImmediateCommit.positionOf(completion.immediateData(), accepted);
            if (!isWithinReach(position, consumerPosition))
            {
                return reject("immediate " + completion.immediateData() + " names position " + position +
                    " (bound " + accepted + ", consumed " + consumerPosition + "): backwards or more than two " +
                    "terms ahead");
            }
            accepted = position;
        }
        if (0 != reaped)
        {
            receivesOwed += reaped;
            owedUpToPosition = accepted;
        }
        IMMEDIATES.setOpaque(this, (long)IMMEDIATES.getOpaque(this) + reaped);
        if (accepted != current)
        {
            accept(accepted);
        }
        return accepted;
    }

    /**
     * Post the RECVs of the immediates reaped by earlier calls, then credit their positions (release: the receiver
     * agent that reads {@link #creditedPosition()} on another thread posts its status after these posts).
     */
    private void postOwedReceives()
    {
        for (int i = receivesOwed; i > 0; i--)
        {
            qp.postReceive(++receivesPosted, receiveAddress, 0, receiveLkey);
        }
        receivesOwed = 0;
        CREDITED.setRelease(this, owedUpToPosition);
    }

    public long creditedPosition()
    {
        return (long)CREDITED.getAcquire(this);
    }

    public boolean canAwait()
    {
        return null != eventChannel;
    }

    public boolean awaitAdvance(final long consumerPosition, final long timeoutNs)
    {
        if (null == eventChannel)
        {
            return false;
        }
        // Any completion fires the arm: this CQ holds only the immediates' receives (and their error flushes).
        eventChannel.requestNotify(receiveCq, false);
        if (acquire(consumerPosition) != consumerPosition)
        {
            return true; // landed before the arm (or a bound past the consumer, or INVALID): the next poll sees it
        }
        final CompletionQueue fired;
        try
        {
            fired = eventChannel.awaitEvent(Math.min(timeoutNs, MAX_WAIT_NS));
        }
        catch (final IllegalStateException ex)
        {
            return false; // the subscription closed and took the channel with it: the image is gone too
        }
        if (null == fired)
        {
            return false;
        }
        eventChannel.ackEvents(fired, 1);
        WAKE_UPS.setOpaque(this, (long)WAKE_UPS.getOpaque(this) + 1);
        return true;
    }

    public long wakeUps()
    {
        return (long)WAKE_UPS.getOpaque(this);
    }

    public long endOfStreamPosition()
    {
        return positionBlock.endOfStreamAtOrAbove(current());
    }

    public long tornReads()
    {
        return 0;
    }

    public long immediates()
    {
        return (long)IMMEDIATES.getOpaque(this);
    }
}
