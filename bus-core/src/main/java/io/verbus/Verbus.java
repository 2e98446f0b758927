package io.verbus;

import io.verbus.common.InterruptImmuneIo;
import io.verbus.common.SystemProperties;
import io.verbus.driver.Affinity;
import io.verbus.driver.IdleStrategies;
import org.agrona.DirectBuffer;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.nio.file.Path;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The Verbus client with its embedded driver: publications, subscriptions and the agents that serve them.
 * <pre>{@code
 * try (Verbus verbus = Verbus.launch(new Verbus.Context().threadingMode(ThreadingMode.SHARED)))
 * {
 *     Publication pub = verbus.addPublication("ipc:term-length=64k", 1001);
 *     Subscription sub = verbus.addSubscription("ipc", 1001);
 *     long result = pub.offer(buffer, 0, length);   // > 0 new position, else a Publication code
 *     int fragments = sub.poll(fragmentHandler, 10);
 * }
 * }</pre>
 * Adding and closing publications and subscriptions is thread-safe (and not on any hot path).
 */
public final class Verbus implements AutoCloseable
{
    private final VerbusBackend driver;
    private final Map<Long, Object> asyncResults = new ConcurrentHashMap<>();

    private Verbus(final VerbusBackend driver)
    {
        this.driver = driver;
    }

    /**
     * Launches a Verbus with a default context.
     *
     * @return the running Verbus.
     */
    public static Verbus launch()
    {
        return launch(new Context());
    }

    /**
     * Validates the context, maps the counters file, and starts the driver agents per the threading mode.
     *
     * @param context to use; concluded by this call.
     * @return the running Verbus.
     * @throws IllegalArgumentException naming the setting when the context is invalid.
     */
    public static Verbus launch(final Context context)
    {
        io.verbus.log.OfferArguments.checkNotNull(context, "launch: context");
        context.conclude();
        // It maps files and waits for its agent threads to start: on a thread with its interrupt flag set, both
        // failed. The interrupt stays the application's (InterruptImmuneIo).
        return InterruptImmuneIo.withInterruptCleared(() -> new Verbus(new VerbusDriver(context)));
    }

    /**
     * Attaches to a standalone driver ({@link MediaDriver}, {@code ./verbus driver --dir D}) running on this host with
     * the context's dir, Aeron's {@code Aeron.connect}. Several processes attached to one driver exchange {@code ipc}
     * streams through its mapped logs, without a copy. The client keeps the driver informed that it lives (a
     * keepalive, from its own conductor thread or, in {@link ThreadingMode#INVOKER} mode, from {@link #invoke()}) and
     * watches the driver's heartbeat: a driver silent for {@link Context#driverTimeoutMs()} closes this Verbus
     * (publications return {@code CLOSED}, subscriptions close, {@link #isClosed()}) and the error handler gets an
     * {@code io.aeron.exceptions.DriverTimeoutException}.
     * <p>
     * Served through the driver: {@code ipc} channels, and media ({@code rdma:}) channels by the driver's media (a
     * publication sent by its sender agent, a subscription bridged from one driver-side media subscription per
     * channel and stream), and {@link #addCounter} (in the driver's counters file, freed when the counter or this
     * client closes, or when the driver takes this client for dead), and {@code aeron:} channels, by an Aeron client
     * of this process connected to the Aeron media driver the standalone driver runs (in {@code <dir>/aeron}, or the
     * one it attached to with {@link Context#aeronDirectoryName(String)}; this context's own
     * {@code aeronDirectoryName} wins if set). That client connects on the first {@code aeron:} channel and closes
     * with this Verbus or when the standalone driver is gone; should the Aeron driver die alone, Aeron's own driver
     * timeout ({@link Context#driverTimeoutMs()}) closes it and reports a {@code DriverTimeoutException}.
     *
     * @param context to use; concluded by this call. Its dir names the driver; the driver's settings (term length,
     *                MTU, threading) are the driver's own, except where a channel sets them.
     * @return the attached Verbus.
     * @throws IllegalStateException when no live driver uses the dir.
     */
    public static Verbus connect(final Context context)
    {
        io.verbus.log.OfferArguments.checkNotNull(context, "connect: context");
        context.conclude();
        return InterruptImmuneIo.withInterruptCleared(() -> new Verbus(new ClientConductor(context)));
    }

