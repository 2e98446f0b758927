package io.verbus.media.rdma;

import io.verbus.common.RateLimitedLog;
import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionChannel;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.media.rdma.protocol.ConnectFlyweight;
import io.verbus.media.rdma.protocol.HandshakeException;
import io.verbus.media.rdma.protocol.HandshakeValidator;
import io.verbus.media.rdma.protocol.SlotLayout;
import io.verbus.media.rdma.protocol.SocketMessageTransport;
import io.verbus.media.rdma.protocol.SubscriberHandshake;
import org.agrona.concurrent.OneToOneConcurrentArrayQueue;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The subscription's control thread: connects to the publisher's endpoint, runs the handshake, registers a fresh
 * ring and position block for each connection (after the publisher proved it knows the secret), hands the
 * connection to the receiver, watches the control socket, and when the receiver lets go deregisters everything,
 * keeps the ring memory for a linger period (a poll may still be reading it) and reconnects.
 */
final class SubscriberControl implements AutoCloseable
{
    private static final System.Logger LOGGER = PublisherControl.LOGGER;
    private static final long MIN_BACKOFF_MS = 50;
    /** A subscription that starts before its publisher connects within this of the publisher's start. */
    private static final long MAX_BACKOFF_MS = 250;
    private static final int POSITION_BLOCKS = 16;

    private final RdmaChannelContext context;
    private final RdmaChannelParams params;
    private final int streamId;
    private final OneToOneConcurrentArrayQueue<ImageConnection> newConnections;
    private final String name;
    private final long lingerNs;
    private final SubscriberLimits limits;
    private final Thread thread;
    private final RejectedHandshakes rejections;
    private final ConnectionResources resources = new ConnectionResources();
    private final AtomicLong connectionsMade = new AtomicLong();
    private final ArrayDeque<Lingering> lingering = new ArrayDeque<>();
    private final AtomicLong imageIds;
    private final ConnectFailureLog connectFailures;
    private final RateLimitedLog rejectionLog = new RateLimitedLog(LOGGER, RateLimitedLog.DEFAULT_INTERVAL_NS);
    private final RateLimitedLog failureLog = new RateLimitedLog(LOGGER, RateLimitedLog.DEFAULT_INTERVAL_NS);
    private final HandshakeFailureReport handshakeFailures;
    private final CatchUpReader catchUpReader = new CatchUpReader();
    /** Why the last catch-up's READs failed, until the next handshake has joined live instead (control thread). */
    private String failedCatchUp;
    private final RdmaCounters.CatchUp catchUpCounters;
    private FabricEndpoint endpoint;
    private BlockPool positionBlocks;
    private BlockPool sourceBlocks;
    private volatile boolean running = true;
    private volatile Socket currentSocket;

    /** A ring a poll may still read, and (commit=imm) the QP and CQs a poll may still reap and post to. */
    private record Lingering(FabricEndpoint endpoint, MemorySegment ring, long releaseAtNs, Runnable deferredFree)
    {
    }

    /**
     * @param context        the channel, the driver's services, the fabric configuration and the secret.
     * @param name           the subscription's name in log lines and counter labels (the receiver's).
     * @param streamId       the subscription's stream.
     * @param newConnections where connected images go to the receiver.
     * @param imageIds       the source of image ids.
     */
    SubscriberControl(
        final RdmaChannelContext context, final String name, final int streamId,
        final OneToOneConcurrentArrayQueue<ImageConnection> newConnections, final AtomicLong imageIds)
    {
        this.context = context;
        this.name = name;
        this.params = context.params();
        this.streamId = streamId;
        this.newConnections = newConnections;
        this.imageIds = imageIds;
        this.lingerNs = Math.max(TimeUnit.SECONDS.toNanos(1), params.timeoutNs());
        this.connectFailures = new ConnectFailureLog(LOGGER, name,
            params.endpointHost() + ":" + params.endpointPort(), System::nanoTime);
        this.limits = SubscriberLimits.fromSystemProperties();
        this.handshakeFailures = new HandshakeFailureReport(context.media().errorHandler(), name);
        rejections = new RejectedHandshakes(context.countersManager(), name, () -> 0);
        catchUpCounters = new RdmaCounters.CatchUp(params.isJoinRecent() ? context.countersManager() : null, name);
        thread = Thread.ofPlatform().daemon().name("verbus-rdma-sub-" + streamId).unstarted(this::run);
        thread.start();
    }

