package io.verbus.media.rdma;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.media.PublicationLog;
import io.verbus.media.rdma.protocol.HandshakeException;
import io.verbus.media.rdma.protocol.PrefixedTransport;
import io.verbus.media.rdma.protocol.PublisherHandshake;
import io.verbus.media.rdma.protocol.QpInfoCodec;
import io.verbus.media.rdma.protocol.SlotLayout;
import io.verbus.media.rdma.protocol.SocketMessageTransport;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.status.AtomicCounter;

import java.lang.foreign.MemorySegment;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The publication's control endpoint: listens on the channel's endpoint, runs one handshake per incoming
 * connection (each on one of the endpoint's connection threads), registers what an authenticated subscriber needs,
 * hands the connection to the sender, watches the control socket, and releases everything once the sender has let the
 * connection go.
 */
final class PublisherControl implements AutoCloseable
{
    static final System.Logger LOGGER = System.getLogger("io.verbus.media.rdma");
    private static final long JOIN_WAIT_SLEEP_MS = 1;

    private final RdmaChannelContext context;
    private final RdmaChannelParams params;
    private final PublicationLog log;
    private final FabricEndpoint endpoint;
    private final ManyToOneConcurrentArrayQueue<SubscriberConnection> newConnections;
    private final ControlListener listener;
    private final BlockPool statusSlots;
    private final BlockPool sourceBlocks;
    private final String name;
    /** What this publication's commit mode resolves to on its device, and the CHALLENGE word that says so. */
    private final CommitMode.Choice commitChoice;
    private final int commitWord;
    private final AtomicCounter portCounter;
    private final RejectedHandshakes rejections;
    private final ConnectionResources resources = new ConnectionResources();
    /** Subscribers admitted so far (whether or not their handshake then completed); names each connection. */
    private final AtomicLong connectionIds = new AtomicLong();
    private final Set<Thread> handlers = ConcurrentHashMap.newKeySet();
    private final Set<SocketMessageTransport> transports = ConcurrentHashMap.newKeySet();
    private volatile boolean running = true;
    /** The last connection handed to the sender, for tests that check the provider released it. */
    volatile SubscriberConnection lastAdmitted;

    /**
     * @param context        the channel, the driver's services, the fabric configuration and the secret.
     * @param name           the publication's name in log lines and counter labels (the sender's).
     * @param log            the publication's log.
     * @param endpoint       the sender's fabric endpoint.
     * @param newConnections where admitted subscribers go to the sender.
     * @param maxSubscribers status slots to register.
     */
    PublisherControl(
        final RdmaChannelContext context, final String name, final PublicationLog log, final FabricEndpoint endpoint,
        final ManyToOneConcurrentArrayQueue<SubscriberConnection> newConnections, final int maxSubscribers)
    {
        this.context = context;
        this.name = name;
        this.params = context.params();
        this.log = log;
        this.endpoint = endpoint;
        this.newConnections = newConnections;
        commitChoice = CommitMode.publisherChoice(params.commitMode(), endpoint.device().attributes(),
            context.fabricContext());
        commitWord = CommitMode.challengeWord(params.commitMode(), commitChoice);
        LOGGER.log(System.Logger.Level.INFO, "rdma publication " + name + ": commit=" + params.commitMode().keyValue() +
            (CommitMode.AUTO == params.commitMode() ? " chose " + commitChoice.mode().keyValue() : "") + " (" +
            commitChoice.reason() + ")" + (CommitMode.AUTO == params.commitMode() ?
            "; a subscriber with an explicit commit mode gets that one" : ""));
        // Registered once per publication: every subscriber gets its own slot, registered alone.
        final MemorySegment slots = endpoint.device().allocateMemory((long)maxSubscribers * SlotLayout.BLOCK_LENGTH);
        statusSlots = new BlockPool(slots, SlotLayout.BLOCK_LENGTH);
        final int sourceLength = params.queueDepth() * SlotLayout.BLOCK_LENGTH;
        sourceBlocks = new BlockPool(endpoint.device().allocateMemory((long)maxSubscribers * sourceLength),
            sourceLength);
        listener = ControlListener.register(params.endpointHost(), params.endpointPort(), log.streamId(),
            context.stepTimeoutMs(), new ControlListener.Handler()
            {
                public void onConnection(
                    final SocketMessageTransport transport, final byte[] hello, final PendingHandshake pending)
                {
                    PublisherControl.this.onConnection(transport, hello, pending);
                }

                public void onEndpointRejection()
                {
                    updateRejectedCounter();
                }
            });
        portCounter = RdmaCounters.allocate(context.countersManager(), RdmaCounters.CONTROL_PORT_TYPE_ID,
            "rdma control port: " + name + " " + params.endpointHost());
        RdmaCounters.set(portCounter, listener.port());
        // The counter shows what rejectedHandshakes() returns: this publication's rejections and its endpoint's, each
        // of which has its log line (or is counted in a rate-limited line's "and N more"). The endpoint may be shared
        // and may have rejected connections already.
        rejections = new RejectedHandshakes(context.countersManager(), name, listener::rejectedHandshakes);
    }

    int port()
    {
        return listener.port();
    }

    /** @return handshakes this publication refused plus connections its endpoint refused before dispatch. */
    long rejectedHandshakes()
    {
        return rejections.count();
    }

    /** @return subscribers admitted so far, including any whose handshake then failed (diagnostics, for tests). */
    long admissions()
    {
        return connectionIds.get();
    }

    /** The endpoint's count moved: show it (the endpoint may reject before this publication is fully built). */
    private void updateRejectedCounter()
    {
        final RejectedHandshakes counted = rejections;
        if (null != counted)
        {
            counted.update();
        }
    }

    /** A connection whose HELLO names this stream, on one of the endpoint's connection threads. */
    private void onConnection(
        final SocketMessageTransport socketTransport, final byte[] hello, final PendingHandshake pending)
    {
        if (!running)
        {
            socketTransport.close();
            return;
        }
        handlers.add(Thread.currentThread());
        transports.add(socketTransport);
        if (!running)
        {
            socketTransport.close(); // closed between the check above and the registration
        }
        handle(socketTransport, hello, pending);
    }

    private void handle(final SocketMessageTransport transport, final byte[] hello, final PendingHandshake pending)
    {
        SubscriberConnection connection = null;
        try
        {
            final SocketMessageTransport t = transport;
            final PublisherHandshake handshake = new PublisherHandshake(
                context.newAuthenticator(),
                new PublisherHandshake.Shape(log.sessionId(), log.streamId(), log.initialTermId(), log.termLength(),
                    io.aeron.logbuffer.LogBufferDescriptor.mtuLength(log.logBuffers().metaDataBuffer()),
                    endpoint.providerId(), commitWord),
                context.stepTimeoutMs());
            final PublisherHandshake.Admission admission = handshake.run(
                new PrefixedTransport(transport, hello), new PublisherHandshake.Resources()
            {
                public PublisherHandshake.Admission admit(final PublisherHandshake.SubscriberOffer offer)
                    throws HandshakeException
                {
                    pending.markAuthenticated(); // offers come only after the CONNECT's proof checked out
                    return PublisherControl.this.admit(offer, t);
                }

                public void release(final PublisherHandshake.Admission admission)
                {
                    final SubscriberConnection c = (SubscriberConnection)admission.attachment();
                    c.requestClose("handshake failed after admission");
                    awaitRetiredThenFree(c);
                }
            });
            final SubscriberConnection admitted = (SubscriberConnection)admission.attachment();
            connection = admitted;
            // Before ready (volatile, read by the sender): whoever sees the publication connected sees this too.
            lastAdmitted = admitted;
            admitted.ready = true;
            pending.finish(); // admitted: the endpoint's handshake slot and deadline no longer apply
            LOGGER.log(System.Logger.Level.INFO, "rdma publication " + name + ": subscriber " + admitted.name +
                " connected at position " + admitted.joinPosition + " over " + endpoint.providerName() + ", commit=" +
                (null == admitted.immediateCommit ? "counter" : "imm"));
            admitted.watchControl(() -> running, "subscriber");
            awaitRetiredThenFree(admitted);
        }
        catch (final HandshakeException ex)
        {
            rejections.increment();
            listener.logRejection(ex.reason().name(), "rdma publication " + name + ": rejected handshake from " +
                transport.peer() + ": " + listener.describe(ex, pending) + "; nothing registered for it");
        }
        catch (final RuntimeException | InternalError ex) // InternalError: SIGBUS on a peer's truncated shm file
        {
            if (null != connection)
            {
                LOGGER.log(System.Logger.Level.WARNING, "rdma publication " + name + ": control connection from " +
                    transport.peer() + " failed: " + ex);
                connection.requestClose("control failure: " + ex);
                awaitRetiredThenFree(connection);
            }
            else
            {
                // Failed before admission: a rejection like any other, counted and logged as one.
                rejections.increment();
                listener.logRejection("FAILED", "rdma publication " + name + ": rejected handshake from " +
                    transport.peer() + ": " + ex + "; nothing registered for it");
            }
        }
        finally
        {
            transport.close();
            transports.remove(transport);
            handlers.remove(Thread.currentThread());
        }
    }

    private PublisherHandshake.Admission admit(
        final PublisherHandshake.SubscriberOffer offer, final SocketMessageTransport transport)
        throws HandshakeException
    {
        if (!running)
        {
            throw new HandshakeException(HandshakeException.Reason.RESOURCES, "publication closing");
        }
        // Before anything is registered: a subscriber may only have this NIC connect back to where it is.
        endpoint.checkPeerNicAddress(offer.qp(), transport.socket().getInetAddress(), "CONNECT.qp");
        final int slot = statusSlots.acquire();
        ProtectionDomain pd = null;
        MemoryRegion logSourceRegion = null;
        MemoryRegion statusRegion = null;
        MemoryRegion sourceRegion = null;
        CompletionQueue cq = null;
        QueuePair qp = null;
        RdmaCounters.Connection counters = null;
        SubscriberConnection connection = null;
        try
        {
            // Everything this subscriber's QP may touch is in a PD of its own: another subscriber's status rkey, or
            // its catch-up grant, opens nothing through this QP.
            pd = resources.allocateProtectionDomain(endpoint);
            // The data WRITEs' source: the terms, local access only (no remote right at all).
            logSourceRegion = resources.register(pd, terms(), 0);
            // REMOTE_WRITE only (verbs requires LOCAL_WRITE with it); just this subscriber's slot.
            statusRegion = resources.register(pd, statusSlots.block(slot),
                AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
            sourceRegion = resources.register(pd, sourceBlocks.block(slot), 0);
            cq = ConnectionResources.createCompletionQueue(endpoint, params);
            // Data WRITEs up to the channel's inline length, and at least the position block's, go INLINE.
            final int inlineLength = Math.max(params.inlineLength(), SlotLayout.WRITE_LENGTH);
            qp = resources.createQueuePair(endpoint, pd, cq, params, inlineLength);
            qp.connect(FabricEndpoint.toConnectionInfo(offer.qp()));

            final long id = connectionIds.incrementAndGet();
            final String connectionName = name + " subscriber=" + id + " peer=" + offer.peer();
            counters = new RdmaCounters.Connection(context.countersManager(), connectionName);
            final int inlineLimit = Math.min(params.inlineLength(), qp.maxInlineData());
            final ImmediateCommit immediateCommit = CommitMode.IMM.code() == offer.commit() ?
                new ImmediateCommit(offer.receiveCredits()) : null;
            RdmaCounters.set(counters.commitMode, offer.commit());
            connection = new SubscriberConnection(id, connectionName, pd, qp, cq, logSourceRegion,
                statusRegion, slot, sourceRegion, offer.ringAddress(), offer.ringRkey(), offer.counterAddress(),
                offer.counterRkey(), offer.hasGroupTag(), offer.groupTag(), inlineLimit, immediateCommit, counters,
                transport);
            connection.catchUpRequest = offer.catchUpRequest();
            if (!newConnections.offer(connection))
            {
                final SubscriberConnection refused = connection;
                connection = null;
                refused.retired = true;
                freeParts(slot, pd, cq, qp, counters, logSourceRegion, statusRegion, sourceRegion);
                throw new HandshakeException(HandshakeException.Reason.RESOURCES, "sender queue full");
            }
            final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(context.stepTimeoutMs());
            while (connection.joinPosition < 0)
            {
                if (System.nanoTime() > deadlineNs || !running)
                {
                    connection.requestClose("sender did not take the connection");
                    // The sender may still drain it later; it then sees the close and retires it.
                    throw new HandshakeException(HandshakeException.Reason.RESOURCES,
                        "the publication's sender did not take the subscriber within " + context.stepTimeoutMs() +
                        " ms");
                }
                ControlThreads.sleep(JOIN_WAIT_SLEEP_MS);
            }
            final QpInfoCodec.QpInfo qpInfo = endpoint.toQpInfo(
                qp.localConnectionInfo(), qp.maxInlineData(), transport.socket().getLocalAddress());
            final MemoryRegion logRegion = connection.catchUpPosition < connection.joinPosition ?
                registerLogForRead(connection) : null;
            if (null != logRegion)
            {
                return new PublisherHandshake.Admission(statusRegion.address(), statusRegion.rkey(),
                    connection.joinPosition, qpInfo, connection, connection.catchUpPosition,
                    connection.oldestPosition, logRegion.address(), logRegion.length(), logRegion.rkey());
            }
            // No catch-up (asked for none, or nothing the log still holds, or no READ grant): live from the join.
            final long oldest = connection.catchUpPosition < connection.joinPosition ? -1 : connection.oldestPosition;
            return new PublisherHandshake.Admission(statusRegion.address(), statusRegion.rkey(),
                connection.joinPosition, qpInfo, connection, connection.joinPosition, oldest, 0, 0, 0);
        }
        catch (final HandshakeException ex)
        {
            if (null != connection)
            {
                // Queued for the sender: it retires the connection (or already did), then it is freed here.
                connection.requestClose("handshake failed: " + ex.getMessage());
                awaitRetiredThenFree(connection);
            }
            else if (null == counters)
            {
                freeParts(slot, pd, cq, qp, null, logSourceRegion, statusRegion, sourceRegion);
            }
            throw ex;
        }
        catch (final RuntimeException | InternalError ex)
        {
            if (null != connection)
            {
                connection.requestClose("admission failed: " + ex);
                awaitRetiredThenFree(connection);
            }
            else
            {
                freeParts(slot, pd, cq, qp, counters, logSourceRegion, statusRegion, sourceRegion);
            }
            throw new HandshakeException(HandshakeException.Reason.RESOURCES,
                "cannot set up the connection: " + ex.getMessage(), ex);
        }
    }

    /**
     * Least privilege for a granted catch-up: READ only, only the three term partitions (not the metadata), only for
     * this authenticated subscriber, deregistered (its rkey revoked) when it disconnects.
     *
     * @return the registration, or null when the provider cannot give remote access to this log (the shm provider
     * needs a file peers can open: one in its fabric directory or on hugetlbfs, or, for READ, a log unlinked once
     * mapped that this process still holds open, as the driver's are), said in a WARNING line.
     */
    private MemoryRegion registerLogForRead(final SubscriberConnection connection)
    {
        try
        {
            final MemoryRegion logRegion = resources.register(connection.pd, terms(), AccessFlags.REMOTE_READ);
            connection.logReadRegion = logRegion;
            return logRegion;
        }
        catch (final RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.WARNING, "rdma publication " + name + ": subscriber " + connection.name +
                " asked to catch up from " + connection.catchUpPosition + " but the log cannot be registered for " +
                "RDMA READ over " + endpoint.providerName() + " (" + ex.getMessage() + "); it joins live at " +
                connection.joinPosition);
            return null;
        }
    }

    /** @return the log's three term partitions, without its metadata: what a subscriber's connection registers. */
    private MemorySegment terms()
    {
        return log.logBuffers().segment().asSlice(0, 3L * log.termLength());
    }

    private void awaitRetiredThenFree(final SubscriberConnection connection)
    {
        if (!ControlThreads.await(() -> connection.retired, ControlThreads.RETIRE_WAIT_MS))
        {
            // the owner stopped running (sender gone without close); nothing can use it any more
            connection.retired = true;
        }
        LOGGER.log(System.Logger.Level.INFO, "rdma publication " + name + ": subscriber " + connection.name +
            " disconnected: " + connection.closeReason);
        // The QP goes first (no READ can start after it), then the regions, the log's READ registration among them
        // (its rkey is revoked), then the PD.
        freeParts(connection.statusSlotIndex, connection.pd, connection.cq, connection.qp, connection.counters,
            connection.logSourceRegion, connection.statusRegion, connection.sourceRegion, connection.logReadRegion);
        connection.logReadRegion = null;
    }

    private void freeParts(
        final int slot,
        final ProtectionDomain pd,
        final CompletionQueue cq,
        final QueuePair qp,
        final RdmaCounters.Connection counters,
        final MemoryRegion... regions)
    {
        resources.free(pd, qp, cq, regions);
        statusSlots.release(slot);
        if (null != counters)
        {
            counters.close();
        }
    }

    /** @return what this publication's connections hold registered and created right now (tests check it). */
    ConnectionResources resources()
    {
        return resources;
    }

    /** Called by the owner once it no longer touches the connection; wakes the handler blocked on the socket. */
    void stopAccepting()
    {
        if (running)
        {
            running = false;
            ControlListener.unregister(listener, log.streamId());
        }
    }

    public void close()
    {
        stopAccepting();
        // Handshakes in progress end now (their reads fail) rather than at their step timeout.
        for (final SocketMessageTransport transport : transports)
        {
            transport.close();
        }
        // Wait for the handlers to return, not for their threads to end: the endpoint's threads are reused.
        ControlThreads.await(handlers::isEmpty, ControlThreads.CLOSE_JOIN_MS);
        RdmaCounters.free(context.countersManager(), portCounter);
        rejections.close();
    }
}
