package io.verbus.media.rdma;

import io.verbus.fabric.FabricException;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.media.ImageBound;
import io.verbus.media.ImageDescriptor;
import io.verbus.media.ImageSink;
import io.verbus.media.MediaReceiver;
import io.verbus.media.rdma.protocol.SlotLayout;
import org.agrona.ErrorHandler;
import org.agrona.collections.ArrayUtil;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The subscription side of an {@code rdma:} channel, off the data path: the image reads the position block the
 * publisher WRITEs after the data itself, in {@code poll} ({@link PositionBlockBound}). Each duty cycle, per
 * connected publisher, this agent reaps completions and WRITEs the image's consumed position plus a heartbeat
 * timestamp into the publisher's status slot (credits); on a slower cadence it watches the publisher's heartbeat in
 * the same block, the QP's state, and whether the image closed itself on a corrupt frame or position. Any of those
 * makes the image unavailable and drops the connection at once; the control thread then reconnects with fresh
 * regions.
 * <p>
 * Owned by the receiver agent. Allocates nothing and makes no system call on the data path.
 */
public final class RdmaReceiver implements MediaReceiver
{
    /**
     * Credits go back when the image has consumed a quarter of the window since the last status WRITE, or at most
     * this long after it consumed anything. A publisher at its limit has a whole window outstanding, so a subscriber
     * that drains it always crosses the quarter and reports at once; the interval only bounds how stale the
     * publisher's view of a trickle is. It was 20 us: over tcp a ping-pong then paid one status WRITE (a socket write
     * each way) per round trip.
     */
    static final long STATUS_MIN_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(1);
    private static final ImageConnection[] EMPTY = new ImageConnection[0];

    private final RdmaChannelParams params;
    private final int streamId;
    private final ImageSink images;
    private final NanoClock clock;
    private final ErrorHandler errorHandler;
    private final OneToOneConcurrentArrayQueue<ImageConnection> newConnections =
        new OneToOneConcurrentArrayQueue<>(16);
    private final SubscriberControl control;
    private final WorkRequestBatch batch = new WorkRequestBatch(1);
    private final WorkCompletion[] completions = WorkCompletion.newArray(16);
    private final long[] slotValues = new long[2];
    private final RdmaCounters.Side sideCounters;
    private final HousekeepingTimer housekeepingTimer;
    private ImageConnection[] connections = EMPTY;
    private long retiredTornReads;
    private boolean closed;

    /**
     * Start the control thread, which connects to the publisher's endpoint and keeps reconnecting.
     *
     * @param context  the channel, the driver's services, the fabric configuration and the secret.
     * @param streamId the subscription's stream.
     * @param images   where images become available and unavailable.
     */
    public RdmaReceiver(final RdmaChannelContext context, final int streamId, final ImageSink images)
    {
        this.params = context.params();
        this.streamId = streamId;
        this.images = images;
        this.clock = context.media().dutyCycleClock(); // only doWork reads it (and the constructor, once)
        this.errorHandler = context.media().errorHandler();
        final String name = "stream=" + streamId + " publisher=" + params.endpointHost() + ":" + params.endpointPort();
        if (RdmaChannelParams.Provider.VERBS == params.provider())
        {
            // No RDMA library or device here: the add fails, as a publication's does, rather than every connect. A
            // soft provider's trouble (a read-only or full directory) is the environment's, which can be fixed while
            // the subscription retries (RdmaBadEnvironmentTest), so those keep the retrying.
            final String unavailable = Fabrics.unavailableReason(
                FabricEndpoint.providerName(params.provider()), context.fabricContext());
            if (null != unavailable)
            {
                throw new FabricException("rdma subscription " + name + ": " + unavailable);
            }
        }
        sideCounters = new RdmaCounters.Side(context.countersManager(), "rdma torn position reads: " + name,
            "rdma publishers: " + name);
        try
        {
            control = new SubscriberControl(context, name, streamId, newConnections, new AtomicLong());
        }
        catch (final RuntimeException ex)
        {
            sideCounters.free();
            throw ex;
        }
        housekeepingTimer = new HousekeepingTimer(clock.nanoTime());
    }

    /** @return publishers currently connected (owner thread view). */
    public int connectionCount()
    {
        return connections.length;
    }

    /** @return regions registered right now (ring, position block, status source per connection). */
    public int registeredRegionCount()
    {
        return control.resources().registeredRegionCount();
    }

    /** @return QPs held right now. */
    public int queuePairCount()
    {
        return control.resources().queuePairCount();
    }