    /**
     * Adds a publication that many threads may share.
     *
     * @param channel  such as {@code ipc}, {@code aeron:ipc}, {@code aeron:udp?endpoint=host:port}, {@code rdma:...}.
     * @param streamId of the stream.
     * @return the publication.
     * @throws IllegalArgumentException naming the problem for a bad channel or an unknown scheme.
     */
    public Publication addPublication(final String channel, final int streamId)
    {
        return driver.addPublication(channel, streamId, false);
    }

    /**
     * Adds a publication with a single writer thread.
     *
     * @param channel  as for {@link #addPublication(String, int)}.
     * @param streamId of the stream.
     * @return the publication.
     * @throws IllegalArgumentException naming the problem for a bad channel or an unknown scheme.
     */
    public ExclusivePublication addExclusivePublication(final String channel, final int streamId)
    {
        return (ExclusivePublication)driver.addPublication(channel, streamId, true);
    }

    /**
     * Adds a subscription with the context's image handlers ({@link Context#availableImageHandler()} and
     * {@link Context#unavailableImageHandler()}, which by default do nothing), as Aeron does.
     *
     * @param channel  as for {@link #addPublication(String, int)}.
     * @param streamId of the stream.
     * @return the subscription.
     */
    public Subscription addSubscription(final String channel, final int streamId)
    {
        final Context context = driver.context();
        return addSubscription(channel, streamId, context.availableImageHandler(), context.unavailableImageHandler());
    }

    /**
     * Adds a subscription.
     *
     * @param channel                 as for {@link #addPublication(String, int)}.
     * @param streamId                of the stream.
     * @param availableImageHandler   told of each image that joins.
     * @param unavailableImageHandler told of each image that leaves.
     * @return the subscription.
     * @throws IllegalArgumentException naming the problem for a bad channel or an unknown scheme.
     */
    public Subscription addSubscription(
        final String channel,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        io.verbus.log.OfferArguments.checkNotNull(availableImageHandler, "addSubscription: availableImageHandler");
        io.verbus.log.OfferArguments.checkNotNull(unavailableImageHandler, "addSubscription: unavailableImageHandler");
        return driver.addSubscription(channel, streamId, availableImageHandler, unavailableImageHandler);
    }

    /**
     * Adds a publication without waiting on the caller's behalf, Aeron's asynchronous shape: collect it with
     * {@link #getPublication(long)}. The embedded driver completes an add within the call (there is no driver
     * process to answer later), so the publication is ready at once; an add that fails does not throw here but from
     * {@code getPublication}, as in Aeron.
     *
     * @param channel  as for {@link #addPublication(String, int)}.
     * @param streamId of the stream.
     * @return the registration id to collect the publication with; equals its {@link Publication#registrationId()}.
     */
    public long asyncAddPublication(final String channel, final int streamId)
    {
        try
        {
            return stashAsync(addPublication(channel, streamId));
        }
        catch (final RuntimeException ex)
        {
            return stashAsyncFailure(ex);
        }
    }

    /**
     * As {@link #asyncAddPublication(String, int)}, for an exclusive publication: collect it with
     * {@link #getExclusivePublication(long)}.
     *
     * @return the registration id to collect the publication with.
     */
    public long asyncAddExclusivePublication(final String channel, final int streamId)
    {
        try
        {
            return stashAsync(addExclusivePublication(channel, streamId));
        }
        catch (final RuntimeException ex)
        {
            return stashAsyncFailure(ex);
        }
    }

    /**
     * As {@link #asyncAddPublication(String, int)}, for a subscription with the context's image handlers: collect it
     * with {@link #getSubscription(long)}.
     *
     * @return the registration id to collect the subscription with.
     */
    public long asyncAddSubscription(final String channel, final int streamId)
    {
        final Context context = driver.context();
        return asyncAddSubscription(
            channel, streamId, context.availableImageHandler(), context.unavailableImageHandler());
    }

