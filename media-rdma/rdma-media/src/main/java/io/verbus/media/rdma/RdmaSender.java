package io.verbus.media.rdma;

import io.aeron.logbuffer.FrameDescriptor;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkRequest;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.log.FrameWriter;
import io.verbus.media.MediaSender;
import io.verbus.media.PublicationLog;
import io.verbus.media.rdma.protocol.ConnectFlyweight;
import io.verbus.media.rdma.protocol.SlotLayout;
import org.agrona.BitUtil;
import org.agrona.ErrorHandler;
import org.agrona.collections.ArrayUtil;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;

import java.util.concurrent.TimeUnit;

/**
 * The publication side of an {@code rdma:} channel. Each duty cycle it first finds the frames committed since the
 * last cycle and for each subscriber posts one chain: WRITE(s) of the new bytes into the subscriber's ring at the
 * same offsets (INLINE when small) followed by a WRITE of the new position into its position block, with only every
 * Nth WR signaled. Then it reaps completions, reads every subscriber's status slot (heartbeats due are sent after
 * them, at the fresh clock) and sets the publisher limit by the flow-control strategy plus the window.
 * <p>
 * Owned by one thread (the sender agent, or the exclusive publication's writer in direct mode). Connection
 * set-up and teardown run on the {@link PublisherControl} thread; they meet through a queue and a few volatile
 * flags, so the data path takes no lock, makes no system call and allocates nothing.
 * <p>
 * In direct mode the writer calls {@link #sendNow()} after each append: it posts the chains for the new frames and
 * nothing else, unless a send queue has no room (then it reaps that queue's completions) or less than half a window
 * of credit is left (then it reads the status slots and moves the limit, at most every eighth of a window, so a
 * fast writer does not run into a stale limit). The rest of the duty cycle comes through {@link #doWork()} on the
 * hand-off's cadence. The send path reads no clock: position blocks carry the time of the last duty cycle.
 */
public final class RdmaSender implements MediaSender
{
    static final int MAX_SUBSCRIBERS = 64;
    /** Data WRs one post may carry before the position WRITE (a post never crosses more than a few terms). */
    static final int MAX_DATA_WRS_PER_POST = 6;
    /** How long a closing publication waits, at most, for its last data and end-of-stream block to complete. */
    static final long END_OF_STREAM_WAIT_NS = TimeUnit.SECONDS.toNanos(1);
    private static final SubscriberConnection[] EMPTY = new SubscriberConnection[0];

    private final PublicationLog log;
    private final RdmaChannelParams params;
    private final NanoClock clock;
    private final ErrorHandler errorHandler;
    private final FabricEndpoint endpoint;
    private final UnsafeBuffer[] termBuffers;
    private final long logAddress;
    private final int termLength;
    private final int positionBitsToShift;
    private final int initialTermId;
    private final int sessionId;
    private final int streamId;
    private final int windowLength;
    private final long maxMessageLength;
    private final ManyToOneConcurrentArrayQueue<SubscriberConnection> newConnections =
        new ManyToOneConcurrentArrayQueue<>(MAX_SUBSCRIBERS);
    private final WorkRequestBatch batch = new WorkRequestBatch(MAX_DATA_WRS_PER_POST + 1);
    private final WorkCompletion[] completions = WorkCompletion.newArray(16);
    private final long[] slotValues = new long[2];
    private final PublisherControl control;
    private final RdmaCounters.Side sideCounters;
    private final HousekeepingTimer housekeepingTimer;

    private SubscriberConnection[] connections = EMPTY;
    private long scanPosition;
    private long creditsReadAtPosition;
    /** The clock as of the last duty cycle or credit read: what the send path stamps position blocks with. */
    private long cachedNowNs;
    private long lastLimit = -1;
    private long tornReadCount;
    private boolean wasConnected;
    /** commit=imm: a chain waited for the subscriber's RECVs; the writer's send path reads the status slots. */
    private boolean creditStalled;
    /** The last send left a ready subscriber short of the scanned log: see {@link #hasUnsentData()}. */
    private boolean unsent;
    private boolean closed;

