package io.verbus;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.aeron.AeronChannels;
import io.verbus.counters.CounterTypes;
import io.verbus.counters.CountersFile;
import io.verbus.driver.AgentThreads;
import io.verbus.driver.DriverConductor;
import io.verbus.driver.DutyCycleClock;
import io.verbus.driver.ImagePosition;
import io.verbus.driver.MediaAgent;
import io.verbus.driver.NativeLog;
import io.verbus.log.ConcurrentLogPublication;
import io.verbus.log.DirectSendHandOff;
import io.verbus.log.ExclusiveLogPublication;
import io.verbus.log.LogBuffers;
import io.verbus.log.LogImage;
import io.verbus.log.LogPublication;
import io.verbus.media.ImageDescriptor;
import io.verbus.media.ImageSink;
import io.verbus.media.MediaContext;
import io.verbus.media.MediaFactory;
import io.verbus.media.MediaReceiver;
import io.verbus.media.MediaSender;
import io.verbus.media.PublicationLog;
import io.verbus.memory.MemoryMapper;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;
import org.agrona.concurrent.status.ReadablePosition;
import org.agrona.concurrent.status.UnsafeBufferPosition;

import java.nio.file.Path;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.ServiceLoader;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * The embedded driver behind {@link Verbus}: it owns the counters file, the memory mapper, the agents and the
 * registries of logs and subscriptions. Control operations (add, close, image events) run under one lock, the
 * counters manager's monitor (so media allocating counters from their agents serialise with the driver), and are
 * never on a hot path; the agents read copy-on-write arrays and never take the lock in their duty cycle except to
 * retire a closed log.
 */
final class VerbusDriver implements VerbusBackend
{
    private static final System.Logger LOGGER = System.getLogger(Verbus.class.getName());

    /**
     * Registration ids of native publications and subscriptions count up from here, far above the correlation ids an
     * Aeron driver counts up from 0 (embedded, or shared with other clients), so the ids of {@code aeron:} and native
     * resources never collide (one id space serves {@code Verbus.asyncAdd*}).
     */
    static final long FIRST_REGISTRATION_ID = 1L << 32;

    /** The counters manager itself: media synchronise on it to allocate counters from their agents. */
    private final Object lock;
    private final Verbus.Context context;
    private final Path dir;
    private final CountersFile countersFile;
    private final CountersManager countersManager;
    private final AtomicCounter errorCounter;
    private final ErrorHandler errorHandler;
    private final MemoryMapper memoryMapper;
    private final MediaContext mediaContext;
    private final Map<String, MediaFactory> mediaFactories;
    private final DriverConductor conductor;
    private final MediaAgent<MediaSender> senderAgent;
    private final MediaAgent<MediaReceiver> receiverAgent;
    private final AgentThreads agentThreads;
    private final AgentInvoker invoker;
    private final List<NativeLog> ipcLogs = new ArrayList<>();
    /** Logs of concurrent publications, which later concurrent publications of the same channel and stream share. */
    private final List<ConcurrentLog> concurrentLogs = new ArrayList<>();
    private final List<NativeSubscription> ipcSubscriptions = new ArrayList<>();
    private final List<NativeLog> bridgeLogs = new ArrayList<>();
    private final List<NativeSubscription> bridgeSubscriptions = new ArrayList<>();
    /** The logs of this driver's media publications, with their channels, for spies to find. */
    private final Map<NativeLog, ChannelUri> mediaLogs = new IdentityHashMap<>();
    private final List<NativeSubscription> spySubscriptions = new ArrayList<>();
    private final List<LogPublication> publications = new ArrayList<>();
    private final List<NativeSubscription> subscriptions = new ArrayList<>();
    private final Map<NativeLog, LogResources> logResources = new IdentityHashMap<>();
    private final LazyAeronChannels aeronChannels;
    private int nextSessionId = ThreadLocalRandom.current().nextInt();
    private long nextRegistrationId = FIRST_REGISTRATION_ID;
    private final boolean sharedLogs;
    private volatile boolean isClosed;
    /** INVOKER mode: the invoker stopped on an interrupt and the application was told (invoking thread only). */
    private boolean invokerStopReported;

    VerbusDriver(final Verbus.Context context)
    {
        this(context, false);
    }

    /**
     * @param context    concluded.
     * @param sharedLogs true for a standalone driver: {@code ipc} log files stay in the dir (until the log is
     *                   retired) so that client processes can map them.
     */
    VerbusDriver(final Verbus.Context context, final boolean sharedLogs)
    {
        this.sharedLogs = sharedLogs;
        this.context = context;
        this.dir = Path.of(context.dir());
        this.countersFile = CountersFile.create(dir, context.maxCounters());
        try
        {
            this.countersManager = countersFile.countersManager();
            this.lock = countersManager;
            this.aeronChannels = new LazyAeronChannels(lock, this::makeAeronChannels);
            this.errorCounter = countersManager.newCounter("errors", CounterTypes.ERRORS_TYPE_ID);
            final AtomicCounter unblockedPublications = countersManager.newCounter(
                "unblocked publications", CounterTypes.UNBLOCKED_PUBLICATIONS_TYPE_ID);
            final ErrorHandler userHandler = context.errorHandler();
            this.errorHandler = (throwable) ->
            {
                errorCounter.increment();
                if (null != userHandler)
                {
                    userHandler.onError(throwable);
                }
                else
                {
                    LOGGER.log(System.Logger.Level.ERROR, "Verbus error at " + Instant.now(), throwable);
                }
            };
            // One clock read per duty cycle where one thread runs every agent; a dedicated thread reads its own.
            final DutyCycleClock dutyCycleClock = context.threadingMode() == ThreadingMode.DEDICATED ?
                null : new DutyCycleClock(context.nanoClock());
            final NanoClock agentClock = null == dutyCycleClock ? context.nanoClock() : dutyCycleClock.clock();
            this.memoryMapper = new MemoryMapper(
                dir, null == context.hugetlbfsDir() ? null : Path.of(context.hugetlbfsDir()), context.useHugePages());
            this.mediaContext = new MediaContext()
                .countersManager(countersManager)
                .errorHandler(errorHandler)
                .errorCounter(errorCounter)
                .nanoClock(context.nanoClock())
                .dutyCycleClock(agentClock)
                .epochNanoClock(context.epochNanoClock())
                .memoryMapper(memoryMapper)
                .verbusDir(dir)
                .idleStrategyName(context.idleStrategy())
                .threadingMode(context.threadingMode());
            this.mediaFactories = loadMediaFactories();

            this.conductor = new DriverConductor(agentClock, context.lingerTimeoutNs(),
                context.publicationUnblockTimeoutNs(), unblockedPublications, this::onRetire);
            this.senderAgent = new MediaAgent<>("verbus-sender", MediaSender::doWork, errorHandler);
            this.receiverAgent = new MediaAgent<>("verbus-receiver", MediaReceiver::doWork, errorHandler);
            this.agentThreads = new AgentThreads(
                context.threadingMode(), context.idleStrategy(), errorHandler, conductor, senderAgent, receiverAgent,
                context.conductorCpu(), context.senderCpu(), context.receiverCpu(), dutyCycleClock);
            this.invoker = agentThreads.invoker();
        }
        catch (final RuntimeException ex)
        {
            countersFile.close();
            throw ex;
        }
    }