    /**
     * As {@link #asyncAddPublication(String, int)}, for a subscription with its own image handlers.
     *
     * @return the registration id to collect the subscription with.
     */
    public long asyncAddSubscription(
        final String channel,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        try
        {
            return stashAsync(addSubscription(channel, streamId, availableImageHandler, unavailableImageHandler));
        }
        catch (final RuntimeException ex)
        {
            return stashAsyncFailure(ex);
        }
    }

    /**
     * Collects a publication added with {@link #asyncAddPublication(String, int)}. Aeron's semantics: null when the id
     * is unknown (or the publication has since been closed), the publication as long as it is open, and the add's
     * error, thrown once, when it failed.
     *
     * @param registrationId from {@link #asyncAddPublication(String, int)}.
     * @return the publication, or null.
     * @throws IllegalArgumentException (or what the add threw) when the add failed.
     * @throws IllegalStateException    when the id belongs to a subscription or an exclusive publication.
     */
    public Publication getPublication(final long registrationId)
    {
        return asyncResult(registrationId, Publication.class, false);
    }

    /**
     * Collects a publication added with {@link #asyncAddExclusivePublication(String, int)}; as
     * {@link #getPublication(long)}.
     *
     * @param registrationId from {@link #asyncAddExclusivePublication(String, int)}.
     * @return the publication, or null.
     */
    public ExclusivePublication getExclusivePublication(final long registrationId)
    {
        return asyncResult(registrationId, ExclusivePublication.class, true);
    }

    /**
     * Collects a subscription added with {@link #asyncAddSubscription}; as {@link #getPublication(long)}.
     *
     * @param registrationId from {@code asyncAddSubscription}.
     * @return the subscription, or null.
     */
    public Subscription getSubscription(final long registrationId)
    {
        return asyncResult(registrationId, Subscription.class, false);
    }

    /**
     * Allocates a counter in this Verbus's counters file (shown by {@code ./verbus stat}), Aeron's
     * {@code addCounter}. Aeron returns its {@code io.aeron.Counter}, a subclass of {@link AtomicCounter}: declare
     * the variable as {@code AtomicCounter}. Closing the counter frees it.
     *
     * @param typeId of the counter: avoid Verbus's own (see {@code io.verbus.counters.CounterTypes}).
     * @param label  shown next to its value.
     * @return the counter, registered under a new registration id.
     * @throws IllegalStateException when the counters file is full.
     */
    public AtomicCounter addCounter(final int typeId, final String label)
    {
        return driver.addCounter(typeId, null, 0, 0, label);
    }

    /**
     * Allocates a counter with a key (up to {@link CountersManager#MAX_KEY_LENGTH} bytes) and a label taken from
     * buffers, Aeron's {@code addCounter} with key and label buffers.
     *
     * @return the counter, registered under a new registration id.
     */
    public AtomicCounter addCounter(
        final int typeId,
        final DirectBuffer keyBuffer,
        final int keyOffset,
        final int keyLength,
        final DirectBuffer labelBuffer,
        final int labelOffset,
        final int labelLength)
    {
        return driver.addCounter(typeId, keyBuffer, keyOffset, keyLength,
            labelBuffer.getStringWithoutLengthAscii(labelOffset, labelLength));
    }

    private long stashAsync(final Publication publication)
    {
        asyncResults.put(publication.registrationId(), publication);
        return publication.registrationId();
    }

    private long stashAsync(final Subscription subscription)
    {
        asyncResults.put(subscription.registrationId(), subscription);
        return subscription.registrationId();
    }

    private long stashAsyncFailure(final RuntimeException ex)
    {
        final long registrationId = driver.nextRegistrationId();
        asyncResults.put(registrationId, ex);
        return registrationId;
    }