    /**
     * Open the fabric, register the log (as a WRITE source: no access rights) and start listening.
     *
     * @param context the channel, the driver's services, the fabric configuration and the secret.
     * @param log     the publication's log.
     */
    public RdmaSender(final RdmaChannelContext context, final PublicationLog log)
    {
        this.log = log;
        this.params = context.params();
        this.clock = context.media().nanoClock();
        this.errorHandler = context.media().errorHandler();
        this.termBuffers = log.logBuffers().termBuffers();
        this.termLength = log.termLength();
        this.positionBitsToShift = log.positionBitsToShift();
        this.initialTermId = log.initialTermId();
        this.sessionId = log.sessionId();
        this.streamId = log.streamId();
        this.windowLength = params.windowLength(termLength);

        final String providerName = RdmaChannelParams.Provider.AUTO == params.provider() ?
            Fabrics.AUTO : FabricEndpoint.providerName(params.provider());
        endpoint = FabricEndpoint.open(providerName, context.fabricContext());
        RdmaCounters.Side counters = null;
        try
        {
            maxMessageLength = Math.min(Integer.MAX_VALUE, endpoint.device().attributes().maxMessageLength());
            // Each subscriber's connection registers the terms as its WRITEs' source in its own PD (PublisherControl).
            logAddress = log.logBuffers().segment().address();
            final String name = "stream=" + log.streamId() + " session=" + log.sessionId();
            counters = new RdmaCounters.Side(context.countersManager(), "rdma torn status reads: " + name,
                "rdma subscribers: " + name);
            control = new PublisherControl(context, name, log, endpoint, newConnections, MAX_SUBSCRIBERS);
        }
        catch (final RuntimeException ex)
        {
            if (null != counters)
            {
                counters.free();
            }
            endpoint.close();
            throw ex;
        }
        sideCounters = counters;
        // The publication is NOT_CONNECTED with limit 0 until a subscriber is admitted: nothing is appended yet.
        scanPosition = log.producerPosition();
        creditsReadAtPosition = scanPosition;
        cachedNowNs = clock.nanoTime();
        housekeepingTimer = new HousekeepingTimer(cachedNowNs);
    }

    /** @return the TCP port the control endpoint listens on (useful with port 0). */
    public int controlPort()
    {
        return control.port();
    }

    /** @return the provider in use (shm, tcp, verbs). */
    public String providerName()
    {
        return endpoint.providerName();
    }

    /** @return subscribers currently admitted (owner thread view). */
    public int subscriberCount()
    {
        return connections.length;
    }

    /**
     * @return regions this sender holds registered right now, all for its subscribers: per subscriber the terms (as
     * the source of its WRITEs), its status slot, its slot source block, and a granted catch-up's READ registration.
     */
    public int registeredRegionCount()
    {
        return control.resources().registeredRegionCount();
    }

    /** @return protection domains this sender holds right now: one per subscriber connection. */
    public int protectionDomainCount()
    {
        return control.resources().protectionDomainCount();
    }

    /** @return QPs this sender holds right now. */
    public int queuePairCount()
    {
        return control.resources().queuePairCount();
    }

    /** @return handshakes this sender refused. */
    public long rejectedHandshakes()
    {
        return control.rejectedHandshakes();
    }

    /** @return subscribers admitted so far, including any whose handshake then failed (diagnostics, for tests). */
    long admissions()
    {
        return control.admissions();
    }

    FabricEndpoint endpoint()
    {
        return endpoint;
    }

    SubscriberConnection lastAdmittedConnection()
    {
        return control.lastAdmitted;
    }

    public boolean supportsDirectSend()
    {
        return true;
    }

    /**
     * The writer's send path (direct mode): post one chain per ready subscriber for the frames committed since the
     * last send. See the class comment for the two things it also does, only when they are needed.
     */
    public int sendNow()
    {
        if (closed)
        {
            return 0;
        }
        int work = sendAppended();
        final long target = scanPosition;
        if ((lastLimit - target < windowLength / 2 && target - creditsReadAtPosition >= windowLength / 8) ||
            creditStalled)
        {
            creditStalled = false;
            work += readCredits();
        }
        return work;
    }

    /** Post what the log holds beyond what each ready subscriber was sent: scan, then one WRITE chain each. */
    private int sendAppended()
    {
        final int work = scan();
        return work + sendToReady(cachedNowNs, true);
    }

