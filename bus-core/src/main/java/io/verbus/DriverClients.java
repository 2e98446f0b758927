package io.verbus;

import io.aeron.logbuffer.BlockHandler;
import io.aeron.protocol.DataHeaderFlyweight;
import io.aeron.protocol.HeaderFlyweight;
import io.verbus.common.RateLimitedLog;
import io.verbus.driver.ClientProcess;
import io.verbus.driver.CncFile;
import io.verbus.driver.CommandRingGuard;
import io.verbus.driver.DriverProtocol;
import io.verbus.driver.ImagePosition;
import io.verbus.log.ExclusiveLogPublication;
import io.verbus.log.LogImage;
import io.verbus.log.LogPublication;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastTransmitter;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.UnsafeBufferPosition;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The standalone driver's agent that serves client processes: it reads their commands from the cnc file's ring,
 * adds and removes publications and subscriptions in the driver on their behalf, broadcasts the answers and the image
 * events, stamps the driver heartbeat (the ring's consumer heartbeat, as Aeron does), and frees the resources of a
 * client whose keepalives stopped. Responses are transmitted under the driver's lock, which is also where the
 * driver calls the image handlers (from this agent or from the conductor), so the broadcast has one writer at a time.
 */
final class DriverClients implements Agent
{
    private static final System.Logger LOGGER = System.getLogger(MediaDriver.class.getName());
    private static final long TIMEOUT_CHECK_INTERVAL_NS = 100_000_000L;
    private static final int COMMANDS_PER_DUTY_CYCLE = 16;
    /** Client processes one driver serves at a time (Aeron has no such cap; a trading host has a handful). */
    static final int MAX_CLIENTS = 1024;

    private final VerbusDriver driver;
    private final Object lock;
    private final Verbus.Context context;
    private final ManyToOneRingBuffer toDriver;
    private final BroadcastTransmitter toClients;
    private final long clientLivenessTimeoutNs;
    private final UnsafeBuffer responseBuffer = new UnsafeBuffer(new byte[2 * DriverProtocol.MAX_STRING_LENGTH]);
    private final Map<Long, Client> clients = new HashMap<>();
    private final Map<Long, Client> liveClients = new ConcurrentHashMap<>();
    private final Map<String, Bridge> bridges = new HashMap<>();
    private final Map<Subscription, Bridge> proxyBridges = new HashMap<>();
    private volatile Bridge[] activeBridges = new Bridge[0];
    private final CommandRingGuard commandRingGuard;
    private final org.agrona.concurrent.MessageHandler commandHandler = this::onCommand;
    private final RateLimitedLog ringRepairLog = new RateLimitedLog(LOGGER, RateLimitedLog.DEFAULT_INTERVAL_NS);
    private final RateLimitedLog refusedClientLog = new RateLimitedLog(LOGGER, RateLimitedLog.DEFAULT_INTERVAL_NS);
    private long nextTimeoutCheckNs;
    /**
     * Which client's process the next timeout check looks up: one per check (every 100 ms), in turn, so the
     * {@code /proc} lookup costs a duty cycle (which in SHARED mode also sends and receives) one system call at most.
     */
    private long processCheckTurn;
    private long lastHeartbeatMs;

    private static final class Client
    {
        private final long clientId;
        private final Map<Long, LogPublication> publications = new HashMap<>();
        private final Map<Long, Subscription> subscriptions = new HashMap<>();
        private final Map<Long, AtomicCounter> counters = new HashMap<>();
        private long lastSeenNs;
        /** From its keepalives: its process and pid namespace, 0 until known (see ClientProcess). */
        private long pid;
        private long pidNamespace;

        Client(final long clientId)
        {
            this.clientId = clientId;
        }
    }

    /**
     * One media subscription of the driver serving every client subscription of the same channel and stream: each
     * of its images is copied, block by block at the same positions, into a shared log (a bridge log) that the
     * clients' proxies see as images. The copy follows the clients' flow control: it never runs past the bridge
     * log's limit, so the media image (and the remote publisher's credit) moves only as fast as the slowest client.
     */
    private final class Bridge
    {
        private final String key;
        private final List<Subscription> proxies = new ArrayList<>();
        private volatile BridgeEntry[] entries = new BridgeEntry[0];
        private Subscription mediaSubscription;

        Bridge(final String key)
        {
            this.key = key;
        }
    }

    /** One media image and the bridge log it is copied into. */
    private final class BridgeEntry implements BlockHandler
    {
        private final LogImage image;
        private final ExclusiveLogPublication publication;

        BridgeEntry(final LogImage image, final ExclusiveLogPublication publication)
        {
            this.image = image;
            this.publication = publication;
        }

        int copy()
        {
            if (publication.isClosed() || image.isClosed())
            {
                return 0;
            }
            final long window = publication.positionLimit() - publication.position();
            if (window <= 0)
            {
                return 0;
            }
            return (int)image.blockPoll(this, (int)Math.min(window, image.termBufferLength()));
        }

        public void onBlock(
            final DirectBuffer buffer, final int offset, final int length, final int sessionId, final int termId)
        {
            final int frameType = buffer.getShort(offset + HeaderFlyweight.TYPE_FIELD_OFFSET) & 0xFFFF;
            long result;
            try
            {
                result = HeaderFlyweight.HDR_TYPE_PAD == frameType ?
                    publication.appendPadding(buffer.getInt(offset) - DataHeaderFlyweight.HEADER_LENGTH) :
                    publication.offerBlock((org.agrona.MutableDirectBuffer)buffer, offset, length);
            }
            catch (final IllegalArgumentException ex)
            {
                result = Publication.CLOSED;
                context.errorHandler().onError(ex);
            }
            if (result < 0 && Publication.CLOSED != result)
            {
                context.errorHandler().onError(new IllegalStateException("bridge of " + image.sourceIdentity() +
                    " session " + sessionId + ": a block of " + length + " bytes at term " + termId + " not copied (" +
                    result + "); closing the bridge log"));
                result = Publication.CLOSED;
            }
            if (Publication.CLOSED == result)
            {
                publication.close(); // the clients see the image go rather than a gap
            }
        }
    }

    DriverClients(final VerbusDriver driver, final CncFile cncFile, final Verbus.Context context)
    {
        this.driver = driver;
        this.lock = driver.lock();
        this.context = context;
        this.toDriver = new ManyToOneRingBuffer(cncFile.toDriverBuffer());
        this.toClients = new BroadcastTransmitter(cncFile.toClientsBuffer());
        this.clientLivenessTimeoutNs = context.clientLivenessTimeoutNs();
        // Half the liveness timeout: the keepalives queued behind a dead client's record are read before the
        // clients that sent them could be timed out.
        this.commandRingGuard = new CommandRingGuard(toDriver, clientLivenessTimeoutNs / 2);
        toDriver.consumerHeartbeatTime(context.epochNanoClock().nanoTime() / 1_000_000);
    }

    public String roleName()
    {
        return "verbus-driver-clients";
    }

    public int doWork()
    {
        int work = driver.invoke();
        final long nowMs = context.epochNanoClock().nanoTime() / 1_000_000;
        if (nowMs != lastHeartbeatMs)
        {
            lastHeartbeatMs = nowMs;
            toDriver.consumerHeartbeatTime(nowMs);
        }
        work += readCommands(context.nanoClock().nanoTime());
        for (final Bridge bridge : activeBridges)
        {
            for (final BridgeEntry entry : bridge.entries)
            {
                work += entry.copy();
            }
        }
        final long nowNs = context.nanoClock().nanoTime();
        if (nowNs - nextTimeoutCheckNs >= 0)
        {
            nextTimeoutCheckNs = nowNs + TIMEOUT_CHECK_INTERVAL_NS;
            work += checkClientTimeouts(nowNs);
        }
        return work;
    }

    public void onClose()
    {
        for (final Client client : new ArrayList<>(clients.values()))
        {
            closeClientResources(client);
        }
        clients.clear();
        liveClients.clear();
    }

    int clientCount()
    {
        return liveClients.size();
    }

    /**
     * Read up to {@link #COMMANDS_PER_DUTY_CYCLE} commands, one at a time so the guard sees each record first: a
     * record one client corrupted, or left claimed when it died, must not stop the driver serving the others.
     */
    private int readCommands(final long nowNs)
    {
        final long repairsBefore = commandRingGuard.repairs();
        int read = 0;
        while (read < COMMANDS_PER_DUTY_CYCLE && commandRingGuard.check(nowNs))
        {
            final int n = toDriver.read(commandHandler, 1);
            if (0 == n)
            {
                break;
            }
            read += n;
        }
        if (commandRingGuard.repairs() != repairsBefore)
        {
            ringRepairLog.log(System.Logger.Level.WARNING, "driver: repaired the clients' command ring (" +
                commandRingGuard.corruptRecords() + " records with an impossible length padded over, " +
                commandRingGuard.unblocks() + " records claimed and never committed unblocked, " +
                commandRingGuard.tailRepairs() + " tails moved by hand set back or padded over, so far): a client " +
                "process died mid-command or wrote the ring; the commands dropped with them get no answer");
        }
        return read;
    }

    private void onCommand(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        if (length < DriverProtocol.STREAM_ID_OFFSET)
        {
            return; // not a command of this protocol: nothing to answer
        }
        final long clientId = buffer.getLong(index + DriverProtocol.CLIENT_ID_OFFSET);
        final long correlationId = buffer.getLong(index + DriverProtocol.COMMAND_CORRELATION_ID_OFFSET);
        Client client = clients.get(clientId);
        if (null == client)
        {
            if (DriverProtocol.CLIENT_CLOSE == msgTypeId)
            {
                return;
            }
            if (clients.size() >= MAX_CLIENTS)
            {
                refuseNewClient(msgTypeId, clientId, correlationId);
                return;
            }
            client = new Client(clientId);
            clients.put(clientId, client);
            liveClients.put(clientId, client);
        }
        client.lastSeenNs = context.nanoClock().nanoTime();
        try
        {
            switch (msgTypeId)
            {
                case DriverProtocol.ADD_PUBLICATION -> onAddPublication(client, correlationId, buffer, index, length);
                case DriverProtocol.ADD_SUBSCRIPTION -> onAddSubscription(client, correlationId, buffer, index, length);
                case DriverProtocol.REMOVE_PUBLICATION ->
                {
                    final LogPublication publication = client.publications.remove(
                        buffer.getLong(index + DriverProtocol.REMOVE_REGISTRATION_ID_OFFSET));
                    if (null != publication)
                    {
                        publication.close();
                    }
                }
                case DriverProtocol.REMOVE_SUBSCRIPTION ->
                {
                    final Subscription subscription = client.subscriptions.remove(
                        buffer.getLong(index + DriverProtocol.REMOVE_REGISTRATION_ID_OFFSET));
                    if (null != subscription)
                    {
                        closeSubscription(subscription);
                    }
                }
                case DriverProtocol.ADD_COUNTER -> onAddCounter(client, correlationId, buffer, index, length);
                case DriverProtocol.REMOVE_COUNTER ->
                {
                    final AtomicCounter counter = client.counters.remove(
                        buffer.getLong(index + DriverProtocol.REMOVE_REGISTRATION_ID_OFFSET));
                    if (null != counter)
                    {
                        counter.close();
                    }
                }
                case DriverProtocol.CLIENT_KEEPALIVE ->
                {
                    if (length >= DriverProtocol.KEEPALIVE_LENGTH)
                    {
                        client.pid = buffer.getLong(index + DriverProtocol.KEEPALIVE_PID_OFFSET);
                        client.pidNamespace = buffer.getLong(index + DriverProtocol.KEEPALIVE_PID_NAMESPACE_OFFSET);
                    }
                }
                case DriverProtocol.CLIENT_CLOSE ->
                {
                    retire(client);
                }
                default -> throw new IllegalArgumentException("unknown command type " + msgTypeId);
            }
        }
        catch (final RuntimeException ex)
        {
            sendError(correlationId, ex);
        }
    }

    /**
     * A command from a client id the driver does not know, with {@link #MAX_CLIENTS} known already: every id is a
     * table entry until its liveness timeout, and any process that maps cnc.dat can write keepalives under made-up
     * ids (800,000 in 2 s in a probe, each walked by every timeout check). A command that waits for an answer gets an
     * error; the refusals are logged a line every few seconds at most.
     */
    private void refuseNewClient(final int msgTypeId, final long clientId, final long correlationId)
    {
        refusedClientLog.log(System.Logger.Level.WARNING, "driver: refused a command from new client id " + clientId +
            ": it already serves " + MAX_CLIENTS + " clients");
        if (DriverProtocol.CLIENT_KEEPALIVE != msgTypeId)
        {
            sendError(correlationId, new IllegalStateException(
                "the Verbus driver serves at most " + MAX_CLIENTS + " clients at a time"));
        }
    }

    private static String channel(final DirectBuffer buffer, final int index, final int messageLength)
    {
        final int length = messageLength < DriverProtocol.CHANNEL_OFFSET + Integer.BYTES ? -1 :
            buffer.getInt(index + DriverProtocol.CHANNEL_OFFSET);
        if (length < 0 || length > DriverProtocol.MAX_STRING_LENGTH ||
            DriverProtocol.CHANNEL_OFFSET + Integer.BYTES + length > messageLength)
        {
            throw new IllegalArgumentException("command with a channel length of " + length + " in a message of " +
                messageLength + " bytes");
        }
        return buffer.getStringAscii(index + DriverProtocol.CHANNEL_OFFSET);
    }

    private static void checkServed(final String channel, final boolean publication)
    {
        final ChannelUri uri = ChannelUri.parse(channel);
        if (uri.isAeron())
        {
            throw new IllegalArgumentException("channel '" + channel + "': a standalone Verbus driver does not " +
                "serve aeron: channels to its clients; they need Verbus.launch, an embedded driver");
        }
    }

    private void onAddPublication(
        final Client client, final long correlationId, final DirectBuffer buffer, final int index, final int length)
    {
        final int streamId = buffer.getInt(index + DriverProtocol.STREAM_ID_OFFSET);
        final boolean exclusive = 0 != buffer.getInt(index + DriverProtocol.EXCLUSIVE_OFFSET);
        final String channel = channel(buffer, index, length);
        checkServed(channel, true);
        synchronized (lock)
        {
            final LogPublication publication =
                (LogPublication)driver.addPublication(channel, streamId, exclusive, false);
            final long registrationId = publication.registrationId();
            client.publications.put(registrationId, publication);
            final Path logPath = driver.logPath(publication.originalRegistrationId());
            final UnsafeBuffer out = responseBuffer;
            out.putLong(DriverProtocol.CORRELATION_ID_OFFSET, correlationId);
            out.putLong(DriverProtocol.REGISTRATION_ID_OFFSET, registrationId);
            out.putInt(DriverProtocol.SESSION_ID_OFFSET, publication.sessionId());
            out.putInt(DriverProtocol.RESPONSE_STREAM_ID_OFFSET, streamId);
            out.putInt(DriverProtocol.TERM_LENGTH_OFFSET, publication.termBufferLength());
            out.putInt(DriverProtocol.POSITION_COUNTER_ID_OFFSET,
                ((UnsafeBufferPosition)publication.publicationLog().publisherLimit()).id());
            out.putInt(DriverProtocol.BACK_PRESSURE_COUNTER_ID_OFFSET, publication.backPressureCounterId());
            out.putLong(DriverProtocol.ORIGINAL_REGISTRATION_ID_OFFSET, publication.originalRegistrationId());
            final int pathLength = out.putStringAscii(DriverProtocol.LOG_PATH_OFFSET, logPath.toString());
            toClients.transmit(
                DriverProtocol.ON_PUBLICATION_READY, out, 0, DriverProtocol.LOG_PATH_OFFSET + pathLength);
        }
    }

    private void onAddSubscription(
        final Client client, final long correlationId, final DirectBuffer buffer, final int index, final int length)
    {
        final int streamId = buffer.getInt(index + DriverProtocol.STREAM_ID_OFFSET);
        final String channel = channel(buffer, index, length);
        checkServed(channel, false);
        synchronized (lock)
        {
            // ipc and spies read the driver's own logs, which the client maps; other media are bridged.
            final ChannelUri uri = ChannelUri.parse(channel);
            final Subscription subscription = ChannelUri.IPC_SCHEME.equals(uri.scheme()) || uri.isSpy() ?
                driver.addSubscription(channel, streamId,
                    (image) -> onAvailableImage(correlationId, (LogImage)image),
                    (image) -> onUnavailableImage(correlationId, (LogImage)image)) :
                addBridgedSubscription(channel, streamId, correlationId);
            client.subscriptions.put(subscription.registrationId(), subscription);
            final UnsafeBuffer out = responseBuffer;
            out.putLong(DriverProtocol.CORRELATION_ID_OFFSET, correlationId);
            out.putLong(DriverProtocol.REGISTRATION_ID_OFFSET, subscription.registrationId());
            toClients.transmit(DriverProtocol.ON_SUBSCRIPTION_READY, out, 0, DriverProtocol.REGISTRATION_ID_OFFSET + 8);
        }
    }

    /**
     * A client's counter, Aeron's {@code addCounter}: allocated in the driver's counters file (where the client and
     * {@code ./verbus stat} read it), owned by the client's entry so that its close, its death or the driver's close
     * frees it.
     */
    private void onAddCounter(
        final Client client, final long correlationId, final DirectBuffer buffer, final int index, final int length)
    {
        if (length < DriverProtocol.COUNTER_LABEL_OFFSET + Integer.BYTES)
        {
            throw new IllegalArgumentException("add counter command of " + length + " bytes");
        }
        final int typeId = buffer.getInt(index + DriverProtocol.COUNTER_TYPE_ID_OFFSET);
        final int keyLength = buffer.getInt(index + DriverProtocol.COUNTER_KEY_LENGTH_OFFSET);
        if (keyLength < 0 || keyLength > DriverProtocol.MAX_COUNTER_KEY_LENGTH)
        {
            throw new IllegalArgumentException(
                "counter key length " + keyLength + " must be from 0 to " + DriverProtocol.MAX_COUNTER_KEY_LENGTH);
        }
        final int labelLength = buffer.getInt(index + DriverProtocol.COUNTER_LABEL_OFFSET);
        if (labelLength < 0 || labelLength > DriverProtocol.MAX_STRING_LENGTH ||
            DriverProtocol.COUNTER_LABEL_OFFSET + Integer.BYTES + labelLength > length)
        {
            throw new IllegalArgumentException("counter label length " + labelLength + " in a command of " +
                length + " bytes");
        }
        final String label = buffer.getStringAscii(index + DriverProtocol.COUNTER_LABEL_OFFSET);
        synchronized (lock)
        {
            final AtomicCounter counter = driver.addCounter(
                typeId, buffer, index + DriverProtocol.COUNTER_KEY_OFFSET, keyLength, label);
            final long registrationId = driver.countersReader().getCounterRegistrationId(counter.id());
            client.counters.put(registrationId, counter);
            final UnsafeBuffer out = responseBuffer;
            out.putLong(DriverProtocol.CORRELATION_ID_OFFSET, correlationId);
            out.putLong(DriverProtocol.REGISTRATION_ID_OFFSET, registrationId);
            out.putInt(DriverProtocol.COUNTER_ID_OFFSET, counter.id());
            toClients.transmit(DriverProtocol.ON_COUNTER_READY, out, 0, DriverProtocol.COUNTER_ID_OFFSET + 4);
        }
    }

    /** Under the lock: a client's media subscription, served by the bridge of its channel and stream. */
    private Subscription addBridgedSubscription(final String channel, final int streamId, final long correlationId)
    {
        final String key = streamId + " " + channel;
        Bridge bridge = bridges.get(key);
        final boolean created = null == bridge;
        if (created)
        {
            bridge = new Bridge(key);
            final Bridge newBridge = bridge;
            bridge.mediaSubscription = driver.addSubscription(channel, streamId,
                (image) -> onBridgeImageAvailable(newBridge, (LogImage)image),
                (image) -> onBridgeImageUnavailable(newBridge, (LogImage)image));
            bridges.put(key, bridge);
            publishBridges();
        }
        NativeSubscription proxy = null;
        try
        {
            proxy = driver.addBridgeSubscription(channel, streamId,
                (image) -> onAvailableImage(correlationId, (LogImage)image),
                (image) -> onUnavailableImage(correlationId, (LogImage)image));
            bridge.proxies.add(proxy);
            proxyBridges.put(proxy, bridge);
            for (final BridgeEntry entry : bridge.entries)
            {
                driver.attachBridgeImage(entry.publication.registrationId(), proxy, entry.publication.position());
            }
            return proxy;
        }
        catch (final RuntimeException ex)
        {
            // The client hears of the failure and never learns the proxy's id, so nothing would ever close it, nor
            // (while it is the bridge's only proxy) the bridge's media subscription and logs: close them here.
            if (null != proxy)
            {
                closeSubscription(proxy);
            }
            else
            {
                closeBridgeIfUnused(bridge);
            }
            throw ex;
        }
    }

    /** Under the driver's lock (the driver calls image handlers under it). */
    private void onAvailableImage(final long subscriptionCorrelationId, final LogImage image)
    {
        final Path logPath = driver.logPath(image.correlationId());
        if (null == logPath)
        {
            throw new IllegalStateException("no log file for image " + image.correlationId());
        }
        final UnsafeBuffer out = new UnsafeBuffer(new byte[2 * DriverProtocol.MAX_STRING_LENGTH]);
        out.putLong(DriverProtocol.CORRELATION_ID_OFFSET, subscriptionCorrelationId);
        out.putLong(DriverProtocol.REGISTRATION_ID_OFFSET, image.correlationId());
        out.putInt(DriverProtocol.SESSION_ID_OFFSET, image.sessionId());
        out.putInt(DriverProtocol.RESPONSE_STREAM_ID_OFFSET, image.streamId());
        out.putInt(DriverProtocol.TERM_LENGTH_OFFSET, image.termBufferLength());
        out.putInt(DriverProtocol.POSITION_COUNTER_ID_OFFSET, ((ImagePosition)image.subscriberPosition()).id());
        final int pathLength = out.putStringAscii(DriverProtocol.LOG_PATH_OFFSET, logPath.toString());
        final int identityLength = out.putStringAscii(
            DriverProtocol.LOG_PATH_OFFSET + pathLength, bridgedSourceIdentity(image.correlationId()));
        toClients.transmit(DriverProtocol.ON_AVAILABLE_IMAGE, out, 0,
            DriverProtocol.LOG_PATH_OFFSET + pathLength + identityLength);
    }

    /**
     * Under the lock: the source identity of the media image a bridge log copies (the publisher's address on
     * {@code rdma:}, as Aeron reports a network image's), or empty for the driver's own ipc and spy logs.
     */
    private String bridgedSourceIdentity(final long logRegistrationId)
    {
        for (final Bridge bridge : bridges.values())
        {
            for (final BridgeEntry entry : bridge.entries)
            {
                if (entry.publication.registrationId() == logRegistrationId)
                {
                    return entry.image.sourceIdentity();
                }
            }
        }
        return "";
    }

    /** Under the driver's lock. */
    private void onUnavailableImage(final long subscriptionCorrelationId, final LogImage image)
    {
        final UnsafeBuffer out = new UnsafeBuffer(new byte[32]);
        out.putLong(DriverProtocol.CORRELATION_ID_OFFSET, subscriptionCorrelationId);
        out.putLong(DriverProtocol.REGISTRATION_ID_OFFSET, image.correlationId());
        toClients.transmit(DriverProtocol.ON_UNAVAILABLE_IMAGE, out, 0, 16);
    }

    private void sendError(final long correlationId, final RuntimeException ex)
    {
        synchronized (lock)
        {
            final String message = String.valueOf(ex.getMessage());
            final UnsafeBuffer out = responseBuffer;
            out.putLong(DriverProtocol.CORRELATION_ID_OFFSET, correlationId);
            out.putLong(DriverProtocol.REGISTRATION_ID_OFFSET, 0);
            final int length = out.putStringAscii(DriverProtocol.ERROR_MESSAGE_OFFSET,
                message.length() > DriverProtocol.MAX_STRING_LENGTH ?
                message.substring(0, DriverProtocol.MAX_STRING_LENGTH) : message);
            toClients.transmit(DriverProtocol.ON_ERROR, out, 0, DriverProtocol.ERROR_MESSAGE_OFFSET + length);
        }
    }

    private int checkClientTimeouts(final long nowNs)
    {
        final List<Client> timedOut = new ArrayList<>();
        final long processCheckIndex = clients.isEmpty() ? -1 : processCheckTurn++ % clients.size();
        long index = 0;
        for (final Client client : clients.values())
        {
            if (nowNs - client.lastSeenNs > clientLivenessTimeoutNs ||
                (index++ == processCheckIndex && ClientProcess.hasExited(client.pid, client.pidNamespace)))
            {
                timedOut.add(client);
            }
        }
        for (final Client client : timedOut)
        {
            final String why = nowNs - client.lastSeenNs > clientLivenessTimeoutNs ?
                "sent no keepalive for " + clientLivenessTimeoutNs / 1_000_000 + " ms: taken for dead" :
                "(pid " + client.pid + ") has exited";
            LOGGER.log(System.Logger.Level.WARNING, "client " + client.clientId + " " + why + ", closing its " +
                client.publications.size() + " publications, " + client.subscriptions.size() + " subscriptions and " +
                client.counters.size() + " counters");
            retire(client);
            synchronized (lock)
            {
                final UnsafeBuffer out = responseBuffer;
                out.putLong(DriverProtocol.CORRELATION_ID_OFFSET, client.clientId);
                toClients.transmit(DriverProtocol.ON_CLIENT_TIMEOUT, out, 0, 8);
            }
        }
        return timedOut.size();
    }

    /** Closes a client's subscription; the last proxy of a bridge takes the bridge's media subscription with it. */
    private void closeSubscription(final Subscription subscription)
    {
        subscription.close();
        synchronized (lock)
        {
            final Bridge bridge = proxyBridges.remove(subscription);
            if (null != bridge)
            {
                bridge.proxies.remove(subscription);
                closeBridgeIfUnused(bridge);
            }
        }
    }

    /** Under the lock: a bridge with no proxy left takes its media subscription and bridge logs with it. */
    private void closeBridgeIfUnused(final Bridge bridge)
    {
        if (!bridge.proxies.isEmpty())
        {
            return;
        }
        if (bridges.remove(bridge.key, bridge))
        {
            publishBridges();
        }
        if (null != bridge.mediaSubscription)
        {
            bridge.mediaSubscription.close();
        }
        for (final BridgeEntry entry : bridge.entries)
        {
            entry.publication.close();
        }
        bridge.entries = new BridgeEntry[0];
    }

    private void publishBridges()
    {
        activeBridges = bridges.values().toArray(new Bridge[0]);
    }

    /** Under the lock, on the receiver's thread: a media image joined a bridge; copy it into a new bridge log. */
    private void onBridgeImageAvailable(final Bridge bridge, final LogImage image)
    {
        final ExclusiveLogPublication publication = driver.addBridgeLog(image);
        final BridgeEntry entry = new BridgeEntry(image, publication);
        final BridgeEntry[] old = bridge.entries;
        final BridgeEntry[] updated = java.util.Arrays.copyOf(old, old.length + 1);
        updated[old.length] = entry;
        bridge.entries = updated;
        // One proxy refused (counters file full) must not keep the image from the proxies after it.
        RuntimeException failure = null;
        for (final Subscription proxy : bridge.proxies)
        {
            try
            {
                driver.attachBridgeImage(
                    publication.registrationId(), (NativeSubscription)proxy, publication.position());
            }
            catch (final RuntimeException ex)
            {
                if (null == failure)
                {
                    failure = ex;
                }
                else
                {
                    failure.addSuppressed(ex);
                }
            }
        }
        if (null != failure)
        {
            throw failure;
        }
    }

    /** Under the lock: a media image left; its bridge log closes and retires once the clients drained it. */
    private void onBridgeImageUnavailable(final Bridge bridge, final LogImage image)
    {
        final List<BridgeEntry> kept = new ArrayList<>();
        for (final BridgeEntry entry : bridge.entries)
        {
            if (entry.image == image)
            {
                entry.publication.close();
            }
            else
            {
                kept.add(entry);
            }
        }
        bridge.entries = kept.toArray(new BridgeEntry[0]);
    }

    /**
     * A client that closed or was taken for dead: out of the client count before its counters are freed, so whoever
     * sees them freed ({@code ./verbus stat}, a test) also sees the client gone; out of the client table only once
     * its resources are closed, so a close that fails half-way is retried by the liveness check.
     */
    private void retire(final Client client)
    {
        liveClients.remove(client.clientId);
        closeClientResources(client);
        clients.remove(client.clientId);
    }

    private void closeClientResources(final Client client)
    {
        for (final LogPublication publication : client.publications.values())
        {
            publication.close();
        }
        client.publications.clear();
        for (final Subscription subscription : client.subscriptions.values())
        {
            closeSubscription(subscription);
        }
        client.subscriptions.clear();
        for (final AtomicCounter counter : client.counters.values())
        {
            counter.close();
        }
        client.counters.clear();
    }
}