    /** @return handshakes that failed, on either side: each one is followed by a retry. */
    long rejectedHandshakes()
    {
        return rejections.count();
    }

    /** @return what this subscription's connections hold registered and created right now (tests check it). */
    ConnectionResources resources()
    {
        return resources;
    }

    private void run()
    {
        long backoffMs = MIN_BACKOFF_MS;
        while (running)
        {
            releaseLingering(false);
            ImageConnection connection = null;
            try (Socket socket = new Socket())
            {
                currentSocket = socket;
                socket.connect(new InetSocketAddress(params.endpointHost(), params.endpointPort()),
                    (int)Math.min(context.stepTimeoutMs(), 1000));
                final SocketMessageTransport transport = new SocketMessageTransport(socket);
                connectFailures.onConnected();
                final ImageConnection connected = connect(transport);
                connection = connected;
                backoffMs = MIN_BACKOFF_MS;
                handshakeFailures.onConnected();
                connected.watchControl(() -> running, "publisher");
            }
            catch (final HandshakeException ex)
            {
                rejections.increment();
                rejectionLog.log(System.Logger.Level.WARNING, "rdma subscription " + name + ": handshake failed: " +
                    ex.getMessage() + "; nothing registered for it; retrying");
                reportToApplication(ex);
            }
            catch (final IOException ex)
            {
                // publisher not there (yet), or a typo: say which, rate-limited, and retry with backoff
                if (null == connection && running)
                {
                    connectFailures.onFailure(ex);
                }
                if (null != connection)
                {
                    connection.requestClose("control connection failed: " + ex);
                }
            }
            catch (final RuntimeException | InternalError ex)
            {
                // Whatever the environment throws (a full or read-only fabric directory, a SIGBUS turned into an
                // InternalError by the JVM), this thread must live on and retry: it is the subscription's only way
                // back to its publisher.
                failureLog.log(System.Logger.Level.WARNING, "rdma subscription " + name + ": " + ex + "; retrying");
                if (null != connection)
                {
                    connection.requestClose("control failure: " + ex);
                }
            }
            currentSocket = null;
            if (null != connection)
            {
                awaitRetiredThenFree(connection);
            }
            if (running)
            {
                ControlThreads.sleep(backoffMs);
                backoffMs = Math.min(MAX_BACKOFF_MS, backoffMs * 2);
            }
        }
        releaseLingering(true);
    }

    /** A configuration error reaches the application's error handler too; a handler that throws stops nothing. */
    private void reportToApplication(final HandshakeException ex)
    {
        try
        {
            handshakeFailures.onFailure(ex, System.nanoTime());
        }
        catch (final RuntimeException handlerFailure)
        {
            failureLog.log(System.Logger.Level.WARNING, "rdma subscription " + name + ": the error handler threw " +
                handlerFailure + "; retrying");
        }
    }