    /**
     * One WRITE chain to each ready subscriber up to the scanned log, and a note of whether any was left short of it
     * ({@link #hasUnsentData()}).
     *
     * @param nowNs      the time position blocks are stamped with.
     * @param behindOnly only subscribers behind the log; else every ready one, whose chain may be a heartbeat alone.
     */
    private int sendToReady(final long nowNs, final boolean behindOnly)
    {
        final long target = scanPosition;
        int work = 0;
        boolean unsent = false;
        for (final SubscriberConnection connection : connections)
        {
            if ((!behindOnly || connection.sentPosition < target) && connection.ready && !connection.closeRequested)
            {
                work += send(connection, nowNs);
                unsent |= connection.sentPosition < target && !connection.closeRequested;
            }
        }
        this.unsent = unsent;
        return work;
    }

    /**
     * True when the last send or duty cycle left a ready subscriber short of what the log holds: its send queue was
     * full (the NIC or the tcp provider's socket is behind), a {@code commit=imm} subscriber had no receive posted,
     * or the chain reached its WR limit; or when a subscriber's QP holds posted WRs back until it is progressed (the
     * tcp provider coalescing a stream's frames). Direct mode then has the agent drive this sender until it is not,
     * so the end of a burst does not wait for the writer's next call.
     */
    public boolean hasUnsentData()
    {
        if (unsent)
        {
            return true;
        }
        for (final SubscriberConnection connection : connections)
        {
            if (connection.ready && !connection.closeRequested && connection.qp.hasHeldSends())
            {
                return true;
            }
        }
        return false;
    }

    /** Completions and status slots of every subscriber, then the limit: the credit half of the duty cycle. */
    private int readCredits()
    {
        final long nowNs = clock.nanoTime();
        cachedNowNs = nowNs;
        creditsReadAtPosition = scanPosition;
        int work = 0;
        for (final SubscriberConnection connection : connections)
        {
            work += connection.reapDueCompletions(completions);
            work += readStatus(connection, nowNs);
        }
        return work + updateLimit();
    }

    public int doWork()
    {
        if (closed)
        {
            return 0;
        }
        // New data leaves first, at the clock of the last cycle: the credit half below (completions, status slots,
        // a clock read) only moves the limit, and the data waiting behind it was the latency of every send.
        int work = drainNewConnections();
        work += sendAppended();
        final long nowNs = clock.nanoTime();
        cachedNowNs = nowNs;
        creditsReadAtPosition = scanPosition;
        final SubscriberConnection[] connections = this.connections;
        for (final SubscriberConnection connection : connections)
        {
            work += connection.reapDueCompletions(completions);
            work += readStatus(connection, nowNs);
        }
        work += scan();
        work += sendToReady(nowNs, false);
        work += updateLimit();
        if (housekeepingTimer.isDue(nowNs))
        {
            work += housekeeping(nowNs);
        }
        return work;
    }

    private int drainNewConnections()
    {
        if (newConnections.isEmpty())
        {
            return 0;
        }
        int work = 0;
        SubscriberConnection connection;
        while (null != (connection = newConnections.poll()))
        {
            if (connection.closeRequested)
            {
                connection.retired = true; // its handshake failed while it waited in the queue
                continue;
            }
            // A late joiner starts at the current committed position; it counts in flow control at once.
            scan();
            connection.sentPosition = scanPosition;
            grantCatchUp(connection, scanPosition);
            // A catching-up subscriber counts from where its catch-up starts: see updateLimit.
            connection.consumedPosition = connection.catchUpPosition;
            connection.lastHeardNs = clock.nanoTime();
            connection.catchUpHoldUntilNs = connection.lastHeardNs + params.timeoutNs();
            connection.lastPositionWriteNs = 0;
            connections = ArrayUtil.add(connections, connection);
            connection.joinPosition = scanPosition;
            work++;
        }
        return work;
    }