    private <T> T asyncResult(final long registrationId, final Class<T> type, final boolean exclusive)
    {
        final Object result = asyncResults.get(registrationId);
        if (result instanceof RuntimeException ex)
        {
            asyncResults.remove(registrationId, result);
            throw ex;
        }
        if (null == result)
        {
            return null;
        }
        final boolean isExclusive = result instanceof ExclusivePublication &&
            (!(result instanceof io.verbus.aeron.AeronPublicationAdapter adapter) ||
            adapter.aeronPublication() instanceof io.aeron.ExclusivePublication);
        if (!type.isInstance(result) || (result instanceof Publication && exclusive != isExclusive))
        {
            throw new IllegalStateException("registrationId=" + registrationId + " is a " +
                (result instanceof Subscription ? "subscription" : isExclusive ? "exclusive publication" :
                "publication") + ", not a" + (type == Subscription.class ? " subscription" :
                exclusive ? "n exclusive publication" : " publication"));
        }
        if ((result instanceof Publication publication && publication.isClosed()) ||
            (result instanceof Subscription subscription && subscription.isClosed()))
        {
            asyncResults.remove(registrationId, result);
            return null;
        }
        return type.cast(result);
    }

    /**
     * Runs one duty cycle of every driver agent in {@link ThreadingMode#INVOKER} mode (the application's thread
     * is the driver's thread then); does nothing in the other modes.
     *
     * @return work done.
     */
    public int invoke()
    {
        return driver.invoke();
    }

    /** @return the counters of this Verbus (the same ones {@code ./verbus stat} shows). */
    public CountersReader countersReader()
    {
        return driver.countersReader();
    }

    /** @return the concluded context. */
    public Context context()
    {
        return driver.context();
    }

    /** @return true once closed. */
    public boolean isClosed()
    {
        return driver.isClosed();
    }

    /** Closes every publication and subscription, stops the agents and unmaps the memory. Idempotent. */
    public void close()
    {
        // It waits for the agent and control threads to finish with what it frees: not to be cut short by the
        // closing thread's interrupt.
        InterruptImmuneIo.runWithInterruptCleared(driver::close);
    }

    /**
     * Configuration for a {@link Verbus}, Aeron-style: system property defaults, fluent setters, validation in
     * {@link #conclude()}.
     */
    public static final class Context
    {
        /** Property for {@link #dir(String)}. */
        public static final String DIR_PROP_NAME = "verbus.dir";

        /** Property for {@link #threadingMode(ThreadingMode)}. */
        public static final String THREADING_MODE_PROP_NAME = "verbus.threading.mode";

        /** Property for {@link #idleStrategy(String)}. */
        public static final String IDLE_STRATEGY_PROP_NAME = "verbus.idle.strategy";

        /** Property for {@link #termLength(int)}. */
        public static final String TERM_LENGTH_PROP_NAME = "verbus.term.length";

        /** Property for {@link #mtuLength(int)}. */
        public static final String MTU_LENGTH_PROP_NAME = "verbus.mtu.length";

        /** Property for {@link #useHugePages(boolean)}. */
        public static final String USE_HUGE_PAGES_PROP_NAME = "verbus.use.huge.pages";

        /** Property for {@link #publicationUnblockTimeoutNs(long)}. */
        public static final String PUBLICATION_UNBLOCK_TIMEOUT_PROP_NAME = "verbus.publication.unblock.timeout.ns";

        /** Property for {@link #driverTimeoutMs(long)}. */
        public static final String DRIVER_TIMEOUT_PROP_NAME = "verbus.driver.timeout.ms";

        /** Property for {@link #aeronDirectoryName(String)}. */
        public static final String AERON_DIR_PROP_NAME = "verbus.aeron.dir";

        /** Property for {@link #clientLivenessTimeoutNs(long)}. */
        public static final String CLIENT_LIVENESS_TIMEOUT_PROP_NAME = "verbus.client.liveness.timeout.ns";

        /** Default driver timeout, Aeron's: a client gives up on a driver whose heartbeat is this old. */
        public static final long DRIVER_TIMEOUT_MS_DEFAULT = 10_000;