    /** @return protection domains held right now: one per publisher connection. */
    public int protectionDomainCount()
    {
        return control.resources().protectionDomainCount();
    }

    /** @return handshakes that failed. */
    public long rejectedHandshakes()
    {
        return control.rejectedHandshakes();
    }

    /** @return bytes caught up by RDMA READ of the publisher's log ({@code join=recent}) since start. */
    public long catchUpBytes()
    {
        return control.catchUpBytes();
    }

    /** @return bytes a {@code join-position} asked for that the publisher's log no longer held. */
    public long catchUpGapBytes()
    {
        return control.catchUpGapBytes();
    }

    /** @return connections established since start. */
    public long connectionsMade()
    {
        return control.connectionsMade();
    }

    public int doWork()
    {
        if (closed)
        {
            return 0;
        }
        int work = drainNewConnections();
        final long nowNs = clock.nanoTime();
        final ImageConnection[] connections = this.connections;
        for (final ImageConnection connection : connections)
        {
            if (!connection.closeRequested)
            {
                work += connection.reapDueCompletions(completions);
                work += connection.announced ? sendStatus(connection, nowNs) : selfTest(connection, nowNs);
            }
        }
        if (housekeepingTimer.isDue(nowNs))
        {
            work += housekeeping(nowNs);
        }
        return work;
    }

    private int drainNewConnections()
    {
        int work = 0;
        ImageConnection connection;
        while (null != (connection = newConnections.poll()))
        {
            work++;
            connection.lastHeardNs = clock.nanoTime();
            connection.statusThreshold = Math.max(1, params.windowLength(connection.termLength) / 4);
            connections = ArrayUtil.add(connections, connection);
            RdmaCounters.set(connection.counters.commitMode, connection.commit.mode().code());
            if (null == connection.receiveCq)
            {
                announce(connection);
            }
            else
            {
                connection.selfTestDeadlineNs = connection.lastHeardNs + params.timeoutNs();
            }
        }
        return work;
    }

    private void announce(final ImageConnection connection)
    {
        try
        {
            connection.subscriberPosition = images.onImageAvailable(new ImageDescriptor(
                connection.imageId, connection.sessionId, connection.streamId, connection.initialTermId,
                connection.termLength, connection.startPosition, connection.termBuffers, connection.bound,
                connection.sourceIdentity, connection.mtuLength));
            connection.announced = true;
        }
        catch (final RuntimeException ex)
        {
            errorHandler.onError(ex);
            connection.requestClose("image refused: " + ex.getMessage());
        }
    }

    /**
     * commit=imm: the image is announced only once the mode is seen to work, the first WRITE_WITH_IMM (the publisher's
     * first chain: its position block at the join position, or data already waiting) having completed here. Until
     * then this agent reaps the receive CQ; from the announcement on only the image's polling thread does.
     */
    private int selfTest(final ImageConnection connection, final long nowNs)
    {
        // Reach is checked from where the image's reader will start: below the join after a catch-up, so a first
        // immediate up to two terms past the join (three past the start, over unread catch-up data) is refused.
        if (ImageBound.INVALID == connection.bound.acquire(connection.startPosition))
        {
            connection.requestClose("commit=imm self-test: " + connection.bound.invalidReason());
            return 1;
        }
        if (connection.bound.immediates() > 0)
        {
            PublisherControl.LOGGER.log(System.Logger.Level.INFO, "rdma subscription " + connection.name +
                ": commit=imm self-test passed (first immediate received, bound " + connection.bound.bound() + ")");
            announce(connection);
            return 1;
        }
        if (nowNs - connection.selfTestDeadlineNs > 0)
        {
            connection.requestClose("commit=imm self-test failed: no WRITE_WITH_IMM completed within " +
                TimeUnit.NANOSECONDS.toMillis(params.timeoutNs()) + " ms of connecting (does the provider deliver " +
                "immediate data to a receive queue?)");
        }
        return 0;
    }

    /** The publisher's heartbeat: a consistent position block with a new timestamp. */
    private void readPublisherHeartbeat(final ImageConnection connection, final long nowNs)
    {
        if (SlotLayout.read(connection.positionBlock, 0, slotValues))
        {
            connection.lastPublishedPosition = Math.max(connection.lastPublishedPosition, slotValues[0]);
            if (slotValues[1] != connection.lastPublisherTimestamp)
            {
                connection.lastPublisherTimestamp = slotValues[1];
                connection.lastHeardNs = nowNs;
            }
        }
    }

