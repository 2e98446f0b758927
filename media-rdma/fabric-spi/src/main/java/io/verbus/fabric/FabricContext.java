package io.verbus.fabric;

import io.verbus.common.SystemProperties;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Configuration of a fabric, Aeron-style: every setting has a system property, a default and a fluent
 * setter/getter.
 */
public final class FabricContext
{
    /** Directory where shm devices publish their region tables, QP rings and heartbeats. */
    public static final String SHM_DIR_PROP_NAME = "verbus.fabric.shm.dir";
    /** Default shm directory: per user under /dev/shm. */
    public static final String SHM_DIR_DEFAULT = "/dev/shm/verbus-fabric-" + System.getProperty("user.name");
    /** hugetlbfs mount for shm regions; empty = look one up in /proc/mounts, "none" = never use hugepages. */
    public static final String HUGETLBFS_DIR_PROP_NAME = "verbus.fabric.hugetlbfs.dir";
    /** How long an shm peer may miss heartbeats before it is declared dead. */
    public static final String SHM_LIVENESS_TIMEOUT_PROP_NAME = "verbus.fabric.shm.liveness.timeout.ns";
    /** Default shm liveness timeout. */
    public static final long SHM_LIVENESS_TIMEOUT_DEFAULT_NS = TimeUnit.SECONDS.toNanos(1);
    /** IP address the tcp device listens on and advertises in its GID. */
    public static final String TCP_ADDRESS_PROP_NAME = "verbus.fabric.tcp.address";
    /** Default tcp address of a bare context; an {@code rdma:} channel sets its own from its endpoint when unset. */
    public static final String TCP_ADDRESS_DEFAULT = "127.0.0.1";
    /** How long a tcp device tries to reach a peer NIC before the QP errors. */
    public static final String TCP_CONNECT_TIMEOUT_PROP_NAME = "verbus.fabric.tcp.connect.timeout.ns";
    /** Default tcp connect timeout. */
    public static final long TCP_CONNECT_TIMEOUT_DEFAULT_NS = TimeUnit.SECONDS.toNanos(2);
    /**
     * How a tcp NIC thread idles: {@value #TCP_IDLE_AUTO}, {@value #TCP_IDLE_BUSY_SPIN}, {@value #TCP_IDLE_BACKOFF},
     * {@value #TCP_IDLE_YIELDING}.
     */
    public static final String TCP_IDLE_STRATEGY_PROP_NAME = "verbus.fabric.tcp.idle.strategy";
    /**
     * Busy-spin while the host has the CPUs for it: a device's NIC thread spins only if, with it, the process's
     * spinning NIC threads still leave half of the CPUs beyond two to the application
     * ({@code spinning < (cpus - 2) / 2}); otherwise it backs off. On 2 CPUs no NIC thread ever spins.
     */
    public static final String TCP_IDLE_AUTO = "auto";
    /** Always spin: the NIC thread then also makes progress on every QP on every cycle (it has a CPU to itself). */
    public static final String TCP_IDLE_BUSY_SPIN = "busy-spin";
    /** Spin, then yield, then park up to {@link #TCP_IDLE_MAX_PARK_PROP_NAME}. */
    public static final String TCP_IDLE_BACKOFF = "backoff";
    /** Yield when idle. */
    public static final String TCP_IDLE_YIELDING = "yielding";
    /** Default tcp NIC idle strategy. */
    public static final String TCP_IDLE_STRATEGY_DEFAULT = TCP_IDLE_AUTO;
    /** Longest park of a tcp NIC thread that backs off. */
    public static final String TCP_IDLE_MAX_PARK_PROP_NAME = "verbus.fabric.tcp.idle.max.park.ns";
    /**
     * Default longest park: the application threads make the progress (see the README), so the NIC thread is a
     * fallback that wakes a thousand times a second at most.
     */
    public static final long TCP_IDLE_MAX_PARK_DEFAULT_NS = TimeUnit.MILLISECONDS.toNanos(1);
    /**
     * The longest the tcp provider holds back the frames of a poster that streams (posts again sooner after a write
     * than a write costs) to write them together; within it, about eight writes' cost (at least 20 us). 0 writes
     * every post at once.
     */
    public static final String TCP_COALESCE_PROP_NAME = "verbus.fabric.tcp.coalesce.ns";
    /** Default longest coalescing time. */
    public static final long TCP_COALESCE_DEFAULT_NS = TimeUnit.MICROSECONDS.toNanos(200);
    /**
     * How long an application thread may leave a tcp QP it has polled (or progressed) before the NIC thread steps in
     * for it. A thread the scheduler preempts is not a thread that stopped polling: a grace shorter than a few
     * scheduler ticks lets the NIC thread take a QP's engine whenever its application thread is descheduled, and if
     * the NIC thread is then preempted itself, the application thread, back on its CPU, finds the engine taken
     * until the NIC thread runs again (one or more ticks).
     */
    public static final String TCP_FALLBACK_GRACE_PROP_NAME = "verbus.fabric.tcp.fallback.grace.ns";
    /** Default fallback grace: several scheduler ticks (4 ms at 250 Hz, 10 ms at 100 Hz). */
    public static final long TCP_FALLBACK_GRACE_DEFAULT_NS = TimeUnit.MILLISECONDS.toNanos(20);
    /** Longest fallback grace accepted. */
    public static final long TCP_FALLBACK_GRACE_MAX_NS = TimeUnit.SECONDS.toNanos(10);