    private static Map<String, MediaFactory> loadMediaFactories()
    {
        final Map<String, MediaFactory> factories = new TreeMap<>();
        for (final MediaFactory factory : ServiceLoader.load(MediaFactory.class))
        {
            final String scheme = factory.scheme();
            if (ChannelUri.IPC_SCHEME.equals(scheme) || ChannelUri.AERON_SCHEME.equals(scheme))
            {
                throw new IllegalStateException(
                    "media " + factory.getClass().getName() + " claims the built-in scheme '" + scheme + "'");
            }
            factories.putIfAbsent(scheme, factory);
        }
        return factories;
    }

    public Publication addPublication(final String channel, final int streamId, final boolean exclusive)
    {
        return addPublication(channel, streamId, exclusive, true);
    }

    /**
     * @param allowDirect false for a standalone driver's client: its writer is in another process and cannot send
     *                    itself, so the sender agent sends every frame (no direct mode).
     */
    Publication addPublication(
        final String channel, final int streamId, final boolean exclusive, final boolean allowDirect)
    {
        final ChannelUri uri = publicationUri(channel);
        if (uri.isAeron())
        {
            ensureOpen();
            return aeronChannels.get().addPublication(channel, streamId, exclusive);
        }

        final MediaFactory factory = ChannelUri.IPC_SCHEME.equals(uri.scheme()) ? null : mediaFactory(uri);
        uri.validateKeys(null == factory ? Set.of() : factory.supportedKeys());
        final int termLength = uri.termLength(context.termLength());
        final int mtu = uri.mtu(context.mtuLength());
        final int window = uri.window(termLength);
        final Integer requestedSessionId = uri.hasSessionId() ? uri.sessionId() : null;

        synchronized (lock)
        {
            ensureOpen();
            if (!exclusive)
            {
                final LogPublication shared = addToConcurrentLog(uri, channel, streamId, requestedSessionId);
                if (null != shared)
                {
                    return shared;
                }
            }
            int countersNeeded = 3;
            for (final NativeSubscription subscription : null == factory ? ipcSubscriptions : spySubscriptions)
            {
                countersNeeded += subscription.streamId() == streamId ? 1 : 0;
            }
            ensureCountersAvailable(countersNeeded);
            final int sessionId = null == requestedSessionId ?
                nextFreeSessionId(streamId) : checkSessionIdFree(requestedSessionId, streamId, channel);
            final long registrationId = nextRegistrationId++;
            final String label = uri.scheme() + " stream=" + streamId + " session=" + sessionId;
            final LogBuffers logBuffers = LogBuffers.map(
                memoryMapper, uri.scheme() + "-" + streamId + "-" + sessionId, termLength, sharedLogs);
            final List<AutoCloseable> allocated = new ArrayList<>();
            allocated.add(logBuffers);
            try
            {
                logBuffers.initialise(sessionId, streamId, ThreadLocalRandom.current().nextInt(), mtu,
                    exclusive ? LogBufferDescriptor.LOG_BUFFER_TYPE_EXCLUSIVE_PUBLICATION :
                        LogBufferDescriptor.LOG_BUFFER_TYPE_CONCURRENT_PUBLICATION);
                final PublicationCounters counters = newPublicationCounters(label, sessionId, streamId, allocated);
                final UnsafeBufferPosition publisherLimit = counters.publisherLimit();
                final UnsafeBufferPosition publisherPosition = counters.publisherPosition();
                final AtomicCounter backPressure = counters.backPressure();

                final PublicationLog publicationLog =
                    new PublicationLog(logBuffers, sessionId, streamId, publisherLimit, registrationId);
                final NativeLog nativeLog =
                    new NativeLog(registrationId, null == factory, publicationLog, publisherPosition, window);
                final LogResources releaseLog = new LogResources(logBuffers, allocated);

                final ConcurrentLog concurrentLog = exclusive ? null : new ConcurrentLog(uri, nativeLog, backPressure);
                final LogPublication publication = null == factory ?
                    newIpcPublication(channel, streamId, nativeLog, backPressure, concurrentLog) :
                    newMediaPublication(channel, uri, factory, allowDirect, nativeLog, backPressure, concurrentLog);

                logResources.put(nativeLog, releaseLog);
                publications.add(publication);
                if (null != concurrentLog)
                {
                    concurrentLogs.add(concurrentLog);
                }
                conductor.addLog(nativeLog);
                return publication;
            }
            catch (final RuntimeException ex)
            {
                closeAll(allocated);
                throw ex;
            }
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

        if (uri.isSpy() && ChannelUri.IPC_SCHEME.equals(uri.scheme()))
        {
            throw new IllegalArgumentException("channel '" + channel + "': " + ChannelUri.SPY_PREFIX + " is for " +
                "media channels; an ipc subscription already reads its publications' logs");
        }
        final MediaFactory factory = ChannelUri.IPC_SCHEME.equals(uri.scheme()) ? null : mediaFactory(uri);
        uri.validateKeys(null == factory ? Set.of() : factory.supportedKeys());
        uri.window(uri.termLength(context.termLength()));
        uri.mtu(context.mtuLength());
        if (uri.hasSessionId())
        {
            uri.sessionId(); // a bad value fails here, before anything is allocated
        }

        synchronized (lock)
        {
            ensureOpen();
            final long registrationId = nextRegistrationId++;
            if (uri.isSpy())
            {
                return addSpySubscription(
                    registrationId, uri, streamId, availableImageHandler, unavailableImageHandler);
            }
            if (null == factory)
            {
                int countersNeeded = 0;
                for (final NativeLog log : ipcLogs)
                {
                    countersNeeded += log.publicationLog().streamId() == streamId && !log.isClosed() ? 1 : 0;
                }
                ensureCountersAvailable(countersNeeded);
                final NativeSubscription subscription = new NativeSubscription(
                    registrationId, uri, streamId, availableImageHandler, unavailableImageHandler,
                    (s) -> onIpcSubscriptionClose(s), errorHandler);
                ipcSubscriptions.add(subscription);
                subscriptions.add(subscription);
                for (final NativeLog log : ipcLogs)
                {
                    if (log.publicationLog().streamId() == streamId && !log.isClosed())
                    {
                        attachIpcImage(log, subscription, log.publicationLog().producerPosition());
                    }
                }
                return subscription;
            }

            final MediaImageSink sink = new MediaImageSink(streamId);
            final MediaReceiver[] receiverHolder = new MediaReceiver[1];
            final NativeSubscription subscription = new NativeSubscription(
                registrationId, uri, streamId, availableImageHandler, unavailableImageHandler,
                (s) -> onMediaSubscriptionClose(s, sink, receiverHolder[0]), errorHandler);
            sink.subscription = subscription;
            receiverHolder[0] = factory.newReceiver(mediaContext, uri, streamId, sink);
            receiverAgent.add(receiverHolder[0]);
            subscriptions.add(subscription);
            return subscription;
        }
    }

    private static ChannelUri publicationUri(final String channel)
    {
        final ChannelUri uri = ChannelUri.parse(channel);
        if (uri.isSpy())
        {
            throw new IllegalArgumentException("channel '" + channel + "': " + ChannelUri.SPY_PREFIX +
                " is for subscriptions only (a spy reads a publication's log)");
        }
        return uri;
    }

    /** Under the lock: a new media publication's log becomes an image of every spy on its channel and stream. */
    private void attachSpies(final NativeLog log, final ChannelUri uri)
    {
        for (final NativeSubscription spy : spySubscriptions)
        {
            if (spy.streamId() == log.publicationLog().streamId() && spy.uri().matchesSpiedPublication(uri))
            {
                attachIpcImage(log, spy, 0);
            }
        }
    }

    /**
     * Under the lock: Aeron's spy on this driver's media publications of a channel ({@code aeron-spy:rdma:...}). Each
     * matching publication's log becomes an image read in place, as an {@code ipc} image is; the spy is no
     * subscriber to the media (it neither connects the publication nor counts in the media's flow control), but the
     * publisher never laps it: its position holds back the log's cleaning, and with it the limit the media may set
     * ({@link NativeLog#conductorDuty()}).
     */
    private NativeSubscription addSpySubscription(
        final long registrationId,
        final ChannelUri uri,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        int countersNeeded = 0;
        for (final Map.Entry<NativeLog, ChannelUri> entry : mediaLogs.entrySet())
        {
            countersNeeded += isSpiedBy(entry.getKey(), entry.getValue(), uri, streamId) ? 1 : 0;
        }
        ensureCountersAvailable(countersNeeded);
        final NativeSubscription subscription = new NativeSubscription(
            registrationId, uri, streamId, availableImageHandler, unavailableImageHandler,
            (s) -> onIpcSubscriptionClose(s), errorHandler);
        spySubscriptions.add(subscription);
        subscriptions.add(subscription);
        for (final Map.Entry<NativeLog, ChannelUri> entry : mediaLogs.entrySet())
        {
            final NativeLog log = entry.getKey();
            if (isSpiedBy(log, entry.getValue(), uri, streamId))
            {
                attachIpcImage(log, subscription, log.publicationLog().producerPosition());
            }
        }
        return subscription;
    }

    private static boolean isSpiedBy(
        final NativeLog log, final ChannelUri publicationUri, final ChannelUri spyUri, final int streamId)
    {
        return !log.isClosed() && log.publicationLog().streamId() == streamId &&
            spyUri.matchesSpiedPublication(publicationUri);
    }

    /** @return the next session id no open publication of the stream has. Under the lock. */
    private int nextFreeSessionId(final int streamId)
    {
        int sessionId = nextSessionId++;
        while (isSessionIdInUse(sessionId, streamId))
        {
            sessionId = nextSessionId++;
        }
        return sessionId;
    }

    /** @return the session id a channel asked for, when no open publication of the stream has it. Under the lock. */
    private int checkSessionIdFree(final int sessionId, final int streamId, final String channel)
    {
        if (isSessionIdInUse(sessionId, streamId))
        {
            throw new IllegalArgumentException("session-id=" + sessionId + " in channel '" + channel +
                "' is already used by an open publication of stream " + streamId);
        }
        return sessionId;
    }

    private boolean isSessionIdInUse(final int sessionId, final int streamId)
    {
        for (final LogPublication publication : publications)
        {
            if (publication.sessionId() == sessionId && publication.streamId() == streamId)
            {
                return true;
            }
        }
        return false;
    }

    private MediaFactory mediaFactory(final ChannelUri uri)
    {
        final MediaFactory factory = mediaFactories.get(uri.scheme());
        if (null == factory)
        {
            final TreeSet<String> known = new TreeSet<>(mediaFactories.keySet());
            known.add(ChannelUri.IPC_SCHEME);
            known.add(ChannelUri.AERON_SCHEME);
            throw new IllegalArgumentException(
                "unknown media scheme '" + uri.scheme() + "' in channel '" + uri + "': known schemes are " + known +
                " (other media are found through META-INF/services/" + MediaFactory.class.getName() + ")");
        }
        return factory;
    }

    /**
     * Creates an image of an ipc log for a subscription, joining at a position, unless the subscription is for
     * another session (a session-specific subscription). Under the lock.
     */
    private void attachIpcImage(final NativeLog log, final NativeSubscription subscription, final long joinPosition)
    {
        final PublicationLog publicationLog = log.publicationLog();
        final int sessionId = publicationLog.sessionId();
        final int streamId = publicationLog.streamId();
        if (!subscription.uri().matchesSession(sessionId))
        {
            return;
        }
        final String source = subscription.uri().isSpy() ? "spy" : "ipc";
        final ImagePosition position = newImagePosition(
            "sub-pos: " + source + " stream=" + streamId + " session=" + sessionId + " sub=" +
            subscription.registrationId(), sessionId, streamId);
        position.setRelease(joinPosition);
        final LogBuffers logBuffers = publicationLog.logBuffers();
        final LogImage image = new LogImage(
            subscription, log.registrationId(), sessionId, streamId, publicationLog.initialTermId(),
            logBuffers.termBuffers(), logBuffers.metaDataBuffer(), 0, logBuffers.fileChannel(), position, null,
            source, errorHandler, this::onCorruptImage);
        log.addSubscriberPosition(position);
        subscription.addImage(image);
    }

    private void onCorruptImage(final LogImage image)
    {
        synchronized (lock)
        {
            for (final NativeSubscription subscription : concatSubscriptions())
            {
                if (subscription.removeImage(image))
                {
                    detachIpcPosition(image);
                    return;
                }
            }
        }
    }

    private void detachIpcPosition(final LogImage image)
    {
        final java.util.Set<NativeLog> others = new java.util.HashSet<>(bridgeLogs);
        others.addAll(mediaLogs.keySet());
        for (final NativeLog log : concat(ipcLogs, others))
        {
            if (log.registrationId() == image.correlationId())
            {
                log.removeSubscriberPosition(image.subscriberPosition());
            }
        }
        image.subscriberPosition().close();
    }

    private void onIpcSubscriptionClose(final NativeSubscription subscription)
    {
        synchronized (lock)
        {
            ipcSubscriptions.remove(subscription);
            bridgeSubscriptions.remove(subscription);
            spySubscriptions.remove(subscription);
            subscriptions.remove(subscription);
            for (final LogImage image : subscription.logImages())
            {
                subscription.removeImage(image);
                detachIpcPosition(image);
            }
        }
    }

    private void onMediaSubscriptionClose(
        final NativeSubscription subscription, final MediaImageSink sink, final MediaReceiver receiver)
    {
        synchronized (lock)
        {
            subscriptions.remove(subscription);
            sink.closed = true;
            for (final LogImage image : sink.images.values())
            {
                subscription.removeImage(image);
                image.subscriberPosition().close();
            }
            sink.images.clear();
        }
        if (!isClosed)
        {
            receiverAgent.remove(receiver, () -> {});
        }
    }

    /** Under the lock: an ipc publication on a new log, attached at once to the ipc subscriptions of its stream. */
    private LogPublication newIpcPublication(
        final String channel,
        final int streamId,
        final NativeLog nativeLog,
        final AtomicCounter backPressure,
        final ConcurrentLog concurrentLog)
    {
        final LogPublication publication =
            newLogPublication(channel, nativeLog, backPressure, concurrentLog, null, null);
        ipcLogs.add(nativeLog);
        for (final NativeSubscription subscription : ipcSubscriptions)
        {
            if (subscription.streamId() == streamId)
            {
                attachIpcImage(nativeLog, subscription, 0);
            }
        }
        return publication;
    }

    /** Under the lock: a media publication on a new log, its sender added to the sender agent. */
    private LogPublication newMediaPublication(
        final String channel,
        final ChannelUri uri,
        final MediaFactory factory,
        final boolean allowDirect,
        final NativeLog nativeLog,
        final AtomicCounter backPressure,
        final ConcurrentLog concurrentLog)
    {
        final MediaSender sender = factory.newSender(mediaContext, uri, nativeLog.publicationLog());
        final boolean direct = allowDirect && null == concurrentLog && sender.supportsDirectSend();
        // Direct mode: the writer sends itself, and the sender agent drives the media while it is idle.
        final DirectSendHandOff handOff = direct ? new DirectSendHandOff(sender, mediaContext.dutyCycleClock()) : null;
        final MediaSender agentDuty = direct ? handOff : sender;
        final LogPublication publication =
            newLogPublication(channel, nativeLog, backPressure, concurrentLog, agentDuty, handOff);
        senderAgent.add(agentDuty);
        mediaLogs.put(nativeLog, uri);
        attachSpies(nativeLog, uri);
        return publication;
    }

    /**
     * The first publication of a new log: exclusive when {@code concurrentLog} is null, else concurrent, its log then
     * closing with the last publication that shares it.
     *
     * @param agentDuty the media sender the sender agent runs for the log, to remove at its close; null on ipc.
     * @param handOff   the direct-mode hand-off of an exclusive media publication, or null.
     */
    private LogPublication newLogPublication(
        final String channel,
        final NativeLog nativeLog,
        final AtomicCounter backPressure,
        final ConcurrentLog concurrentLog,
        final MediaSender agentDuty,
        final DirectSendHandOff handOff)
    {
        final PublicationLog publicationLog = nativeLog.publicationLog();
        if (null == concurrentLog)
        {
            return new ExclusiveLogPublication(channel, publicationLog, backPressure,
                (p) -> onPublicationClose(nativeLog, agentDuty), handOff);
        }
        concurrentLog.sender = agentDuty;
        return newConcurrentPublication(channel, concurrentLog, publicationLog.registrationId());
    }

    /**
     * Under the lock: a concurrent publication on the open log of an earlier concurrent publication with the same
     * channel (keys and values in any order) and stream, as Aeron shares one: one session, one order of messages for
     * every writer. A {@code session-id} other than that log's asks for a log of its own.
     *
     * @return the new publication, or null when there is no such log.
     */
    private LogPublication addToConcurrentLog(
        final ChannelUri uri, final String channel, final int streamId, final Integer requestedSessionId)
    {
        for (final ConcurrentLog concurrentLog : concurrentLogs)
        {
            final PublicationLog log = concurrentLog.log.publicationLog();
            if (log.streamId() == streamId && concurrentLog.uri.isSameChannelAs(uri) &&
                (null == requestedSessionId || requestedSessionId == log.sessionId()))
            {
                concurrentLog.publicationCount++;
                final LogPublication publication =
                    newConcurrentPublication(channel, concurrentLog, nextRegistrationId++);
                publications.add(publication);
                return publication;
            }
        }
        return null;
    }

    /**
     * Under the lock: one concurrent publication on the shared log, the first or a later one; whichever closes last
     * closes the log.
     *
     * @param registrationId the publication's own id (the log's for the first).
     */
    private LogPublication newConcurrentPublication(
        final String channel, final ConcurrentLog concurrentLog, final long registrationId)
    {
        return new ConcurrentLogPublication(channel, concurrentLog.log.publicationLog(), concurrentLog.backPressure,
            (p) -> onConcurrentPublicationClose(concurrentLog, p), registrationId);
    }

    /** A concurrent publication closed: its log closes with the last publication that shares it. */
    private void onConcurrentPublicationClose(final ConcurrentLog concurrentLog, final LogPublication publication)
    {
        synchronized (lock)
        {
            if (!publications.remove(publication))
            {
                return; // already counted out: one publication never closes its log twice
            }
            if (--concurrentLog.publicationCount > 0)
            {
                return;
            }
            concurrentLogs.remove(concurrentLog);
        }
        onPublicationClose(concurrentLog.log, concurrentLog.sender);
    }

    /** The log of concurrent publications of one channel (its stream the log's), and how many of them are open. */
    private static final class ConcurrentLog
    {
        final ChannelUri uri;
        final NativeLog log;
        final AtomicCounter backPressure;
        /** The media sender to remove when the log closes; null on ipc. */
        MediaSender sender;
        int publicationCount = 1;

        ConcurrentLog(final ChannelUri uri, final NativeLog log, final AtomicCounter backPressure)
        {
            this.uri = uri;
            this.log = log;
            this.backPressure = backPressure;
        }
    }

    private void onPublicationClose(final NativeLog log, final MediaSender sender)
    {
        synchronized (lock)
        {
            publications.removeIf((p) -> p.publicationLog() == log.publicationLog());
            log.close(context.nanoClock().nanoTime());
            log.publicationLog().connected(false);
        }
        if (null != sender && !isClosed)
        {
            senderAgent.remove(sender, () -> {});
        }
    }

    /** On the conductor thread: a closed log drained or lingered; its images go and its memory lingers. */
    private void onRetire(final NativeLog log)
    {
        final LogResources release;
        synchronized (lock)
        {
            // Not short-circuit: a log is in one of these at most, and a media log must leave mediaLogs either way.
            if (ipcLogs.remove(log) | bridgeLogs.remove(log) | null != mediaLogs.remove(log))
            {
                for (final NativeSubscription subscription : concatSubscriptions())
                {
                    for (final LogImage image : subscription.logImages())
                    {
                        if (image.correlationId() == log.registrationId())
                        {
                            subscription.removeImage(image);
                            detachIpcPosition(image);
                        }
                    }
                }
            }
            release = logResources.remove(log);
        }
        if (null != release)
        {
            // A log still lingering when the Verbus closes is quarantined with the rest rather than unmapped.
            conductor.linger(() ->
            {
                if (isClosed)
                {
                    release.quarantine();
                }
                else
                {
                    release.release();
                }
            });
        }
    }

    /** Announces bounded images from a media receiver to one subscription. */
    private final class MediaImageSink implements ImageSink
    {
        private final int streamId;
        private NativeSubscription subscription;
        private boolean closed;
        private final Map<Long, LogImage> images = new HashMap<>();

        MediaImageSink(final int streamId)
        {
            this.streamId = streamId;
        }

        public ReadablePosition onImageAvailable(final ImageDescriptor descriptor)
        {
            if (descriptor.streamId() != streamId)
            {
                throw new IllegalArgumentException(
                    "image stream id " + descriptor.streamId() + " does not match subscription stream " + streamId);
            }
            synchronized (lock)
            {
                if (closed || isClosed)
                {
                    throw new IllegalStateException("subscription closed: image " + descriptor.imageId() + " refused");
                }
                if (images.containsKey(descriptor.imageId()))
                {
                    throw new IllegalArgumentException("image id " + descriptor.imageId() + " is already available");
                }
                if (!subscription.uri().matchesSession(descriptor.sessionId()))
                {
                    // A media should not offer it (rdma refuses it in the handshake); refusing here keeps it out.
                    throw new IllegalArgumentException("image session " + descriptor.sessionId() + " refused: " +
                        "subscription '" + subscription.channel() + "' is for session-id=" +
                        subscription.uri().sessionId());
                }
                final ImagePosition position = newImagePosition(
                    "sub-pos: " + subscription.uri().scheme() + " stream=" + streamId + " session=" +
                    descriptor.sessionId() + " source=" + descriptor.sourceIdentity(),
                    descriptor.sessionId(), streamId);
                position.setRelease(descriptor.joinPosition());
                final int mtuLength = 0 != descriptor.mtuLength() ?
                    descriptor.mtuLength() : subscription.uri().mtu(context.mtuLength());
                final LogImage image = new LogImage(
                    subscription, descriptor.imageId(), descriptor.sessionId(), streamId, descriptor.initialTermId(),
                    descriptor.termBuffers(), null, mtuLength, null, position, descriptor.bound(),
                    descriptor.sourceIdentity(), errorHandler, this::onCorrupt);
                images.put(descriptor.imageId(), image);
                subscription.addImage(image);
                return position;
            }
        }

        public void onImageUnavailable(final long imageId)
        {
            synchronized (lock)
            {
                final LogImage image = images.remove(imageId);
                if (null != image)
                {
                    subscription.removeImage(image);
                    image.subscriberPosition().close();
                }
            }
        }

        /**
         * The image stays known (and its counter allocated) until the media reports it unavailable; the image has
         * already told the media (ImageBound.onImageCorrupt) to let the connection go.
         */
        private void onCorrupt(final LogImage image)
        {
            synchronized (lock)
            {
                subscription.removeImage(image);
            }
        }
    }

    private UnsafeBufferPosition newPosition(
        final String label, final int typeId, final int sessionId, final int streamId)
    {
        final int counterId = countersManager.allocate(label, typeId, (key) -> putKey(key, sessionId, streamId));
        return new UnsafeBufferPosition((UnsafeBuffer)countersFile.valuesBuffer(), counterId, countersManager);
    }

    /** The three counters of a publication's log. */
    private record PublicationCounters(
        UnsafeBufferPosition publisherLimit, UnsafeBufferPosition publisherPosition, AtomicCounter backPressure)
    {
    }

    /**
     * Allocate a publication's limit, position and back-pressure counters, each added to {@code allocated} as soon as
     * it exists, so that a failure part way leaves nothing the caller's clean-up does not close.
     */
    private PublicationCounters newPublicationCounters(
        final String label, final int sessionId, final int streamId, final List<AutoCloseable> allocated)
    {
        final UnsafeBufferPosition publisherLimit =
            newPosition("pub-lmt: " + label, CounterTypes.PUBLISHER_LIMIT_TYPE_ID, sessionId, streamId);
        allocated.add(publisherLimit);
        final UnsafeBufferPosition publisherPosition =
            newPosition("pub-pos: " + label, CounterTypes.PUBLISHER_POSITION_TYPE_ID, sessionId, streamId);
        allocated.add(publisherPosition);
        final AtomicCounter backPressure = countersManager.newCounter(
            "back-pressure: " + label, CounterTypes.BACK_PRESSURE_EVENTS_TYPE_ID,
            (key) -> putKey(key, sessionId, streamId));
        allocated.add(backPressure);
        return new PublicationCounters(publisherLimit, publisherPosition, backPressure);
    }

    private ImagePosition newImagePosition(final String label, final int sessionId, final int streamId)
    {
        final int counterId = countersManager.allocate(
            label, CounterTypes.SUBSCRIBER_POSITION_TYPE_ID, (key) -> putKey(key, sessionId, streamId));
        return new ImagePosition((UnsafeBuffer)countersFile.valuesBuffer(), counterId, countersManager);
    }

    private static void putKey(final org.agrona.MutableDirectBuffer key, final int sessionId, final int streamId)
    {
        key.putInt(0, sessionId);
        key.putInt(Integer.BYTES, streamId);
    }

    /**
     * Under the lock, on the first {@code aeron:} channel: connects to the Aeron driver the context names
     * ({@link Verbus.Context#aeronDirectoryName()}), else launches one in {@code <dir>/aeron}.
     */
    private AeronChannels makeAeronChannels()
    {
        ensureOpen();
        return null != context.aeronDirectoryName() ?
            AeronChannels.connect(context.aeronDirectoryName(), context.threadingMode(), context.idleStrategy(),
                context.driverTimeoutMs(), errorHandler) :
            AeronChannels.launchEmbedded(dir, context.threadingMode(), context.idleStrategy(), context.termLength(),
                context.driverTimeoutMs(), errorHandler);
    }

    /** @return the lock control operations run under (a standalone driver sends its responses under it too). */
    Object lock()
    {
        return lock;
    }

    /**
     * @param registrationId of a publication's log ({@code ipc} or a media's).
     * @return the path of its log file, or null when the log is gone or its file was not kept. Under the lock.
     */
    Path logPath(final long registrationId)
    {
        // ipcLogs first: an ipc log is there before its images are attached (logResources only once it is added).
        for (final NativeLog log : concat(ipcLogs, logResources.keySet()))
        {
            if (log.registrationId() == registrationId)
            {
                final io.verbus.memory.MappedRegion region = log.publicationLog().logBuffers().region();
                return null == region || !region.isFileKept() ? null : region.path();
            }
        }
        return null;
    }

    private List<NativeSubscription> concatSubscriptions()
    {
        final List<NativeSubscription> all = new ArrayList<>(ipcSubscriptions);
        all.addAll(bridgeSubscriptions);
        all.addAll(spySubscriptions);
        return all;
    }

    /**
     * Standalone driver: a shared log that copies one media image for client processes (a bridge), laid out as the
     * image (session, stream, initial term id, term length) and starting at its position, so a block of the image
     * appended with {@code offerBlock} lands at the same position. Not an {@code ipc} log of the stream: only the
     * subscriptions attached with {@link #attachBridgeImage} see it. The conductor gives it {@code ipc} flow control
     * from their positions; closing the returned publication retires it as an {@code ipc} log is retired.
     *
     * @param image of a media subscription, at its join position.
     * @return the publication the copier appends to.
     */
    ExclusiveLogPublication addBridgeLog(final LogImage image)
    {
        final int sessionId = image.sessionId();
        final int streamId = image.streamId();
        final int termLength = image.termBufferLength();
        final int initialTermId = image.initialTermId();
        final long startPosition = image.position();
        synchronized (lock)
        {
            ensureOpen();
            ensureCountersAvailable(3);
            final long registrationId = nextRegistrationId++;
            final String label = "bridge stream=" + streamId + " session=" + sessionId;
            final LogBuffers logBuffers = LogBuffers.map(
                memoryMapper, "bridge-" + streamId + "-" + sessionId, termLength, true);
            final List<AutoCloseable> allocated = new ArrayList<>();
            allocated.add(logBuffers);
            try
            {
                final int mtu = 0 != image.mtuLength() ? image.mtuLength() : context.mtuLength();
                logBuffers.initialise(sessionId, streamId, initialTermId, mtu,
                    LogBufferDescriptor.LOG_BUFFER_TYPE_EXCLUSIVE_PUBLICATION);
                startTail(logBuffers.metaDataBuffer(), initialTermId, termLength, startPosition);
                final PublicationCounters counters = newPublicationCounters(label, sessionId, streamId, allocated);
                final UnsafeBufferPosition publisherLimit = counters.publisherLimit();
                final UnsafeBufferPosition publisherPosition = counters.publisherPosition();
                final AtomicCounter backPressure = counters.backPressure();
                publisherLimit.setRelease(startPosition);
                final PublicationLog publicationLog =
                    new PublicationLog(logBuffers, sessionId, streamId, publisherLimit, registrationId);
                final NativeLog nativeLog =
                    new NativeLog(registrationId, true, publicationLog, publisherPosition, termLength / 2);
                nativeLog.startAt(startPosition);
                final ExclusiveLogPublication publication = new ExclusiveLogPublication(
                    "bridge:" + image.sourceIdentity(), publicationLog, backPressure,
                    (p) -> onPublicationClose(nativeLog, null), null);
                bridgeLogs.add(nativeLog);
                logResources.put(nativeLog, new LogResources(logBuffers, allocated));
                conductor.addLog(nativeLog);
                return publication;
            }
            catch (final RuntimeException ex)
            {
                closeAll(allocated);
                throw ex;
            }
        }
    }

    /** Sets a new log's tail to {@code position}, and the other partitions' term ids as Aeron expects them. */
    private static void startTail(
        final UnsafeBuffer metaData, final int initialTermId, final int termLength, final long position)
    {
        final int bits = LogBufferDescriptor.positionBitsToShift(termLength);
        final int termCount = (int)(position >>> bits);
        final int termId = initialTermId + termCount;
        final int termOffset = (int)(position & (termLength - 1));
        for (int k = 1; k < LogBufferDescriptor.PARTITION_COUNT; k++)
        {
            LogBufferDescriptor.initialiseTailWithTermId(metaData,
                LogBufferDescriptor.indexByTermCount(termCount + k), termId + k - LogBufferDescriptor.PARTITION_COUNT);
        }
        LogBufferDescriptor.rawTail(metaData, LogBufferDescriptor.indexByTermCount(termCount),
            LogBufferDescriptor.packTail(termId, termOffset));
        LogBufferDescriptor.activeTermCountOrdered(metaData, termCount);
    }

    /**
     * Standalone driver: a subscription that sees only the bridge logs attached to it (a client's proxy for a media
     * subscription served by the driver). Closing it detaches its positions as for an {@code ipc} subscription.
     */
    NativeSubscription addBridgeSubscription(
        final String channel,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        final ChannelUri uri = ChannelUri.parse(channel);
        synchronized (lock)
        {
            ensureOpen();
            final NativeSubscription subscription = new NativeSubscription(
                nextRegistrationId++, uri, streamId, availableImageHandler, unavailableImageHandler,
                (s) -> onIpcSubscriptionClose(s), errorHandler);
            bridgeSubscriptions.add(subscription);
            subscriptions.add(subscription);
            return subscription;
        }
    }

    /** Standalone driver: gives a bridge subscription an image of a bridge log, joining at a position. */
    void attachBridgeImage(final long logRegistrationId, final NativeSubscription subscription, final long position)
    {
        synchronized (lock)
        {
            for (final NativeLog log : bridgeLogs)
            {
                if (log.registrationId() == logRegistrationId && !log.isClosed() &&
                    bridgeSubscriptions.contains(subscription))
                {
                    ensureCountersAvailable(1);
                    attachIpcImage(log, subscription, position);
                }
            }
        }
    }

    private static List<NativeLog> concat(final List<NativeLog> first, final Set<NativeLog> second)
    {
        final List<NativeLog> all = new ArrayList<>(first);
        all.addAll(second);
        return all;
    }

    /** @return a new registration id, e.g. for an asynchronous add that failed. */
    public long nextRegistrationId()
    {
        synchronized (lock)
        {
            return nextRegistrationId++;
        }
    }

    /** Allocates a user counter, Aeron's {@code addCounter}, with a registration id. */
    public AtomicCounter addCounter(
        final int typeId,
        final org.agrona.DirectBuffer keyBuffer,
        final int keyOffset,
        final int keyLength,
        final String label)
    {
        if (null != keyBuffer && (keyLength < 0 || keyLength > CountersManager.MAX_KEY_LENGTH))
        {
            throw new IllegalArgumentException(
                "counter key length " + keyLength + " must be from 0 to " + CountersManager.MAX_KEY_LENGTH);
        }
        synchronized (lock)
        {
            ensureOpen();
            ensureCountersAvailable(1);
            final int counterId = null == keyBuffer ?
                countersManager.allocate(label, typeId) :
                countersManager.allocate(label, typeId, (key) -> key.putBytes(0, keyBuffer, keyOffset, keyLength));
            countersManager.setCounterRegistrationId(counterId, nextRegistrationId++);
            // Freed under the lock too: the counters manager is not thread-safe; callers close from their own threads.
            return new LockedCounter((UnsafeBuffer)countersFile.valuesBuffer(), counterId);
        }
    }

    public int invoke()
    {
        int work = 0;
        if (null != invoker && !isClosed)
        {
            work += invoker.invoke();
            if (!invoker.isRunning() && !invokerStopReported)
            {
                reportInvokerStopped();
            }
            final AeronChannels aeron = aeronChannels.ifMade();
            if (null != aeron)
            {
                work += aeron.invoke();
            }
        }
        return work;
    }

    /**
     * Agrona's {@link AgentInvoker} stops for good when it finds no work on an interrupted thread (an interrupt asks
     * an agent to stop), as Aeron's conductor invoker does; from then on nothing is sent, received, acknowledged or
     * kept alive. Said once, loudly, rather than leaving a stream that just stalls.
     */
    private void reportInvokerStopped()
    {
        invokerStopReported = true;
        errorHandler.onError(new IllegalStateException("invoke() ran on an interrupted thread (" +
            Thread.currentThread().getName() + ") and the driver's agents stopped: an interrupt stops Agrona's " +
            "AgentInvoker, as it does Aeron's; this Verbus sends, receives and keeps alive nothing from now on. " +
            "Clear the thread's interrupt before invoke(), or close this Verbus and launch another"));
    }

    /** A counter for a caller outside the driver: freed under the driver's lock, as allocation is. */
    private final class LockedCounter extends AtomicCounter
    {
        LockedCounter(final UnsafeBuffer valuesBuffer, final int counterId)
        {
            super(valuesBuffer, counterId);
        }

        public void close()
        {
            synchronized (lock)
            {
                if (!isClosed())
                {
                    super.close();
                    if (!VerbusDriver.this.isClosed)
                    {
                        countersManager.free(id());
                    }
                }
            }
        }
    }

    public CountersReader countersReader()
    {
        ensureOpen();
        return countersManager;
    }

    public Verbus.Context context()
    {
        return context;
    }

    public boolean isClosed()
    {
        return isClosed;
    }

    private void ensureCountersAvailable(final int needed)
    {
        // Read once: another thread may free counters meanwhile, and a message saying "436 of 1024 free" beside
        // "full" (seen with six threads adding and closing at once) sends the reader the wrong way.
        final int available = countersManager.available();
        if (available < needed)
        {
            throw new IllegalStateException("counters file full: " + needed + " counters needed, " + available +
                " of " + countersManager.capacity() + " free (a closed publication's or subscription's counters are " +
                "freed with its log, after the linger); raise Verbus.Context.maxCounters");
        }
    }

    private void ensureOpen()
    {
        if (isClosed)
        {
            throw new IllegalStateException("Verbus is closed");
        }
    }

    public void close()
    {
        final List<LogPublication> openPublications;
        synchronized (lock)
        {
            if (isClosed)
            {
                return;
            }
            isClosed = true;
            openPublications = new ArrayList<>(publications);
            for (final NativeSubscription subscription : subscriptions)
            {
                for (final LogImage image : subscription.logImages())
                {
                    image.close();
                }
            }
        }

        // Offers now return CLOSED and polls 0; then stop the agents (they close senders and receivers on their
        // own threads), and only then retire the memory. It is quarantined, not unmapped: the application may still
        // hold a BufferClaim, a CountersReader or an Image, and touching those must never fault the JVM. Accessors
        // that Verbus owns throw IllegalStateException instead (countersReader(), Image.position()).
        openPublications.forEach(LogPublication::close);
        CloseHelper.quietClose(aeronChannels.ifMade());
        agentThreads.close();
        final List<LogResources> releases;
        synchronized (lock)
        {
            releases = new ArrayList<>(logResources.values());
            logResources.clear();
            for (final NativeSubscription subscription : subscriptions)
            {
                for (final LogImage image : subscription.logImages())
                {
                    ((ImagePosition)image.subscriberPosition()).onDriverClosed();
                }
                subscription.onDriverClosed();
            }
        }
        releases.forEach(LogResources::quarantine);
        countersFile.quarantine();
    }

    /** A log's memory and counters: released after the linger while Verbus runs, quarantined when it closes. */
    private final class LogResources
    {
        private final LogBuffers logBuffers;
        private final List<AutoCloseable> allocated;

        LogResources(final LogBuffers logBuffers, final List<AutoCloseable> allocated)
        {
            this.logBuffers = logBuffers;
            this.allocated = allocated;
        }

        void release()
        {
            synchronized (lock)
            {
                // A BufferClaim or Header the application still holds may point into this log.
                logBuffers.retire();
                closeAll(allocated);
            }
        }

        void quarantine()
        {
            logBuffers.quarantine();
        }
    }

    private static void closeAll(final List<AutoCloseable> resources)
    {
        for (int i = resources.size() - 1; i >= 0; i--)
        {
            CloseHelper.quietClose(resources.get(i));
        }
        resources.clear();
    }
}
