package io.verbus;

import io.aeron.exceptions.DriverTimeoutException;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.aeron.AeronChannels;
import io.verbus.counters.CountersFile;
import io.verbus.driver.ClientProcess;
import io.verbus.driver.CncFile;
import io.verbus.driver.DriverProtocol;
import io.verbus.driver.IdleStrategies;
import io.verbus.driver.ImagePosition;
import io.verbus.log.ConcurrentLogPublication;
import io.verbus.log.ExclusiveLogPublication;
import io.verbus.log.LogBuffers;
import io.verbus.log.LogImage;
import io.verbus.log.LogPublication;
import io.verbus.media.PublicationLog;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.MutableDirectBuffer;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastReceiver;
import org.agrona.concurrent.broadcast.CopyBroadcastReceiver;
import org.agrona.concurrent.ringbuffer.ManyToOneRingBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;
import org.agrona.concurrent.status.UnsafeBufferPosition;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * A {@link Verbus} attached to a standalone driver ({@link Verbus#connect}): the client side of Aeron's client
 * conductor. Adds and removes go to the driver as commands through the cnc file's ring; the driver's answers and
 * image events come back on its broadcast buffer. The logs are the driver's files, mapped here: a publication
 * appends into its log with the same code as an embedded one ({@link ConcurrentLogPublication},
 * {@link ExclusiveLogPublication}), checked against the limit counter the driver's conductor raises; an image reads
 * the log and writes its position into the counter the driver allocated for it. Nothing on the hot path goes through
 * the driver.
 * <p>
 * {@code aeron:} channels go to an Aeron client of this process, connected on first use to the Aeron media driver
 * the standalone driver names in its cnc file (or to the one {@link Verbus.Context#aeronDirectoryName()} names): the
 * Aeron way, many clients sharing one Aeron driver. It closes with this client, and when the Verbus driver is gone.
 * <p>
 * All control state is guarded by one lock; the conductor thread (or {@link #invoke()} in INVOKER mode) takes it to
 * read the broadcast, send keepalives, watch the driver heartbeat and unmap retired logs after the linger.
 */
final class ClientConductor implements VerbusBackend, Agent
{
    private static final System.Logger LOGGER = System.getLogger(Verbus.class.getName());
    private static final long MAX_KEEPALIVE_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(500);

    /**
     * Registration ids this client makes up itself (for {@code Verbus.asyncAdd*} failures) count from here: above the
     * driver's native ids (from {@link VerbusDriver#FIRST_REGISTRATION_ID}) and the Aeron driver's (from 0).
     */
    private static final long FIRST_LOCAL_REGISTRATION_ID = 1L << 48;

    private final Object lock = new Object();
    private final Verbus.Context context;
    private final CncFile cncFile;
    private final CountersFile countersFile;
    private final ManyToOneRingBuffer toDriver;
    private final CopyBroadcastReceiver toClients;
    private final long clientId;
    private final ErrorHandler errorHandler;
    private final long keepaliveIntervalNs;
    private final long driverTimeoutMs;
    private final UnsafeBuffer commandBuffer = new UnsafeBuffer(new byte[2 * DriverProtocol.MAX_STRING_LENGTH]);
    private final Map<Long, ClientSubscription> subscriptions = new HashMap<>();
    private final Map<Long, LogPublication> publications = new HashMap<>();
    private final Map<Long, ClientCounter> counters = new HashMap<>();
    private final ArrayDeque<Lingering> lingering = new ArrayDeque<>();
    private final List<LogBuffers> mapped = new ArrayList<>();
    private final AgentRunner runner;
    private final LazyAeronChannels aeronChannels = new LazyAeronChannels(lock, this::connectAeronChannels);
    /** The Aeron client of a driver found gone, closed by the next duty cycle outside the lock. */
    private volatile AeronChannels orphanedAeronChannels;
    private long lastKeepaliveNs;
    private long awaitedCorrelationId = -1;
    private int awaitedType;
    private final UnsafeBuffer awaitedResponse = new UnsafeBuffer(new byte[2 * DriverProtocol.MAX_STRING_LENGTH]);
    private volatile boolean isClosed;
    private volatile boolean driverGone;
    private boolean closeCalled;

    private record Lingering(long deadlineNs, LogBuffers logBuffers)
    {
    }

    /** @param sourceIdentity where a bridged media image comes from, or empty for the driver's ipc and spy logs. */
    private record ImageEvent(
        long imageCorrelationId, int sessionId, int streamId, int termLength, int positionCounterId, String logPath,
        String sourceIdentity)
    {
    }

    /** A subscription's local state; the subscription itself exists once the driver answered. */
    private static final class ClientSubscription
    {
        private NativeSubscription subscription;
        private final List<ImageEvent> early = new ArrayList<>();
        private final Map<Long, LogBuffers> imageLogs = new HashMap<>();
    }

    ClientConductor(final Verbus.Context context)
    {
        this.context = context;
        final Path dir = Path.of(context.dir());
        this.driverTimeoutMs = context.driverTimeoutMs();
        final ErrorHandler userHandler = context.errorHandler();
        this.errorHandler = null != userHandler ? userHandler : (throwable) ->
            LOGGER.log(System.Logger.Level.ERROR, "Verbus client error at " + Instant.now(), throwable);
        this.cncFile = CncFile.open(dir);
        CountersFile counters = null;
        try
        {
            this.toDriver = new ManyToOneRingBuffer(cncFile.toDriverBuffer());
            final long heartbeatAgeMs = epochMs() - toDriver.consumerHeartbeatTime();
            if (heartbeatAgeMs > driverTimeoutMs)
            {
                throw new IllegalStateException("the Verbus driver at " + dir + " (pid " + cncFile.pid() +
                    ") is not running: its heartbeat is " + heartbeatAgeMs + " ms old");
            }
            this.toClients = new CopyBroadcastReceiver(new BroadcastReceiver(cncFile.toClientsBuffer()));
            counters = CountersFile.openShared(dir);
            this.countersFile = counters;
            this.clientId = toDriver.nextCorrelationId();
            this.keepaliveIntervalNs = Math.min(MAX_KEEPALIVE_INTERVAL_NS, cncFile.clientLivenessTimeoutNs() / 4);
            this.lastKeepaliveNs = context.nanoClock().nanoTime();
            sendKeepalive();
            if (ThreadingMode.INVOKER == context.threadingMode())
            {
                runner = null;
            }
            else
            {
                runner = new AgentRunner(
                    IdleStrategies.newIdleStrategy(IdleStrategies.SLEEPING), errorHandler, null, this);
                AgentRunner.startOnThread(runner);
            }
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(counters);
            cncFile.close();
            throw ex;
        }
    }

    public String roleName()
    {
        return "verbus-client-conductor";
    }

    public int doWork()
    {
        final int work = doLockedWork();
        final AeronChannels orphaned = orphanedAeronChannels;
        if (null != orphaned)
        {
            // Outside the lock: Aeron's close calls unavailable-image handlers, which may call back into this client.
            orphaned.close();
            orphanedAeronChannels = null;
            isClosed = true;
            return work + 1;
        }
        return work;
    }

    private int doLockedWork()
    {
        synchronized (lock)
        {
            if (isClosed && driverGone && lingering.isEmpty())
            {
                return 0;
            }
            int work = 0;
            if (!driverGone)
            {
                work += receive();
                final long nowNs = context.nanoClock().nanoTime();
                if (!driverGone && nowNs - lastKeepaliveNs >= keepaliveIntervalNs)
                {
                    lastKeepaliveNs = nowNs;
                    sendKeepalive();
                    work++;
                }
                checkDriver();
            }
            final long nowNs = context.nanoClock().nanoTime();
            while (!lingering.isEmpty() && nowNs - lingering.peekFirst().deadlineNs() >= 0)
            {
                final LogBuffers logBuffers = lingering.pollFirst().logBuffers();
                mapped.remove(logBuffers);
                logBuffers.retire(); // a claim the application still holds must not fault the JVM
                work++;
            }
            return work;
        }
    }

    private int receive()
    {
        try
        {
            return toClients.receive(this::onResponse);
        }
        catch (final IllegalStateException ex)
        {
            // Lapped: the broadcast moved on while this client was descheduled; answers to it may be lost.
            errorHandler.onError(ex);
            return 1;
        }
    }

    private static long epochMs()
    {
        return System.currentTimeMillis();
    }

    /** Under the lock: is the driver still there? If not, close everything and tell the error handler. */
    private void checkDriver()
    {
        final long heartbeatAgeMs = epochMs() - toDriver.consumerHeartbeatTime();
        if (heartbeatAgeMs > driverTimeoutMs)
        {
            onDriverGone(new DriverTimeoutException("Verbus driver at " + context.dir() + " (pid " + cncFile.pid() +
                ") is silent: heartbeat " + heartbeatAgeMs + " ms old, timeout " + driverTimeoutMs + " ms"));
        }
        else if (!cncFile.isActive())
        {
            onDriverGone(new DriverTimeoutException("Verbus driver at " + context.dir() + " (pid " + cncFile.pid() +
                ") has closed"));
        }
    }

    /** Under the lock: the driver is dead, closed, or has taken this client for dead. */
    private void onDriverGone(final RuntimeException reason)
    {
        if (driverGone)
        {
            return;
        }
        driverGone = true;
        awaitedCorrelationId = -1;
        orphanedAeronChannels = aeronChannels.ifMade();
        for (final LogPublication publication : new ArrayList<>(publications.values()))
        {
            publication.close();
        }
        for (final ClientSubscription entry : new ArrayList<>(subscriptions.values()))
        {
            if (null != entry.subscription)
            {
                entry.subscription.close();
            }
        }
        subscriptions.clear();
        closeCountersLocally();
        try
        {
            errorHandler.onError(reason);
        }
        finally
        {
            // After the handler: whoever sees isClosed() also finds the error reported. With an Aeron client to close,
            // after that close (doWork, outside the lock), so that isClosed() also means its channels are closed.
            if (null == orphanedAeronChannels)
            {
                isClosed = true;
            }
        }
    }

    private void onResponse(final int msgTypeId, final MutableDirectBuffer buffer, final int index, final int length)
    {
        final long correlationId = buffer.getLong(index + DriverProtocol.CORRELATION_ID_OFFSET);
        switch (msgTypeId)
        {
            case DriverProtocol.ON_PUBLICATION_READY, DriverProtocol.ON_SUBSCRIPTION_READY,
                DriverProtocol.ON_COUNTER_READY, DriverProtocol.ON_ERROR ->
            {
                if (correlationId == awaitedCorrelationId)
                {
                    awaitedType = msgTypeId;
                    awaitedResponse.putBytes(0, buffer, index, Math.min(length, awaitedResponse.capacity()));
                    awaitedCorrelationId = -1;
                }
            }
            case DriverProtocol.ON_AVAILABLE_IMAGE ->
            {
                final ClientSubscription entry = subscriptions.get(correlationId);
                if (null != entry)
                {
                    final String logPath = buffer.getStringAscii(index + DriverProtocol.LOG_PATH_OFFSET);
                    final int sourceIdentityOffset = DriverProtocol.LOG_PATH_OFFSET + Integer.BYTES + logPath.length();
                    final ImageEvent event = new ImageEvent(
                        buffer.getLong(index + DriverProtocol.REGISTRATION_ID_OFFSET),
                        buffer.getInt(index + DriverProtocol.SESSION_ID_OFFSET),
                        buffer.getInt(index + DriverProtocol.RESPONSE_STREAM_ID_OFFSET),
                        buffer.getInt(index + DriverProtocol.TERM_LENGTH_OFFSET),
                        buffer.getInt(index + DriverProtocol.POSITION_COUNTER_ID_OFFSET),
                        logPath,
                        length >= sourceIdentityOffset + Integer.BYTES ?
                            buffer.getStringAscii(index + sourceIdentityOffset) : "");
                    if (null == entry.subscription)
                    {
                        entry.early.add(event);
                    }
                    else
                    {
                        attachImage(entry, event);
                    }
                }
            }
            case DriverProtocol.ON_UNAVAILABLE_IMAGE ->
            {
                final ClientSubscription entry = subscriptions.get(correlationId);
                if (null != entry)
                {
                    final long imageCorrelationId = buffer.getLong(index + DriverProtocol.REGISTRATION_ID_OFFSET);
                    if (null == entry.subscription)
                    {
                        entry.early.removeIf((e) -> e.imageCorrelationId() == imageCorrelationId);
                    }
                    else
                    {
                        detachImage(entry, imageCorrelationId);
                    }
                }
            }
            case DriverProtocol.ON_CLIENT_TIMEOUT ->
            {
                if (correlationId == clientId)
                {
                    onDriverGone(new DriverTimeoutException("the Verbus driver at " + context.dir() +
                        " timed this client out (no keepalive for its liveness timeout): closed"));
                }
            }
            default ->
            {
                // Not for clients of this version: ignored.
            }
        }
    }

    private void attachImage(final ClientSubscription entry, final ImageEvent event)
    {
        final LogBuffers logBuffers;
        try
        {
            logBuffers = LogBuffers.mapExisting(Path.of(event.logPath()), event.termLength());
        }
        catch (final RuntimeException ex)
        {
            errorHandler.onError(ex); // the log was retired before this client saw the image: nothing to read
            return;
        }
        mapped.add(logBuffers);
        final UnsafeBuffer metaData = logBuffers.metaDataBuffer();
        final ImagePosition position = new ImagePosition(
            (UnsafeBuffer)countersFile.valuesBuffer(), event.positionCounterId(), null);
        final LogImage image = new LogImage(
            entry.subscription, event.imageCorrelationId(), event.sessionId(), event.streamId(),
            LogBufferDescriptor.initialTermId(metaData), logBuffers.termBuffers(), metaData,
            LogBufferDescriptor.mtuLength(metaData), logBuffers.fileChannel(), position, null,
            !event.sourceIdentity().isEmpty() ? event.sourceIdentity() :
                entry.subscription.uri().isSpy() ? "spy" : "ipc", errorHandler,
            (corrupt) -> onCorruptImage(entry, corrupt));
        entry.imageLogs.put(event.imageCorrelationId(), logBuffers);
        entry.subscription.addImage(image);
    }

    private void onCorruptImage(final ClientSubscription entry, final LogImage image)
    {
        synchronized (lock)
        {
            entry.subscription.removeImage(image);
        }
    }

    /** Under the lock. */
    private void detachImage(final ClientSubscription entry, final long imageCorrelationId)
    {
        for (final LogImage image : entry.subscription.logImages())
        {
            if (image.correlationId() == imageCorrelationId)
            {
                entry.subscription.removeImage(image);
                ((ImagePosition)image.subscriberPosition()).close();
            }
        }
        final LogBuffers logBuffers = entry.imageLogs.remove(imageCorrelationId);
        if (null != logBuffers)
        {
            linger(logBuffers);
        }
    }

    private void linger(final LogBuffers logBuffers)
    {
        lingering.addLast(new Lingering(context.nanoClock().nanoTime() + context.lingerTimeoutNs(), logBuffers));
    }

    /**
     * Under the lock, on the first {@code aeron:} channel: connects to the Aeron driver this context names, else to the
     * standalone driver's.
     */
    private AeronChannels connectAeronChannels()
    {
        ensureOpen();
        final String aeronDir = null != context.aeronDirectoryName() ?
            context.aeronDirectoryName() : cncFile.aeronDirectoryName();
        return AeronChannels.connect(
            aeronDir, context.threadingMode(), context.idleStrategy(), driverTimeoutMs, errorHandler);
    }

    public Publication addPublication(final String channel, final int streamId, final boolean exclusive)
    {
        final ChannelUri uri = ChannelUri.parse(channel);
        if (uri.isAeron())
        {
            ensureOpen();
            return aeronChannels.get().addPublication(channel, streamId, exclusive);
        }
        synchronized (lock)
        {
            ensureOpen();
            final long correlationId = toDriver.nextCorrelationId();
            commandBuffer.putInt(DriverProtocol.STREAM_ID_OFFSET, streamId);
            commandBuffer.putInt(DriverProtocol.EXCLUSIVE_OFFSET, exclusive ? 1 : 0);
            final int channelLength = commandBuffer.putStringAscii(DriverProtocol.CHANNEL_OFFSET, channel);
            sendCommand(DriverProtocol.ADD_PUBLICATION, correlationId, DriverProtocol.CHANNEL_OFFSET + channelLength);
            final DirectBuffer response = awaitResponse(correlationId, DriverProtocol.ON_PUBLICATION_READY);

            final long registrationId = response.getLong(DriverProtocol.REGISTRATION_ID_OFFSET);
            final long originalRegistrationId = response.getLong(DriverProtocol.ORIGINAL_REGISTRATION_ID_OFFSET);
            final int sessionId = response.getInt(DriverProtocol.SESSION_ID_OFFSET);
            final int termLength = response.getInt(DriverProtocol.TERM_LENGTH_OFFSET);
            final int limitCounterId = response.getInt(DriverProtocol.POSITION_COUNTER_ID_OFFSET);
            final int backPressureCounterId = response.getInt(DriverProtocol.BACK_PRESSURE_COUNTER_ID_OFFSET);
            final String logPath = response.getStringAscii(DriverProtocol.LOG_PATH_OFFSET);
            final LogBuffers logBuffers;
            try
            {
                logBuffers = LogBuffers.mapExisting(Path.of(logPath), termLength);
            }
            catch (final RuntimeException ex)
            {
                sendRemove(DriverProtocol.REMOVE_PUBLICATION, registrationId);
                throw ex;
            }
            mapped.add(logBuffers);
            final UnsafeBuffer values = (UnsafeBuffer)countersFile.valuesBuffer();
            final PublicationLog publicationLog = new PublicationLog(logBuffers, sessionId, streamId,
                new UnsafeBufferPosition(values, limitCounterId), originalRegistrationId);
            final AtomicCounter backPressure = new AtomicCounter(values, backPressureCounterId);
            final LogPublication.CloseListener onClose = (p) -> onPublicationClose(p, logBuffers);
            final LogPublication publication = exclusive ?
                new ExclusiveLogPublication(channel, publicationLog, backPressure, onClose, null) :
                new ConcurrentLogPublication(channel, publicationLog, backPressure, onClose, registrationId);
            publications.put(registrationId, publication);
            return publication;
        }
    }

    private void onPublicationClose(final LogPublication publication, final LogBuffers logBuffers)
    {
        synchronized (lock)
        {
            publications.remove(publication.registrationId());
            if (!driverGone)
            {
                sendRemove(DriverProtocol.REMOVE_PUBLICATION, publication.registrationId());
            }
            linger(logBuffers);
        }
    }

    public Subscription addSubscription(
        final String channel,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        final ChannelUri uri = ChannelUri.parse(channel);
        if (uri.isAeron())
        {
            ensureOpen();
            return aeronChannels.get()
                .addSubscription(channel, streamId, availableImageHandler, unavailableImageHandler);
        }
        synchronized (lock)
        {
            ensureOpen();
            final long correlationId = toDriver.nextCorrelationId();
            final ClientSubscription entry = new ClientSubscription();
            subscriptions.put(correlationId, entry);
            try
            {
                commandBuffer.putInt(DriverProtocol.STREAM_ID_OFFSET, streamId);
                commandBuffer.putInt(DriverProtocol.EXCLUSIVE_OFFSET, 0);
                final int channelLength = commandBuffer.putStringAscii(DriverProtocol.CHANNEL_OFFSET, channel);
                sendCommand(
                    DriverProtocol.ADD_SUBSCRIPTION, correlationId, DriverProtocol.CHANNEL_OFFSET + channelLength);
                final DirectBuffer response = awaitResponse(correlationId, DriverProtocol.ON_SUBSCRIPTION_READY);
                final long registrationId = response.getLong(DriverProtocol.REGISTRATION_ID_OFFSET);
                entry.subscription = new NativeSubscription(registrationId, uri, streamId, availableImageHandler,
                    unavailableImageHandler, (s) -> onSubscriptionClose(correlationId, entry), errorHandler);
            }
            catch (final RuntimeException ex)
            {
                subscriptions.remove(correlationId);
                throw ex;
            }
            for (final ImageEvent event : entry.early)
            {
                attachImage(entry, event);
            }
            entry.early.clear();
            return entry.subscription;
        }
    }

    private void onSubscriptionClose(final long correlationId, final ClientSubscription entry)
    {
        synchronized (lock)
        {
            subscriptions.remove(correlationId);
            for (final LogImage image : entry.subscription.logImages())
            {
                detachImage(entry, image.correlationId());
            }
            if (!driverGone)
            {
                sendRemove(DriverProtocol.REMOVE_SUBSCRIPTION, entry.subscription.registrationId());
            }
        }
    }

    private void sendRemove(final int msgTypeId, final long registrationId)
    {
        commandBuffer.putLong(DriverProtocol.REMOVE_REGISTRATION_ID_OFFSET, registrationId);
        sendCommand(msgTypeId, toDriver.nextCorrelationId(), DriverProtocol.REMOVE_REGISTRATION_ID_OFFSET + 8);
    }

    /** A keepalive names this process, so that a driver can free this client as soon as it dies (ClientProcess). */
    private void sendKeepalive()
    {
        commandBuffer.putLong(DriverProtocol.KEEPALIVE_PID_OFFSET, ClientProcess.pid());
        commandBuffer.putLong(DriverProtocol.KEEPALIVE_PID_NAMESPACE_OFFSET, ClientProcess.pidNamespace());
        sendCommand(DriverProtocol.CLIENT_KEEPALIVE, toDriver.nextCorrelationId(), DriverProtocol.KEEPALIVE_LENGTH);
    }

    /** Under the lock: writes the command in {@link #commandBuffer} (from offset 16 on) to the ring. */
    private void sendCommand(final int msgTypeId, final long correlationId, final int length)
    {
        commandBuffer.putLong(DriverProtocol.CLIENT_ID_OFFSET, clientId);
        commandBuffer.putLong(DriverProtocol.COMMAND_CORRELATION_ID_OFFSET, correlationId);
        final long deadlineMs = epochMs() + driverTimeoutMs;
        while (!toDriver.write(msgTypeId, commandBuffer, 0, length))
        {
            if (epochMs() > deadlineMs)
            {
                onDriverGone(new DriverTimeoutException(
                    "the Verbus driver at " + context.dir() + " took no command for " + driverTimeoutMs + " ms"));
                throw new IllegalStateException("Verbus driver not responding: its command ring stayed full");
            }
            LockSupport.parkNanos(100_000);
        }
    }

    /** Under the lock: reads the broadcast until the driver answers the command, or the driver is gone. */
    private DirectBuffer awaitResponse(final long correlationId, final int expectedType)
    {
        awaitedCorrelationId = correlationId;
        awaitedType = 0;
        final long deadlineMs = epochMs() + driverTimeoutMs;
        while (0 == awaitedType)
        {
            if (0 == receive())
            {
                checkDriver();
                if (driverGone)
                {
                    throw new IllegalStateException("Verbus driver at " + context.dir() + " is gone");
                }
                if (epochMs() > deadlineMs)
                {
                    awaitedCorrelationId = -1;
                    throw new IllegalStateException("no answer from the Verbus driver at " + context.dir() +
                        " within " + driverTimeoutMs + " ms");
                }
                LockSupport.parkNanos(20_000);
            }
        }
        if (DriverProtocol.ON_ERROR == awaitedType)
        {
            throw new IllegalArgumentException(awaitedResponse.getStringAscii(DriverProtocol.ERROR_MESSAGE_OFFSET));
        }
        if (expectedType != awaitedType)
        {
            throw new IllegalStateException("driver answered " + awaitedType + ", expected " + expectedType);
        }
        return awaitedResponse;
    }

    /**
     * Aeron's {@code addCounter} on a client: the driver allocates the counter in its counters file, which this
     * client has mapped, and frees it when the counter is closed, when this client closes or when the driver takes
     * it for dead.
     */
    public AtomicCounter addCounter(
        final int typeId, final DirectBuffer keyBuffer, final int keyOffset, final int keyLength, final String label)
    {
        final int length = null == keyBuffer ? 0 : keyLength;
        if (length < 0 || length > DriverProtocol.MAX_COUNTER_KEY_LENGTH)
        {
            throw new IllegalArgumentException(
                "counter key length " + keyLength + " must be from 0 to " + DriverProtocol.MAX_COUNTER_KEY_LENGTH);
        }
        final String text = null == label ? "" : label;
        synchronized (lock)
        {
            ensureOpen();
            final long correlationId = toDriver.nextCorrelationId();
            commandBuffer.putInt(DriverProtocol.COUNTER_TYPE_ID_OFFSET, typeId);
            commandBuffer.putInt(DriverProtocol.COUNTER_KEY_LENGTH_OFFSET, length);
            commandBuffer.setMemory(DriverProtocol.COUNTER_KEY_OFFSET, DriverProtocol.MAX_COUNTER_KEY_LENGTH, (byte)0);
            if (length > 0)
            {
                commandBuffer.putBytes(DriverProtocol.COUNTER_KEY_OFFSET, keyBuffer, keyOffset, length);
            }
            final int labelLength = commandBuffer.putStringAscii(DriverProtocol.COUNTER_LABEL_OFFSET,
                text.length() > CountersReader.MAX_LABEL_LENGTH ? text.substring(0, CountersReader.MAX_LABEL_LENGTH) :
                text);
            sendCommand(DriverProtocol.ADD_COUNTER, correlationId, DriverProtocol.COUNTER_LABEL_OFFSET + labelLength);
            final DirectBuffer response = awaitResponse(correlationId, DriverProtocol.ON_COUNTER_READY);
            final ClientCounter counter = new ClientCounter(response.getLong(DriverProtocol.REGISTRATION_ID_OFFSET),
                response.getInt(DriverProtocol.COUNTER_ID_OFFSET));
            counters.put(counter.registrationId, counter);
            return counter;
        }
    }

    /** A counter this client added: closing it asks the driver to free it. */
    private final class ClientCounter extends AtomicCounter
    {
        private final long registrationId;

        ClientCounter(final long registrationId, final int counterId)
        {
            super(countersFile.valuesBuffer(), counterId);
            this.registrationId = registrationId;
        }

        public void close()
        {
            synchronized (lock)
            {
                if (!isClosed())
                {
                    super.close();
                    counters.remove(registrationId);
                    if (!driverGone)
                    {
                        sendRemove(DriverProtocol.REMOVE_COUNTER, registrationId);
                    }
                }
            }
        }

        /** Closed without a command: the driver frees it with the client, or is gone. */
        void closeLocally()
        {
            super.close();
        }
    }

    /** Under the lock: every counter of this client closed here, when the driver frees them all. */
    private void closeCountersLocally()
    {
        for (final ClientCounter counter : counters.values())
        {
            counter.closeLocally();
        }
        counters.clear();
    }

    public long nextRegistrationId()
    {
        return FIRST_LOCAL_REGISTRATION_ID + toDriver.nextCorrelationId();
    }

    public int invoke()
    {
        if (null != runner)
        {
            return 0;
        }
        int work = doWork();
        final AeronChannels aeron = aeronChannels.ifMade();
        if (null != aeron && !aeron.isClosed())
        {
            work += aeron.invoke();
        }
        return work;
    }

    public CountersReader countersReader()
    {
        ensureOpen();
        return countersFile.countersReader();
    }

    public Verbus.Context context()
    {
        return context;
    }

    public boolean isClosed()
    {
        return isClosed;
    }

    private void ensureOpen()
    {
        if (isClosed || driverGone)
        {
            throw new IllegalStateException(driverGone ? "Verbus is closed: its driver is gone" : "Verbus is closed");
        }
    }

    public void close()
    {
        synchronized (lock)
        {
            if (closeCalled)
            {
                return;
            }
            closeCalled = true;
            final boolean wasGone = driverGone;
            isClosed = true;
            for (final LogPublication publication : new ArrayList<>(publications.values()))
            {
                publication.close();
            }
            for (final ClientSubscription entry : new ArrayList<>(subscriptions.values()))
            {
                if (null != entry.subscription)
                {
                    entry.subscription.close();
                }
            }
            closeCountersLocally();
            if (!wasGone)
            {
                sendCommand(DriverProtocol.CLIENT_CLOSE, toDriver.nextCorrelationId(), 16);
            }
            driverGone = true;
        }
        CloseHelper.quietClose(aeronChannels.ifMade());
        CloseHelper.quietClose(runner);
        synchronized (lock)
        {
            // As an embedded Verbus does: the application may still hold a claim or an image; never unmap under it.
            for (final LogBuffers logBuffers : mapped)
            {
                logBuffers.quarantine();
            }
            mapped.clear();
            lingering.clear();
            countersFile.quarantine();
            cncFile.close();
        }
    }
}