        /** Default client liveness timeout, Aeron's: a standalone driver frees a client silent this long. */
        public static final long CLIENT_LIVENESS_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(10);

        /** Default idle strategy name. */
        public static final String IDLE_STRATEGY_DEFAULT = "backoff";

        /** Default term length of native logs: 1 MiB. */
        public static final int TERM_LENGTH_DEFAULT = 1024 * 1024;

        /** Default MTU: Aeron's, a header plus 1376 bytes of payload. */
        public static final int MTU_LENGTH_DEFAULT = 1408;

        /** Default number of counters the counters file holds. */
        public static final int MAX_COUNTERS_DEFAULT = 1024;

        /**
         * Default linger: how long an image of a closed {@code ipc:} publication waits for its subscribers to drain
         * before it is made unavailable anyway, and then how long retired memory stays mapped so that a reader
         * mid-poll never touches unmapped memory.
         */
        public static final long LINGER_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);

        /**
         * Default publication unblock timeout, Aeron's: how long space claimed in a publication's log may stay
         * uncommitted before the conductor pads over it so that the frames after it are delivered again.
         */
        public static final long PUBLICATION_UNBLOCK_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(15);

        /** Shortest unblock timeout accepted: below it a writer merely descheduled would lose its message. */
        public static final long PUBLICATION_UNBLOCK_TIMEOUT_NS_MIN = TimeUnit.MILLISECONDS.toNanos(10);

        private boolean concluded;
        private String dir = System.getProperty(DIR_PROP_NAME, defaultDir());
        private ThreadingMode threadingMode = threadingModeProperty();
        private String idleStrategy = System.getProperty(IDLE_STRATEGY_PROP_NAME, IDLE_STRATEGY_DEFAULT);
        private int conductorCpu = -1;
        private int senderCpu = -1;
        private int receiverCpu = -1;
        private int termLength = SystemProperties.sizeAsInt(TERM_LENGTH_PROP_NAME, TERM_LENGTH_DEFAULT);
        private int mtuLength = SystemProperties.sizeAsInt(MTU_LENGTH_PROP_NAME, MTU_LENGTH_DEFAULT);
        private boolean useHugePages =
            SystemProperties.booleanValue(USE_HUGE_PAGES_PROP_NAME, true);
        private String hugetlbfsDir;
        private int maxCounters = MAX_COUNTERS_DEFAULT;
        private long lingerTimeoutNs = LINGER_TIMEOUT_NS_DEFAULT;
        private long publicationUnblockTimeoutNs =
            SystemProperties.durationNs(PUBLICATION_UNBLOCK_TIMEOUT_PROP_NAME, PUBLICATION_UNBLOCK_TIMEOUT_NS_DEFAULT);
        private long driverTimeoutMs = SystemProperties.durationMs(DRIVER_TIMEOUT_PROP_NAME, DRIVER_TIMEOUT_MS_DEFAULT);
        private long clientLivenessTimeoutNs =
            SystemProperties.durationNs(CLIENT_LIVENESS_TIMEOUT_PROP_NAME, CLIENT_LIVENESS_TIMEOUT_NS_DEFAULT);
        private String aeronDirectoryName = System.getProperty(AERON_DIR_PROP_NAME);
        private ErrorHandler errorHandler;
        private AvailableImageHandler availableImageHandler = (image) -> {};
        private UnavailableImageHandler unavailableImageHandler = (image) -> {};
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;
        private EpochNanoClock epochNanoClock = new SystemEpochNanoClock();

        private static ThreadingMode threadingModeProperty()
        {
            final String value = System.getProperty(THREADING_MODE_PROP_NAME, ThreadingMode.SHARED.name());
            try
            {
                return ThreadingMode.valueOf(value.trim().toUpperCase(java.util.Locale.ROOT));
            }
            catch (final IllegalArgumentException ex)
            {
                throw new IllegalArgumentException(THREADING_MODE_PROP_NAME + "=" + value +
                    ": expected one of " + java.util.Arrays.toString(ThreadingMode.values()), ex);
            }
        }