    private int sendStatus(final ImageConnection connection, final long nowNs)
    {
        if (!connection.announced)
        {
            return 0;
        }
        // commit=imm: no further than the RECVs posted again, or the publisher would spend a credit not yet held.
        final long consumed = Math.min(connection.subscriberPosition.getVolatile(),
            connection.bound.creditedPosition());
        final long sinceLastWriteNs = nowNs - connection.lastStatusWriteNs;
        // commit=imm: the publisher's credits come back only with a status, so spent credits make one due as well.
        final long immediates = connection.bound.immediates();
        final boolean creditsSpent = 0 != connection.statusImmediateThreshold &&
            immediates - connection.immediatesAtLastStatus >= connection.statusImmediateThreshold;
        if (sinceLastWriteNs < params.heartbeatIntervalNs() &&
            (consumed == connection.lastConsumedSent ||
            (consumed - connection.lastConsumedSent < connection.statusThreshold && !creditsSpent &&
            sinceLastWriteNs < STATUS_MIN_INTERVAL_NS)))
        {
            return 0;
        }
        if (!connection.hasRoomFor(1))
        {
            connection.reapCompletions(completions);
            if (!connection.hasRoomFor(1))
            {
                return 0;
            }
        }
        final long seq = connection.wrsPosted + 1;
        batch.clear();
        final int flags = connection.addSlotWrite(batch, seq, consumed, nowNs, connection.statusAddress,
            connection.statusRkey, params.signalEvery());
        final int result = connection.qp.postSend(batch);
        if (PostResult.OK != result)
        {
            if (PostResult.SEND_QUEUE_FULL != result)
            {
                connection.requestClose("status post failed: " + PostResult.toString(result));
            }
            return 0;
        }
        connection.onPosted(seq, flags, SlotLayout.WRITE_LENGTH, 0);
        connection.lastConsumedSent = consumed;
        connection.lastStatusWriteNs = nowNs;
        connection.immediatesAtLastStatus = immediates;
        return 1;
    }

    private int housekeeping(final long nowNs)
    {
        int work = 0;
        long tornReads = retiredTornReads;
        for (final ImageConnection connection : connections)
        {
            readPublisherHeartbeat(connection, nowNs);
            tornReads += connection.bound.tornReads();
            final String corruptReason = connection.bound.corruptReason();
            if (!connection.closeRequested && null != corruptReason)
            {
                connection.requestClose("the image closed itself: " + corruptReason);
            }
            connection.checkHealth(completions, nowNs, params.timeoutNs(), "heartbeat from the publisher");
            RdmaCounters.set(connection.counters.immediates, connection.bound.immediates());
            RdmaCounters.set(connection.counters.wakeUps, connection.bound.wakeUps());
            connection.publishCounters(connection.announced ?
                Math.max(connection.bound.bound(), connection.lastPublishedPosition) -
                connection.subscriberPosition.getVolatile() : 0);
            if (connection.closeRequested && !isDraining(connection, nowNs))
            {
                retire(connection);
                work++;
            }
        }
        sideCounters.publish(tornReads, connections.length);
        return work;
    }

    /**
     * A publication that closed gracefully wrote an end-of-stream block after its last data: its image stays until
     * the application has consumed up to there (so nothing it was sent is lost to the close), or for at most the
     * channel's timeout. A connection dropped for any other reason goes at once.
     */
    private boolean isDraining(final ImageConnection connection, final long nowNs)
    {
        if (!connection.announced || null != connection.bound.corruptReason())
        {
            return false;
        }
        final long endOfStream = connection.bound.endOfStreamPosition();
        if (Long.MAX_VALUE == endOfStream || connection.subscriberPosition.getVolatile() >= endOfStream)
        {
            return false;
        }
        if (0 == connection.drainDeadlineNs)
        {
            connection.drainDeadlineNs = nowNs + params.timeoutNs();
        }
        return nowNs - connection.drainDeadlineNs < 0;
    }

    private void retire(final ImageConnection connection)
    {
        connections = ArrayUtil.remove(connections, connection);
        retiredTornReads += connection.bound.tornReads();
        if (connection.announced)
        {
            connection.announced = false;
            images.onImageUnavailable(connection.imageId);
        }
        connection.retire();
    }

    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (final ImageConnection connection : connections)
        {
            connection.requestClose("subscription closed");
            retire(connection);
        }
        RcLink.retireQueued(newConnections, "subscription closed");
        control.close();
        sideCounters.free();
    }

    ImageConnection[] connections()
    {
        return connections;
    }

    int streamId()
    {
        return streamId;
    }
}