    private ImageConnection connect(final SocketMessageTransport transport) throws HandshakeException
    {
        final int requiredProvider = FabricEndpoint.requiredProviderId(params.provider());
        final long requested = !params.isJoinRecent() ? ConnectFlyweight.CATCH_UP_NONE :
            params.joinPosition() >= 0 ? params.joinPosition() : ConnectFlyweight.CATCH_UP_TERM_START;
        // After a catch-up whose READs failed, ask for none this once: join live and report the gap, rather than
        // fail the same way on every retry (READs that cannot finish in time, a grant this host cannot open).
        final long catchUpRequest = null != failedCatchUp ? ConnectFlyweight.CATCH_UP_NONE : requested;
        final SubscriberHandshake handshake = new SubscriberHandshake(context.newAuthenticator(), streamId,
            requiredProvider, params.isGroupTagSet(), params.groupTag(), context.stepTimeoutMs(), catchUpRequest);
        final ImageConnection[] result = new ImageConnection[1];
        final SubscriberHandshake.Result handshakeResult = handshake.run(transport, new SubscriberHandshake.Resources()
        {
            public SubscriberHandshake.LocalOffer prepare(final SubscriberHandshake.PublicationInfo publication)
                throws HandshakeException
            {
                return SubscriberControl.this.prepare(publication, transport.socket().getLocalAddress());
            }

            public void connect(
                final SubscriberHandshake.LocalOffer offer,
                final SubscriberHandshake.PublicationInfo publication,
                final SubscriberHandshake.Accepted accepted) throws HandshakeException
            {
                final Prepared prepared = (Prepared)offer.attachment();
                prepared.endpoint.checkPeerNicAddress(
                    accepted.publisherQp(), transport.socket().getInetAddress(), "ACCEPT.qp");
                try
                {
                    prepared.qp.connect(FabricEndpoint.toConnectionInfo(accepted.publisherQp()));
                }
                catch (final RuntimeException | InternalError ex) // InternalError: a peer's mapped file truncated
                {
                    throw new HandshakeException(HandshakeException.Reason.RESOURCES, "QP connect failed: " + ex, ex);
                }
                final long imageId = imageIds.incrementAndGet();
                final String connectionName = name + " session=" + publication.sessionId() + " image=" + imageId;
                final ImageConnection image = new ImageConnection(imageId, connectionName, publication,
                    accepted.joinPosition(), prepared.endpoint, prepared.pd, prepared.ring, prepared.ringRegion,
                    prepared.positionIndex, prepared.positionRegion, prepared.sourceRegion, prepared.qp,
                    prepared.eventChannel, prepared.commit,
                    new ImageConnection.StatusSlot(accepted.statusAddress(), accepted.statusRkey()),
                    "rdma:" + params.endpointHost() + ":" + params.endpointPort(),
                    new RdmaCounters.Connection(context.countersManager(), connectionName,
                        null != prepared.eventChannel), transport);
                try
                {
                    // RECVs for every WRITE_WITH_IMM the publisher may have in flight, posted before READY (no RNR).
                    if (image.bound instanceof ImmediateBound immediate)
                    {
                        if (!immediate.postReceives(prepared.credits + 1))
                        {
                            throw new HandshakeException(HandshakeException.Reason.RESOURCES, "cannot post " +
                                (prepared.credits + 1) + " RECVs for commit=imm");
                        }
                        image.statusImmediateThreshold = Math.max(1, prepared.credits / 4);
                    }
                    catchUp(image, requested, accepted);
                }
                catch (final HandshakeException | RuntimeException | InternalError ex)
                {
                    image.counters.close();
                    throw ex;
                }
                result[0] = image;
            }

            public void release(final SubscriberHandshake.LocalOffer offer)
            {
                // After connect() built the image, READY may still fail to go out (the publisher reset the socket,
                // or this subscription closed during a catch-up): its counters go back with the rest.
                final ImageConnection built = result[0];
                result[0] = null;
                final Prepared prepared = (Prepared)offer.attachment();
                freeParts(prepared.endpoint, prepared.pd, prepared.ring, prepared.ringRegion, prepared.positionIndex,
                    prepared.positionRegion, prepared.sourceRegion, prepared.cq, prepared.receiveCq,
                    prepared.eventChannel, prepared.qp, null == built ? null : built.counters, false);
            }
        });
        final ImageConnection connection = result[0];
        if (!newConnections.offer(connection))
        {
            freeConnection(connection, false); // the receiver never saw it and no image was announced: no linger
            throw new HandshakeException(HandshakeException.Reason.RESOURCES, "receiver queue full");
        }
        connectionsMade.incrementAndGet();
        LOGGER.log(System.Logger.Level.DEBUG, "rdma subscription " + connection.name + ": connected at position " +
            handshakeResult.accepted().joinPosition() + " over " + connection.endpoint.providerName());
        LOGGER.log(System.Logger.Level.INFO, "rdma subscription " + connection.name + ": commit=" +
            connection.commit.mode().keyValue() + " (" + connection.commit.reason() + ")");
        return connection;
    }