        /** @return {@code /dev/shm/verbus-<user>} where /dev/shm exists, else the same under java.io.tmpdir. */
        public static String defaultDir()
        {
            final String user = System.getProperty("user.name", "default");
            final Path shm = Path.of("/dev/shm");
            final Path base = shm.toFile().isDirectory() ? shm : Path.of(System.getProperty("java.io.tmpdir"));
            return base.resolve("verbus-" + user).toString();
        }

        /**
         * Validates every setting. Called by {@link Verbus#launch(Context)}.
         *
         * @return this.
         * @throws IllegalArgumentException naming the setting that is invalid.
         */
        public Context conclude()
        {
            if (concluded)
            {
                throw new IllegalStateException("context already concluded: use a new Context per Verbus");
            }
            if (null == dir || dir.isBlank())
            {
                throw new IllegalArgumentException("dir must be set");
            }
            if (null == threadingMode)
            {
                throw new IllegalArgumentException("threadingMode must be set (DEDICATED, SHARED or INVOKER)");
            }
            IdleStrategies.checkName(idleStrategy);
            Affinity.checkCpu(conductorCpu, "conductorCpu");
            Affinity.checkCpu(senderCpu, "senderCpu");
            Affinity.checkCpu(receiverCpu, "receiverCpu");
            ChannelUri.checkTermLength(termLength, "termLength");
            if (mtuLength < ChannelUri.MTU_MIN_LENGTH || mtuLength > ChannelUri.MTU_MAX_LENGTH ||
                0 != (mtuLength & 31))
            {
                throw new IllegalArgumentException("mtuLength " + mtuLength + " must be a multiple of 32 from " +
                    ChannelUri.MTU_MIN_LENGTH + " to " + ChannelUri.MTU_MAX_LENGTH);
            }
            if (maxCounters < 16)
            {
                throw new IllegalArgumentException("maxCounters " + maxCounters + " must be at least 16");
            }
            if (lingerTimeoutNs < 0)
            {
                throw new IllegalArgumentException("lingerTimeoutNs must not be negative: " + lingerTimeoutNs);
            }
            if (publicationUnblockTimeoutNs < PUBLICATION_UNBLOCK_TIMEOUT_NS_MIN)
            {
                throw new IllegalArgumentException("publicationUnblockTimeoutNs " + publicationUnblockTimeoutNs +
                    " must be at least " + PUBLICATION_UNBLOCK_TIMEOUT_NS_MIN + " (10 ms)");
            }
            if (driverTimeoutMs < 100)
            {
                throw new IllegalArgumentException("driverTimeoutMs " + driverTimeoutMs + " must be at least 100");
            }
            if (null != aeronDirectoryName && aeronDirectoryName.isBlank())
            {
                throw new IllegalArgumentException(
                    "aeronDirectoryName must be null (Verbus's own Aeron driver) or a dir");
            }
            if (clientLivenessTimeoutNs < TimeUnit.MILLISECONDS.toNanos(100))
            {
                throw new IllegalArgumentException(
                    "clientLivenessTimeoutNs " + clientLivenessTimeoutNs + " must be at least 100 ms");
            }
            concluded = true;
            return this;
        }

        /**
         * @return for a client of a standalone driver ({@link Verbus#connect}): how old the driver's heartbeat may be
         * before the client takes the driver for dead; default 10 s.
         */
        public long driverTimeoutMs()
        {
            return driverTimeoutMs;
        }

        /** @return this. */
        public Context driverTimeoutMs(final long driverTimeoutMs)
        {
            this.driverTimeoutMs = driverTimeoutMs;
            return this;
        }

        /**
         * @return for a standalone driver ({@link MediaDriver}): how long a client may stay silent (no keepalive)
         * before the driver takes it for dead and frees its publications and subscriptions; default 10 s.
         */
        public long clientLivenessTimeoutNs()
        {
            return clientLivenessTimeoutNs;
        }

        /** @return this. */
        public Context clientLivenessTimeoutNs(final long clientLivenessTimeoutNs)
        {
            this.clientLivenessTimeoutNs = clientLivenessTimeoutNs;
            return this;
        }