    /**
     * Where a new subscriber's catch-up by RDMA READ may start. What the log still holds intact: the conductor zeroes
     * it up to {@code publisherLimit - termLength}, so the oldest position is the larger of the clean position and
     * the current limit less a term (this sender never lowers the limit), and at most a term before the join
     * position (the subscriber's ring holds the catch-up and the live WRITEs after it). A request outside that
     * starts live ({@code catchUpPosition == join}); the subscriber reports the gap.
     */
    private void grantCatchUp(final SubscriberConnection connection, final long join)
    {
        final long request = connection.catchUpRequest;
        final long oldest = Math.max(Math.max(log.cleanPosition(), Math.max(lastLimit, join) - termLength),
            Math.max(0, join - termLength));
        final long oldestAligned = (oldest + FrameDescriptor.FRAME_ALIGNMENT - 1) &
            ~(long)(FrameDescriptor.FRAME_ALIGNMENT - 1);
        long start = join;
        if (ConnectFlyweight.CATCH_UP_TERM_START == request)
        {
            final long termStart = join - (join & (termLength - 1));
            start = termStart >= oldestAligned ? termStart : join;
        }
        else if (request >= 0 && request >= oldestAligned && request <= join)
        {
            start = request;
        }
        connection.oldestPosition = ConnectFlyweight.CATCH_UP_NONE == request ? -1 : Math.min(oldestAligned, join);
        connection.catchUpPosition = start;
    }

    private int readStatus(final SubscriberConnection connection, final long nowNs)
    {
        if (!SlotLayout.read(connection.statusBlock, 0, slotValues))
        {
            if (0 != connection.statusBlock.getLongVolatile(SlotLayout.CHECK_OFFSET))
            {
                tornReadCount++;
            }
            return 0;
        }
        final long consumed = slotValues[0];
        final long timestamp = slotValues[1];
        if (timestamp == connection.lastStatusTimestamp && consumed == connection.consumedPosition)
        {
            return 0;
        }
        connection.lastStatusTimestamp = timestamp;
        connection.lastHeardNs = nowNs;
        if (consumed < connection.consumedPosition || consumed > connection.sentPosition)
        {
            connection.requestClose("status slot consumed position " + consumed + " outside [" +
                connection.consumedPosition + ", " + connection.sentPosition + "]");
            return 1;
        }
        connection.consumedPosition = consumed;
        return 1;
    }

    /**
     * Advance over the log's committed frames: a frame counts once its length is stored (acquire) and its header
     * names where it is. A frame that does not is never sent: the log was written by two threads at once, and the
     * driver's unblock check pads over it (and says so) after its timeout.
     */
    private int scan()
    {
        final long producerPosition = log.producerPosition();
        long position = scanPosition;
        int frames = 0;
        while (position < producerPosition)
        {
            final UnsafeBuffer term = termBuffers[(int)((position >>> positionBitsToShift) % 3)];
            final int termOffset = (int)(position & (termLength - 1));
            final int frameLength = term.getIntVolatile(termOffset);
            if (!FrameWriter.isSoundFrame(term, termOffset, frameLength, sessionId, streamId,
                initialTermId + (int)(position >>> positionBitsToShift)))
            {
                break;
            }
            position += BitUtil.align(frameLength, FrameDescriptor.FRAME_ALIGNMENT);
            frames++;
        }
        if (frames > 0)
        {
            scanPosition = position;
            log.mediaScanPosition(position);
            return 1;
        }
        return 0;
    }