    private Path shmDirectory = Path.of(System.getProperty(SHM_DIR_PROP_NAME, SHM_DIR_DEFAULT));
    private String hugetlbfsDirectory = System.getProperty(HUGETLBFS_DIR_PROP_NAME, "");
    private long shmLivenessTimeoutNs =
        SystemProperties.durationNs(SHM_LIVENESS_TIMEOUT_PROP_NAME, SHM_LIVENESS_TIMEOUT_DEFAULT_NS);
    private String tcpAddress = System.getProperty(TCP_ADDRESS_PROP_NAME, TCP_ADDRESS_DEFAULT);
    private long tcpConnectTimeoutNs =
        SystemProperties.durationNs(TCP_CONNECT_TIMEOUT_PROP_NAME, TCP_CONNECT_TIMEOUT_DEFAULT_NS);
    private String tcpIdleStrategy =
        checkTcpIdleStrategy(System.getProperty(TCP_IDLE_STRATEGY_PROP_NAME, TCP_IDLE_STRATEGY_DEFAULT));
    private Supplier<IdleStrategy> tcpIdleStrategySupplier;
    private long tcpIdleMaxParkNs =
        SystemProperties.durationNs(TCP_IDLE_MAX_PARK_PROP_NAME, TCP_IDLE_MAX_PARK_DEFAULT_NS);
    private long tcpCoalesceNs = SystemProperties.durationNs(TCP_COALESCE_PROP_NAME, TCP_COALESCE_DEFAULT_NS);
    private long tcpFallbackGraceNs =
        checkTcpFallbackGrace(SystemProperties.durationNs(TCP_FALLBACK_GRACE_PROP_NAME, TCP_FALLBACK_GRACE_DEFAULT_NS));
    private FaultInjection faultInjection = new FaultInjection();
    private ErrorHandler errorHandler = error ->
    {
        System.err.println("verbus fabric: unexpected error in a provider thread");
        error.printStackTrace(System.err);
    };

    public FabricContext shmDirectory(final Path directory)
    {
        this.shmDirectory = Objects.requireNonNull(directory, "shmDirectory");
        return this;
    }

    public Path shmDirectory()
    {
        return shmDirectory;
    }

    /**
     * @param directory a hugetlbfs mount point, "" to look one up, "none" to never use hugepages.
     * @return this.
     */
    public FabricContext hugetlbfsDirectory(final String directory)
    {
        this.hugetlbfsDirectory = Objects.requireNonNull(directory, "hugetlbfsDirectory");
        return this;
    }

    public String hugetlbfsDirectory()
    {
        return hugetlbfsDirectory;
    }

    public FabricContext shmLivenessTimeoutNs(final long timeoutNs)
    {
        if (timeoutNs <= 0)
        {
            throw new IllegalArgumentException("shmLivenessTimeoutNs must be > 0: " + timeoutNs);
        }
        this.shmLivenessTimeoutNs = timeoutNs;
        return this;
    }

    public long shmLivenessTimeoutNs()
    {
        return shmLivenessTimeoutNs;
    }

    public FabricContext tcpAddress(final String address)
    {
        this.tcpAddress = Objects.requireNonNull(address, "tcpAddress");
        return this;
    }

    public String tcpAddress()
    {
        return tcpAddress;
    }

    /**
     * @return {@link #tcpAddress()} resolved.
     * @throws IllegalArgumentException if it does not resolve.
     */
    public InetAddress resolveTcpAddress()
    {
        try
        {
            return InetAddress.getByName(tcpAddress);
        }
        catch (final UnknownHostException ex)
        {
            throw new IllegalArgumentException(TCP_ADDRESS_PROP_NAME + " does not resolve: " + tcpAddress, ex);
        }
    }

    public FabricContext tcpConnectTimeoutNs(final long timeoutNs)
    {
        this.tcpConnectTimeoutNs = timeoutNs;
        return this;
    }

    public long tcpConnectTimeoutNs()
    {
        return tcpConnectTimeoutNs;
    }