        /**
         * @return the dir of an Aeron media driver already running on this host that {@code aeron:} channels attach
         * to, or null (the default) for the Aeron driver Verbus runs: embedded in {@code <dir>/aeron} for
         * {@link Verbus#launch}, the standalone driver's for {@link Verbus#connect}.
         */
        public String aeronDirectoryName()
        {
            return aeronDirectoryName;
        }

        /**
         * Attaches {@code aeron:ipc} and {@code aeron:udp} channels to an Aeron media driver that already runs on this
         * host (Aeron's {@code aeron.dir}), as any other Aeron client of it: no embedded Aeron driver is launched, and
         * that driver's settings (term length, MTU, threading) apply unless a channel sets them. The client connects
         * on the first {@code aeron:} channel (for a standalone {@link MediaDriver}: at launch, and its clients follow
         * it); with no live driver there, that call throws {@link IllegalStateException} naming the dir, with Aeron's
         * {@code DriverTimeoutException} as the cause, after {@link #driverTimeoutMs()}. A driver that dies later is
         * reported to the error handler as a {@code DriverTimeoutException} after the same timeout. Also set by the
         * {@value #AERON_DIR_PROP_NAME} system property.
         *
         * @param aeronDirectoryName the Aeron dir, or null for Verbus's own Aeron driver.
         * @return this.
         */
        public Context aeronDirectoryName(final String aeronDirectoryName)
        {
            this.aeronDirectoryName = aeronDirectoryName;
            return this;
        }

        /** @return the Verbus dir: counters.dat, mapped logs and the embedded Aeron driver's dir live here. */
        public String dir()
        {
            return dir;
        }

        /** @return this. */
        public Context dir(final String dir)
        {
            this.dir = dir;
            return this;
        }

        /** @return how the driver agents are threaded. */
        public ThreadingMode threadingMode()
        {
            return threadingMode;
        }

        /** @return this. */
        public Context threadingMode(final ThreadingMode threadingMode)
        {
            this.threadingMode = threadingMode;
            return this;
        }

        /** @return the idle strategy name of the driver agents (and of the embedded Aeron driver). */
        public String idleStrategy()
        {
            return idleStrategy;
        }

        /**
         * @param idleStrategy one of {@link IdleStrategies#NAMES}: busy-spin, noop, yielding, backoff, sleeping.
         * @return this.
         */
        public Context idleStrategy(final String idleStrategy)
        {
            this.idleStrategy = idleStrategy;
            return this;
        }

        /** @return the CPU the conductor thread (or the shared thread) is pinned to, -1 for none. */
        public int conductorCpu()
        {
            return conductorCpu;
        }

        /** @return this. */
        public Context conductorCpu(final int conductorCpu)
        {
            this.conductorCpu = conductorCpu;
            return this;
        }

        /** @return the CPU the sender thread is pinned to in DEDICATED mode, -1 for none. */
        public int senderCpu()
        {
            return senderCpu;
        }

        /** @return this. */
        public Context senderCpu(final int senderCpu)
        {
            this.senderCpu = senderCpu;
            return this;
        }

        /** @return the CPU the receiver thread is pinned to in DEDICATED mode, -1 for none. */
        public int receiverCpu()
        {
            return receiverCpu;
        }

        /** @return this. */
        public Context receiverCpu(final int receiverCpu)
        {
            this.receiverCpu = receiverCpu;
            return this;
        }

        /** @return the term length of native logs unless a channel sets {@code term-length}. */
        public int termLength()
        {
            return termLength;
        }

        /** @return this. */
        public Context termLength(final int termLength)
        {
            this.termLength = termLength;
            return this;
        }

        /** @return the MTU of native logs unless a channel sets {@code mtu}. */
        public int mtuLength()
        {
            return mtuLength;
        }

        /** @return this. */
        public Context mtuLength(final int mtuLength)
        {
            this.mtuLength = mtuLength;
            return this;
        }

        /** @return true to map logs from hugetlbfs when it is mounted with enough free 2 MiB pages. */
        public boolean useHugePages()
        {
            return useHugePages;
        }