    private int send(final SubscriberConnection connection, final long nowNs)
    {
        final long sent = connection.sentPosition;
        final ImmediateCommit immediateCommit = connection.immediateCommit;
        long target = scanPosition;
        if (null != immediateCommit && sent < target && !immediateCommit.hasCredit(connection.consumedPosition))
        {
            target = sent; // commit=imm: no RECV left at the subscriber; the data waits for its status (never RNR)
            creditStalled = true;
        }
        final boolean heartbeatDue = nowNs - connection.lastPositionWriteNs >= params.heartbeatIntervalNs();
        if (sent >= target && !heartbeatDue)
        {
            return 0;
        }

        batch.clear();
        final long chainEnd = chainEnd(sent, target);
        if (chainEnd == sent && !heartbeatDue)
        {
            return 0;
        }
        long position = sent;
        long bytes = 0;
        int inline = 0;
        while (position < chainEnd)
        {
            final int termOffset = (int)(position & (termLength - 1));
            final int partition = (int)((position >>> positionBitsToShift) % 3);
            final int length = writeLength(position, chainEnd);
            final long localOffset = (long)partition * termLength + termOffset;
            int flags = 0;
            if (length <= connection.inlineLimit)
            {
                flags |= SendFlags.INLINE;
                inline++;
            }
            batch.add().write(0, logAddress + localOffset, length, connection.logSourceRegion.lkey(),
                connection.ringAddress + localOffset, connection.ringRkey, flags);
            position += length;
            bytes += length;
        }

        // commit=imm: the last data WRITE carries the immediate itself (its receive completion comes after its own
        // bytes and every earlier WRITE's are placed), so a chain is its data alone; the position block is written
        // only when a heartbeat is due. commit=counter: the position block WRITE ends every chain.
        final int dataWrs = batch.size();
        final boolean immediateOnData = null != immediateCommit && dataWrs > 0;
        final boolean slotWrite = !immediateOnData || heartbeatDue;
        final int wrCount = dataWrs + (slotWrite ? 1 : 0);
        if (!connection.hasRoomFor(wrCount))
        {
            // Reap now rather than leave the chain to the next duty cycle: the writer's send path reaps only here.
            connection.reapCompletions(completions);
            if (connection.closeRequested || !connection.hasRoomFor(wrCount))
            {
                return 0; // the send queue is full until the next signaled completion is reaped
            }
        }

        final long lastWrSeq = connection.wrsPosted + wrCount;
        for (int i = 0; i < dataWrs; i++)
        {
            batch.get(i).wrId(connection.wrsPosted + i + 1);
        }
        final int lastFlags;
        if (slotWrite)
        {
            lastFlags = connection.addSlotWrite(batch, lastWrSeq, position, nowNs,
                connection.counterAddress, connection.counterRkey, params.signalEvery());
        }
        else
        {
            lastFlags = connection.signalFlag(lastWrSeq, params.signalEvery());
            final WorkRequest lastData = batch.get(dataWrs - 1);
            lastData.flags(lastData.flags() | lastFlags);
        }
        // The immediate goes on the last data WRITE, or on the position block of a chain without data.
        final boolean immediate = null != immediateCommit &&
            immediateCommit.markIfNew(batch.get(immediateOnData ? dataWrs - 1 : dataWrs), position);

        final int result = connection.qp.postSend(batch);
        if (PostResult.OK != result)
        {
            if (PostResult.SEND_QUEUE_FULL == result)
            {
                return 0;
            }
            connection.requestClose("post failed: " + PostResult.toString(result) + " (QP " + connection.qp.state() +
                ")");
            return 1;
        }
        connection.onPosted(lastWrSeq, lastFlags, bytes, inline);
        if (slotWrite)
        {
            connection.lastPositionWriteNs = nowNs;
        }
        if (immediate)
        {
            immediateCommit.onPosted(position);
        }
        connection.sentPosition = position;
        return 1;
    }

    /**
     * Where this chain of at most {@link #MAX_DATA_WRS_PER_POST} data WRITEs ends: {@code target}, or where the last
     * WRITE that fits ends. Each WRITE stops at the end of a term and at the device's largest payload; a term end is a
     * frame boundary, a payload cut mostly is not. The position block (or immediate) that ends the chain names its
     * end, and a subscriber refuses a bound inside a frame, so a chain that would end on a payload cut ends at the
     * last frame boundary before it instead (only with a backlog of six of the device's largest WRITEs: 6 x 16 MiB on
     * tcp, 6 GiB on shm).
     */
    private long chainEnd(final long sent, final long target)
    {
        long position = sent;
        long frameBoundary = sent;
        for (int wrs = 0; wrs < MAX_DATA_WRS_PER_POST && position < target; wrs++)
        {
            position += writeLength(position, target);
            if (position == target || 0 == (position & (termLength - 1)))
            {
                frameBoundary = position; // the target and a term's end are frame boundaries; a payload cut is not
            }
        }
        return position == frameBoundary ? position : lastFrameEndWithin(frameBoundary, position);
    }

    /**
     * @return the length of the one WRITE that starts at {@code position} on the way to {@code end}: it stops at
     * {@code end}, at the end of the term (the next term's partition is not always the next in memory) and at the
     * device's largest payload.
     */
    private int writeLength(final long position, final long end)
    {
        final int termRemaining = termLength - (int)(position & (termLength - 1));
        return (int)Math.min(Math.min(end - position, termRemaining), maxMessageLength);
    }