    /**
     * A granted catch-up READs {@code [catchUpPosition, joinPosition)} from the publisher's log before the image is
     * announced (the publisher holds its limit within a term of the catch-up start meanwhile, so that range is not
     * cleaned under the READ); a requested position the log no longer held is reported as a gap.
     */
    private void catchUp(final ImageConnection image, final long request, final SubscriberHandshake.Accepted accepted)
        throws HandshakeException
    {
        if (null != failedCatchUp && ConnectFlyweight.CATCH_UP_NONE != request)
        {
            final long join = accepted.joinPosition();
            final long from = request >= 0 ? request : join - (join & (image.termLength - 1));
            final long gap = Math.max(0, join - from);
            catchUpCounters.onGap(gap);
            LOGGER.log(System.Logger.Level.WARNING, "rdma subscription " + image.name + ": did not catch up from " +
                from + ": the catch-up by RDMA READ failed before (" + failedCatchUp + "); joined live at " + join +
                ", GAP of " + gap + " bytes [" + from + ", " + join + ")");
            failedCatchUp = null;
            return;
        }
        if (request >= 0 && accepted.catchUpPosition() > request)
        {
            final long gap = accepted.catchUpPosition() - request;
            catchUpCounters.onGap(gap);
            final String why = accepted.oldestPosition() < 0 ?
                "the publisher could not grant a READ of its log (its log says why)" :
                "it is no longer in the publisher's log (oldest held " + accepted.oldestPosition() + ")";
            LOGGER.log(System.Logger.Level.WARNING, "rdma subscription " + image.name + ": cannot catch up from " +
                "join-position " + request + ": " + why + "; joined at " + accepted.catchUpPosition() + ", GAP of " +
                gap + " bytes [" + request + ", " + accepted.catchUpPosition() + ")");
        }
        if (accepted.catchUpPosition() < accepted.joinPosition())
        {
            final long startNs = System.nanoTime();
            final long bytes;
            try
            {
                bytes = catchUpReader.read(image, accepted.catchUpPosition(), accepted.joinPosition(),
                    accepted.logAddress(), accepted.logRkey(),
                    startNs + TimeUnit.MILLISECONDS.toNanos(context.stepTimeoutMs()) / 2);
            }
            catch (final HandshakeException ex)
            {
                // Frames that do not line up (a join-position inside a frame) are refused as they are; READs that
                // failed or ran out of time would fail again, so the next attempt joins live.
                if (HandshakeException.Reason.OUT_OF_RANGE != ex.reason())
                {
                    failedCatchUp = ex.getMessage();
                    LOGGER.log(System.Logger.Level.WARNING, "rdma subscription " + image.name + ": the catch-up " +
                        "by RDMA READ failed (" + ex.getMessage() + "); the next attempt joins live and reports " +
                        "the gap");
                }
                throw ex;
            }
            final long elapsedNs = System.nanoTime() - startNs;
            catchUpCounters.onCatchUp(bytes, elapsedNs);
            image.startPosition = accepted.catchUpPosition();
            LOGGER.log(System.Logger.Level.INFO, "rdma subscription " + image.name + ": caught up " + bytes +
                " bytes [" + accepted.catchUpPosition() + ", " + accepted.joinPosition() + ") by RDMA READ in " +
                TimeUnit.NANOSECONDS.toMicros(elapsedNs) + " us");
        }
    }

    long connectionsMade()
    {
        return connectionsMade.get();
    }

