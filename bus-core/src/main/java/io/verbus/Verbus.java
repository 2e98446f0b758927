package io.verbus;

import io.verbus.driver.Affinity;
import io.verbus.driver.IdleStrategies;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.EpochNanoClock;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersReader;

import java.nio.file.Path;
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
    private final VerbusDriver driver;

    private Verbus(final Context context)
    {
        this.driver = new VerbusDriver(context);
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
        context.conclude();
        return new Verbus(context);
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
     * Adds a subscription without image handlers.
     *
     * @param channel  as for {@link #addPublication(String, int)}.
     * @param streamId of the stream.
     * @return the subscription.
     */
    public Subscription addSubscription(final String channel, final int streamId)
    {
        return addSubscription(channel, streamId, image -> {}, image -> {});
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
        return driver.addSubscription(channel, streamId, availableImageHandler, unavailableImageHandler);
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

    /**
     * Allocates a counter in this Verbus's counters file, so that {@code ./verbus stat} shows it: for components
     * built on Verbus (the archive recorder, late joiners). Thread-safe; closing the counter frees it.
     *
     * @param typeId of the counter, in the caller's range of {@link io.verbus.counters.CounterTypes}.
     * @param label  shown beside its value.
     * @return the counter, set to 0.
     */
    public AtomicCounter addCounter(final int typeId, final String label)
    {
        return driver.addCounter(typeId, label);
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
        driver.close();
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

        private boolean concluded;
        private String dir = System.getProperty(DIR_PROP_NAME, defaultDir());
        private ThreadingMode threadingMode = threadingModeProperty();
        private String idleStrategy = System.getProperty(IDLE_STRATEGY_PROP_NAME, IDLE_STRATEGY_DEFAULT);
        private int conductorCpu = -1;
        private int senderCpu = -1;
        private int receiverCpu = -1;
        private int termLength = Integer.getInteger(TERM_LENGTH_PROP_NAME, TERM_LENGTH_DEFAULT);
        private int mtuLength = Integer.getInteger(MTU_LENGTH_PROP_NAME, MTU_LENGTH_DEFAULT);
        private boolean useHugePages =
            Boolean.parseBoolean(System.getProperty(USE_HUGE_PAGES_PROP_NAME, "true"));
        private String hugetlbfsDir;
        private int maxCounters = MAX_COUNTERS_DEFAULT;
        private long lingerTimeoutNs = LINGER_TIMEOUT_NS_DEFAULT;
        private ErrorHandler errorHandler;
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
            concluded = true;
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