    /**
     * @return the end of the last whole frame in {@code [from, limit)}, walking the committed, scanned frames from
     * {@code from}, a frame boundary; {@code from} itself only if no frame fits, which a device whose largest WRITE
     * holds an MTU never makes happen.
     */
    private long lastFrameEndWithin(final long from, final long limit)
    {
        long position = from;
        while (true)
        {
            final UnsafeBuffer term = termBuffers[(int)((position >>> positionBitsToShift) % 3)];
            final int frameLength = term.getInt((int)(position & (termLength - 1)));
            final long next = position + BitUtil.align(frameLength, FrameDescriptor.FRAME_ALIGNMENT);
            if (frameLength <= 0 || next > limit)
            {
                return position;
            }
            position = next;
        }
    }

    private int updateLimit()
    {
        final SubscriberConnection[] connections = this.connections;
        long minAll = Long.MAX_VALUE;
        long minTagged = Long.MAX_VALUE;
        long max = Long.MIN_VALUE;
        boolean anyReady = false;
        for (final SubscriberConnection connection : connections)
        {
            if (connection.closeRequested)
            {
                continue;
            }
            final long consumed = connection.consumedPosition;
            minAll = Math.min(minAll, consumed);
            max = Math.max(max, consumed);
            if (connection.hasGroupTag && connection.groupTag == params.groupTag())
            {
                minTagged = Math.min(minTagged, consumed);
            }
            anyReady |= connection.ready;
        }

        if (Long.MAX_VALUE == minAll)
        {
            if (wasConnected)
            {
                wasConnected = false;
                log.connected(false);
            }
            return 0;
        }

        final long pace = switch (params.flowControl())
        {
            case MIN -> minAll;
            case MAX -> max;
            case TAGGED -> Long.MAX_VALUE == minTagged ? max : minTagged;
        };
        // Never past what the conductor has zeroed: it runs on its own thread, and in direct mode the limit moves
        // on the writer's thread, so without this cap a fast writer laps a slow conductor (stale frames sent as
        // new, or fresh frames zeroed under the sender).
        long limit = Math.min(pace + windowLength, log.maxPublisherLimit());
        for (final SubscriberConnection connection : connections)
        {
            // A subscriber still catching up may be READing the log from its catch-up start: the conductor zeroes up
            // to limit - termLength, so the limit stays within a term of it, whatever the flow control, until its
            // READY (sent once its READs completed). Then, so that fc=max does not drop it for the term it caught up,
            // until it reports its join position or for at most the channel's timeout; then ordinary rules apply.
            if (connection.consumedPosition < connection.joinPosition &&
                (!connection.ready || cachedNowNs - connection.catchUpHoldUntilNs < 0))
            {
                limit = Math.min(limit, Math.max(lastLimit, connection.consumedPosition + termLength));
            }
        }

        if (RdmaChannelParams.FlowControl.MIN != params.flowControl())
        {
            // Never overwrite unread data of an admitted subscriber: one that would fall more than a term behind
            // the new limit is disconnected first (its image goes unavailable), as a slow receiver in Aeron.
            for (final SubscriberConnection connection : connections)
            {
                if (!connection.closeRequested && limit - connection.consumedPosition > termLength)
                {
                    connection.requestClose("too slow for fc=" + params.flowControl().name().toLowerCase() +
                        ": " + (limit - connection.consumedPosition) + " bytes behind the limit");
                }
            }
        }

        // An admitted subscriber counts in the pace from admission (its join position is fixed then), but the window
        // opens only once one has finished its handshake, and after the publication says it is connected: an offer
        // before that is NOT_CONNECTED, as in Aeron (whose limit moves only on a subscriber's status), rather than
        // accepted while isConnected() is still false.
        if (anyReady != wasConnected)
        {
            wasConnected = anyReady;
            log.connected(anyReady);
        }
        if (limit > lastLimit && anyReady)
        {
            lastLimit = limit;
            log.publisherLimit().setRelease(limit);
        }
        return 0;
    }