        /** @return this. */
        public Context useHugePages(final boolean useHugePages)
        {
            this.useHugePages = useHugePages;
            return this;
        }

        /** @return the hugetlbfs mount to use, or null to find one in /proc/mounts. */
        public String hugetlbfsDir()
        {
            return hugetlbfsDir;
        }

        /** @return this. */
        public Context hugetlbfsDir(final String hugetlbfsDir)
        {
            this.hugetlbfsDir = hugetlbfsDir;
            return this;
        }

        /** @return how many counters the counters file holds. */
        public int maxCounters()
        {
            return maxCounters;
        }

        /** @return this. */
        public Context maxCounters(final int maxCounters)
        {
            this.maxCounters = maxCounters;
            return this;
        }

        /** @return how long a closed log stays mapped before it is unmapped. */
        public long lingerTimeoutNs()
        {
            return lingerTimeoutNs;
        }

        /** @return this. */
        public Context lingerTimeoutNs(final long lingerTimeoutNs)
        {
            this.lingerTimeoutNs = lingerTimeoutNs;
            return this;
        }

        /**
         * @return how long space claimed in a publication's log may stay uncommitted (a {@code BufferClaim} neither
         * committed nor aborted, a writer that died mid-offer) before the conductor pads over it, counts it in
         * {@code unblocked publications} and logs one WARNING line. The message in that space is lost; a writer
         * still writing it after the timeout loses it too (see {@code io.verbus.log.LogUnblocker}).
         */
        public long publicationUnblockTimeoutNs()
        {
            return publicationUnblockTimeoutNs;
        }

        /**
         * @param publicationUnblockTimeoutNs at least {@link #PUBLICATION_UNBLOCK_TIMEOUT_NS_MIN}; default 15 s.
         * @return this.
         */
        public Context publicationUnblockTimeoutNs(final long publicationUnblockTimeoutNs)
        {
            this.publicationUnblockTimeoutNs = publicationUnblockTimeoutNs;
            return this;
        }

        /** @return the handler for errors in agents, or null for the default (log to stderr and count). */
        public ErrorHandler errorHandler()
        {
            return errorHandler;
        }

        /** @return this. */
        public Context errorHandler(final ErrorHandler errorHandler)
        {
            this.errorHandler = errorHandler;
            return this;
        }

        /**
         * @return the handler {@link Verbus#addSubscription(String, int)} gives each subscription for images that
         * join (Aeron's context-level default); does nothing unless set.
         */
        public AvailableImageHandler availableImageHandler()
        {
            return availableImageHandler;
        }

        /**
         * @param handler told of each image that joins a subscription added without handlers.
         * @return this.
         */
        public Context availableImageHandler(final AvailableImageHandler handler)
        {
            this.availableImageHandler = java.util.Objects.requireNonNull(handler, "availableImageHandler");
            return this;
        }

        /**
         * @return the handler {@link Verbus#addSubscription(String, int)} gives each subscription for images that
         * leave; does nothing unless set.
         */
        public UnavailableImageHandler unavailableImageHandler()
        {
            return unavailableImageHandler;
        }

        /**
         * @param handler told of each image that leaves a subscription added without handlers.
         * @return this.
         */
        public Context unavailableImageHandler(final UnavailableImageHandler handler)
        {
            this.unavailableImageHandler = java.util.Objects.requireNonNull(handler, "unavailableImageHandler");
            return this;
        }

        /** @return the monotonic clock. */
        public NanoClock nanoClock()
        {
            return nanoClock;
        }

        /** @return this. */
        public Context nanoClock(final NanoClock nanoClock)
        {
            this.nanoClock = nanoClock;
            return this;
        }

        /** @return the wall clock. */
        public EpochNanoClock epochNanoClock()
        {
            return epochNanoClock;
        }

        /** @return this. */
        public Context epochNanoClock(final EpochNanoClock epochNanoClock)
        {
            this.epochNanoClock = epochNanoClock;
            return this;
        }
    }
}