    private record Prepared(FabricEndpoint endpoint, ProtectionDomain pd, MemorySegment ring, MemoryRegion ringRegion,
        int positionIndex, MemoryRegion positionRegion, MemoryRegion sourceRegion, CompletionQueue cq,
        CompletionQueue receiveCq, CompletionChannel eventChannel, QueuePair qp, CommitMode.Choice commit, int credits)
    {
    }

    private SubscriberHandshake.LocalOffer prepare(
        final SubscriberHandshake.PublicationInfo publication, final java.net.InetAddress controlLocal)
        throws HandshakeException
    {
        HandshakeValidator.validateTermLength("CHALLENGE.termLength", publication.termLength());
        if (params.isSessionIdSet() && publication.sessionId() != params.sessionId())
        {
            // Aeron's session-specific subscription: any other session is refused before anything is registered.
            throw new HandshakeException(HandshakeException.Reason.SESSION_MISMATCH, "the publication's session is " +
                publication.sessionId() + " but this subscription is for session-id=" + params.sessionId());
        }
        if (publication.termLength() > limits.maxTermLength())
        {
            throw new HandshakeException(HandshakeException.Reason.OUT_OF_RANGE, "CHALLENGE.termLength=" +
                publication.termLength() + " exceeds this subscriber's cap " +
                SubscriberLimits.MAX_TERM_LENGTH_PROP_NAME + "=" + limits.maxTermLength() +
                " (a ring is three terms of pinned memory)");
        }
        final FabricEndpoint endpoint = withinRingMemory(endpointFor(publication.providerId()),
            publication.providerId(), 3L * publication.termLength());
        final CommitMode.Choice commit = agreeCommit(endpoint, publication.commitWord());
        final boolean immediate = CommitMode.IMM == commit.mode();
        final int credits = immediate ? ConnectionResources.receiveCredits(endpoint, params) : 0;
        ProtectionDomain pd = null;
        MemorySegment ring = null;
        MemoryRegion ringRegion = null;
        int positionIndex = -1;
        MemoryRegion positionRegion = null;
        MemoryRegion sourceRegion = null;
        CompletionQueue cq = null;
        CompletionQueue receiveCq = null;
        CompletionChannel eventChannel = null;
        QueuePair qp = null;
        try
        {
            final long ringLength = 3L * publication.termLength();
            ring = endpoint.acquireRing(ringLength);
            // This publisher's QP and the regions it may touch are in a PD of their own: another publisher's ring
            // rkey opens nothing through this QP.
            pd = resources.allocateProtectionDomain(endpoint);
            // REMOTE_WRITE only (plus the LOCAL_WRITE verbs demands with it): the publisher cannot read it.
            ringRegion = resources.register(pd, ring, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            positionIndex = positionBlocks.acquire();
            positionRegion = resources.register(pd, positionBlocks.block(positionIndex),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            sourceRegion = resources.register(pd, sourceBlocks.block(positionIndex), 0);
            cq = ConnectionResources.createCompletionQueue(endpoint, params);
            // Only status WRITEs go out on this QP: the position block's length is all it inlines.
            if (immediate)
            {
                // The immediates complete on their own CQ, which only the image's polling thread reaps.
                // idle=event: a channel of its own, on which only this connection's image ever blocks.
                eventChannel = params.isIdleEvent() ? endpoint.device().createCompletionChannel() : null;
                receiveCq = ConnectionResources.createReceiveCompletionQueue(endpoint, credits + 1, eventChannel);
                qp = resources.createQueuePair(endpoint, pd, cq, receiveCq, credits + 1, params,
                    SlotLayout.WRITE_LENGTH);
            }
            else
            {
                qp = resources.createQueuePair(endpoint, pd, cq, params, SlotLayout.WRITE_LENGTH);
            }
            final Prepared prepared = new Prepared(endpoint, pd, ring, ringRegion, positionIndex, positionRegion,
                sourceRegion, cq, receiveCq, eventChannel, qp, commit, credits);
            return new SubscriberHandshake.LocalOffer(ringRegion.address(), ringLength, ringRegion.rkey(),
                positionRegion.address(), positionRegion.rkey(),
                endpoint.toQpInfo(qp.localConnectionInfo(), qp.maxInlineData(), controlLocal), prepared,
                commit.mode().code(),
                credits);
        }
        catch (final HandshakeException ex)
        {
            freeParts(endpoint, pd, ring, ringRegion, positionIndex, positionRegion, sourceRegion, cq, receiveCq,
                eventChannel, qp, null, false);
            throw ex;
        }
        catch (final RuntimeException | InternalError ex)
        {
            freeParts(endpoint, pd, ring, ringRegion, positionIndex, positionRegion, sourceRegion, cq, receiveCq,
                eventChannel, qp, null, false);
            throw new HandshakeException(HandshakeException.Reason.RESOURCES,
                "cannot register the ring: " + ex.getMessage(), ex);
        }
    }

    /** The commit mode both ends agree on; a mismatch is refused before anything is registered. */
    private CommitMode.Choice agreeCommit(final FabricEndpoint endpoint, final int challengeWord)
        throws HandshakeException
    {
        try
        {
            return CommitMode.agree(params.commitMode(), challengeWord,
                CommitMode.auto(endpoint.device().attributes(), context.fabricContext()));
        }
        catch (final IllegalStateException ex)
        {
            throw new HandshakeException(HandshakeException.Reason.COMMIT_MISMATCH, ex.getMessage());
        }
    }

    /**
     * Keeps the ring memory this subscription holds under {@link SubscriberLimits#maxRingMemory()}. Device memory is
     * only given back when the device closes, so when a new ring would pass the cap and no lingering ring can still
     * be read, the endpoint is reopened afresh; while rings linger the attempt is refused and retried later.
     */
    private FabricEndpoint withinRingMemory(final FabricEndpoint endpoint, final int providerId, final long ringLength)
        throws HandshakeException
    {
        if (endpoint.hasPooledRing(ringLength) || endpoint.ringBytesAllocated() + ringLength <= limits.maxRingMemory())
        {
            return endpoint;
        }
        if (lingering.isEmpty())
        {
            this.endpoint = null;
            endpoint.close();
            return endpointFor(providerId);
        }
        throw new HandshakeException(HandshakeException.Reason.RESOURCES, "a ring of " + ringLength +
            " bytes would take this subscription's ring memory past " + SubscriberLimits.MAX_RING_MEMORY_PROP_NAME +
            "=" + limits.maxRingMemory() + " (" + endpoint.ringBytesAllocated() + " held, some still lingering " +
            "after a disconnect); retrying after the linger");
    }

    private FabricEndpoint endpointFor(final int providerId) throws HandshakeException
    {
        final String providerName = FabricEndpoint.providerName(providerId);
        if (null != endpoint && endpoint.providerName().equals(providerName))
        {
            return endpoint;
        }
        if (null != endpoint)
        {
            if (!lingering.isEmpty())
            {
                // Closing the device frees every ring it allocated, the lingering ones too, which the application's
                // poll may still be reading: switch providers only once they are given back.
                throw new HandshakeException(HandshakeException.Reason.RESOURCES, "the publisher is now on " +
                    providerName + " but a ring of the " + endpoint.providerName() + " device still lingers after a " +
                    "disconnect; retrying after the linger");
            }
            endpoint.close();
            endpoint = null;
        }
        FabricEndpoint opened = null;
        try
        {
            opened = FabricEndpoint.open(providerName, context.fabricContext());
            positionBlocks = new BlockPool(
                opened.device().allocateMemory((long)POSITION_BLOCKS * SlotLayout.BLOCK_LENGTH),
                SlotLayout.BLOCK_LENGTH);
            final int sourceLength = params.queueDepth() * SlotLayout.BLOCK_LENGTH;
            sourceBlocks = new BlockPool(opened.device().allocateMemory((long)POSITION_BLOCKS * sourceLength),
                sourceLength);
            endpoint = opened;
            return endpoint;
        }
        catch (final RuntimeException | InternalError ex)
        {
            // Half opened (e.g. the fabric directory filled up): close it, so the next attempt starts afresh.
            if (null != opened)
            {
                opened.close();
            }
            throw new HandshakeException(HandshakeException.Reason.RESOURCES,
                "cannot open fabric provider " + providerName + ": " + ex.getMessage(), ex);
        }
    }

    private static void closeChannel(final CompletionChannel eventChannel)
    {
        if (null != eventChannel)
        {
            eventChannel.close();
        }
    }

    /** Called by the receiver once it no longer touches the connection. */
    private void awaitRetiredThenFree(final ImageConnection connection)
    {
        while (!connection.retired && running)
        {
            ControlThreads.sleep(1);
        }
        ControlThreads.await(() -> connection.retired, ControlThreads.RETIRE_WAIT_MS);
        LOGGER.log(System.Logger.Level.INFO, "rdma subscription " + connection.name + ": disconnected: " +
            connection.closeReason);
        freeConnection(connection, true);
    }

    private void freeConnection(final ImageConnection connection, final boolean linger)
    {
        freeParts(connection.endpoint, connection.pd, connection.ring, connection.ringRegion,
            connection.positionBlockIndex, connection.positionRegion, connection.sourceRegion, connection.cq,
            connection.receiveCq, connection.eventChannel, connection.qp, connection.counters, linger);
    }

    private void freeParts(
        final FabricEndpoint endpoint,
        final ProtectionDomain pd,
        final MemorySegment ring,
        final MemoryRegion ringRegion,
        final int positionIndex,
        final MemoryRegion positionRegion,
        final MemoryRegion sourceRegion,
        final CompletionQueue cq,
        final CompletionQueue receiveCq,
        final CompletionChannel eventChannel,
        final QueuePair qp,
        final RdmaCounters.Connection counters,
        final boolean linger)
    {
        Runnable deferredFree = null;
        if (null != receiveCq && linger)
        {
            // commit=imm: a poll still in progress may reap the receive CQ and post a RECV, so the QP and its CQs
            // linger with the ring (and with idle=event the channel, on which a poller may still wait: its waits are
            // bounded well below the linger); the regions go now (the publisher's rkeys die at once).
            resources.free(null, null, null, ringRegion, positionRegion, sourceRegion);
            deferredFree = () ->
            {
                resources.free(pd, qp, cq);
                receiveCq.close();
                closeChannel(eventChannel);
            };
        }
        else
        {
            resources.free(pd, qp, cq, ringRegion, positionRegion, sourceRegion);
            if (null != receiveCq)
            {
                receiveCq.close();
            }
            closeChannel(eventChannel);
        }
        if (positionIndex >= 0)
        {
            positionBlocks.release(positionIndex);
        }
        if (null != ring)
        {
            if (linger)
            {
                lingering.addLast(new Lingering(endpoint, ring, System.nanoTime() + lingerNs, deferredFree));
            }
            else
            {
                endpoint.releaseRing(ring);
            }
        }
        if (null != counters)
        {
            counters.close();
        }
    }

    private void releaseLingering(final boolean all)
    {
        final long nowNs = System.nanoTime();
        while (!lingering.isEmpty() && (all || lingering.peekFirst().releaseAtNs() <= nowNs))
        {
            final Lingering entry = lingering.pollFirst();
            if (null != entry.deferredFree())
            {
                entry.deferredFree().run();
            }
            entry.endpoint().releaseRing(entry.ring());
        }
    }

    public void close()
    {
        running = false;
        final Socket socket = currentSocket;
        if (null != socket)
        {
            ControlThreads.closeQuietly(socket);
        }
        ControlThreads.join(thread, ControlThreads.CLOSE_JOIN_MS);
        if (null != endpoint)
        {
            endpoint.close();
        }
        rejections.close();
        catchUpCounters.close();
    }

    long catchUpGapBytes()
    {
        return catchUpCounters.gapBytes();
    }

    /** @return bytes caught up by RDMA READ since start (tests). */
    long catchUpBytes()
    {
        return catchUpCounters.bytes();
    }
}