    private int housekeeping(final long nowNs)
    {
        int work = 0;
        final SubscriberConnection[] connections = this.connections;
        for (final SubscriberConnection connection : connections)
        {
            connection.checkHealth(completions, nowNs, params.timeoutNs(), "status from the subscriber");
            connection.publishCounters(scanPosition - connection.consumedPosition);
            if (null != connection.immediateCommit)
            {
                RdmaCounters.set(connection.counters.immediates, connection.immediateCommit.immediatesPosted);
                RdmaCounters.set(connection.counters.creditStalls, connection.immediateCommit.creditStalls);
            }
            if (connection.closeRequested)
            {
                retire(connection);
                work++;
            }
        }
        sideCounters.publish(tornReadCount, this.connections.length);
        return work;
    }

    /**
     * A graceful close, as Aeron's: every committed frame goes out, then a position block stamped end-of-stream, and
     * the close waits (bounded) for that WRITE's completion, so the subscriber can drain what it has not read yet
     * and see {@code isEndOfStream()} before its image goes. A subscriber that is gone or too slow is not waited
     * for beyond {@link #END_OF_STREAM_WAIT_NS}.
     */
    private void sendEndOfStream()
    {
        awaitOpenClaims();
        // The bound is wall time, not the driver's clock: a user-supplied NanoClock that stands still (a test's
        // manual clock) must not turn close() into an endless wait on a subscriber that never completes.
        final long deadlineNs = System.nanoTime() + Math.min(END_OF_STREAM_WAIT_NS, params.timeoutNs());
        for (final SubscriberConnection connection : connections)
        {
            if (!connection.ready || connection.closeRequested)
            {
                continue;
            }
            while (connection.sentPosition < scanPosition && !connection.closeRequested &&
                System.nanoTime() - deadlineNs < 0)
            {
                if (0 == send(connection, clock.nanoTime()))
                {
                    connection.reapCompletions(completions);
                    readStatus(connection, clock.nanoTime()); // commit=imm: credits come back with the status
                    Thread.yield();
                }
            }
            if (connection.sentPosition < scanPosition || !postEndOfStream(connection, deadlineNs))
            {
                continue;
            }
            final long endOfStreamSeq = connection.wrsPosted;
            while (connection.wrsCompleted < endOfStreamSeq && !connection.closeRequested &&
                System.nanoTime() - deadlineNs < 0)
            {
                connection.reapCompletions(completions);
                Thread.yield();
            }
        }
    }

    /**
     * A claim still open when the publication closed (the producer position is past the last committed frame) is
     * waited for, bounded, before the end of stream is placed: as Aeron's draining publication waits for its
     * producer position, a claim committed or aborted just after {@code close()} still goes out. Past the bound the
     * end of stream is placed at the last committed frame and the claim is never sent.
     */
    private void awaitOpenClaims()
    {
        scan();
        final long deadlineNs = System.nanoTime() + Math.min(END_OF_STREAM_WAIT_NS, params.timeoutNs());
        while (scanPosition < log.producerPosition() && System.nanoTime() - deadlineNs < 0)
        {
            if (0 == scan())
            {
                Thread.yield();
            }
        }
    }

    private boolean postEndOfStream(final SubscriberConnection connection, final long deadlineNs)
    {
        while (!connection.hasRoomFor(1))
        {
            connection.reapCompletions(completions);
            if (connection.closeRequested || System.nanoTime() - deadlineNs >= 0)
            {
                return false;
            }
            Thread.yield();
        }
        batch.clear();
        final long seq = connection.wrsPosted + 1;
        final int flags = connection.addSlotWrite(batch, seq, connection.sentPosition,
            SlotLayout.END_OF_STREAM_TIMESTAMP, connection.counterAddress, connection.counterRkey, 1);
        if (PostResult.OK != connection.qp.postSend(batch))
        {
            return false;
        }
        connection.onPosted(seq, flags, 0, 0);
        return true;
    }

    private void retire(final SubscriberConnection connection)
    {
        connections = ArrayUtil.remove(connections, connection);
        connection.retire();
    }

    public void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        control.stopAccepting();
        sendEndOfStream();
        for (final SubscriberConnection connection : connections)
        {
            connection.requestClose("publication closed");
            connection.retire();
        }
        connections = EMPTY;
        RcLink.retireQueued(newConnections, "publication closed");
        log.connected(false);
        control.close();
        sideCounters.free();
        endpoint.close();
    }
}