    /**
     * @param name how each tcp NIC thread idles: {@value #TCP_IDLE_AUTO} (default), {@value #TCP_IDLE_BUSY_SPIN},
     *             {@value #TCP_IDLE_BACKOFF}, {@value #TCP_IDLE_YIELDING}.
     * @return this.
     */
    public FabricContext tcpIdleStrategy(final String name)
    {
        this.tcpIdleStrategy = checkTcpIdleStrategy(name);
        return this;
    }

    public String tcpIdleStrategy()
    {
        return tcpIdleStrategy;
    }

    /**
     * @param supplier a new idle strategy per tcp NIC thread, overriding {@link #tcpIdleStrategy()}; null to use
     *                 the name. A NIC thread with a supplied strategy is a fallback (it leaves QPs that application
     *                 threads progress alone) unless the strategy is a {@link BusySpinIdleStrategy}.
     * @return this.
     */
    public FabricContext tcpIdleStrategySupplier(final Supplier<IdleStrategy> supplier)
    {
        this.tcpIdleStrategySupplier = supplier;
        return this;
    }

    public Supplier<IdleStrategy> tcpIdleStrategySupplier()
    {
        return tcpIdleStrategySupplier;
    }

    /**
     * @param maxParkNs longest park of a tcp NIC thread that backs off (>= 1 us).
     * @return this.
     */
    public FabricContext tcpIdleMaxParkNs(final long maxParkNs)
    {
        if (maxParkNs < 1000)
        {
            throw new IllegalArgumentException("tcpIdleMaxParkNs must be >= 1000: " + maxParkNs);
        }
        this.tcpIdleMaxParkNs = maxParkNs;
        return this;
    }

    public long tcpIdleMaxParkNs()
    {
        return tcpIdleMaxParkNs;
    }

    /**
     * @param coalesceNs how long a streaming poster's frames may wait to be written together; 0 = never.
     * @return this.
     */
    public FabricContext tcpCoalesceNs(final long coalesceNs)
    {
        if (coalesceNs < 0)
        {
            throw new IllegalArgumentException("tcpCoalesceNs must be >= 0: " + coalesceNs);
        }
        this.tcpCoalesceNs = coalesceNs;
        return this;
    }

    public long tcpCoalesceNs()
    {
        return tcpCoalesceNs;
    }

    /**
     * @param graceNs how long a tcp QP an application thread progresses is left to it before the NIC thread steps in
     *                (0 to 10 s; 0: the NIC thread may step in on any of its passes).
     * @return this.
     */
    public FabricContext tcpFallbackGraceNs(final long graceNs)
    {
        this.tcpFallbackGraceNs = checkTcpFallbackGrace(graceNs);
        return this;
    }

    public long tcpFallbackGraceNs()
    {
        return tcpFallbackGraceNs;
    }

    private static long checkTcpFallbackGrace(final long graceNs)
    {
        if (graceNs < 0 || graceNs > TCP_FALLBACK_GRACE_MAX_NS)
        {
            throw new IllegalArgumentException(
                "tcpFallbackGraceNs must be >= 0 and <= " + TCP_FALLBACK_GRACE_MAX_NS + ": " + graceNs);
        }
        return graceNs;
    }

    private static String checkTcpIdleStrategy(final String name)
    {
        if (!TCP_IDLE_AUTO.equals(name) && !TCP_IDLE_BUSY_SPIN.equals(name) && !TCP_IDLE_BACKOFF.equals(name) &&
            !TCP_IDLE_YIELDING.equals(name))
        {
            throw new IllegalArgumentException(TCP_IDLE_STRATEGY_PROP_NAME + " must be one of " + TCP_IDLE_AUTO + "|" +
                TCP_IDLE_BUSY_SPIN + "|" + TCP_IDLE_BACKOFF + "|" + TCP_IDLE_YIELDING + ", got '" + name + "'");
        }
        return name;
    }

    /**
     * @param errorHandler told about unexpected errors in provider threads (the tcp NIC); the rdma media
     *                     passes the driver's error handler so they are logged and counted.
     * @return this.
     */
    public FabricContext errorHandler(final ErrorHandler errorHandler)
    {
        this.errorHandler = Objects.requireNonNull(errorHandler, "errorHandler");
        return this;
    }

    public ErrorHandler errorHandler()
    {
        return errorHandler;
    }

    /**
     * @param faultInjection test-only faults the soft providers apply.
     * @return this.
     */
    public FabricContext faultInjection(final FaultInjection faultInjection)
    {
        this.faultInjection = Objects.requireNonNull(faultInjection, "faultInjection");
        return this;
    }

    public FaultInjection faultInjection()
    {
        return faultInjection;
    }
}
