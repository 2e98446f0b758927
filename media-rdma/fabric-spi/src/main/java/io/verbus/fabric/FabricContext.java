package io.verbus.fabric;

import org.agrona.ErrorHandler;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.concurrent.TimeUnit;

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
    /** Default tcp address. */
    public static final String TCP_ADDRESS_DEFAULT = "127.0.0.1";
    /** How long a tcp device tries to reach a peer NIC before the QP errors. */
    public static final String TCP_CONNECT_TIMEOUT_PROP_NAME = "verbus.fabric.tcp.connect.timeout.ns";
    /** Default tcp connect timeout. */
    public static final long TCP_CONNECT_TIMEOUT_DEFAULT_NS = TimeUnit.SECONDS.toNanos(2);

    private Path shmDirectory = Path.of(System.getProperty(SHM_DIR_PROP_NAME, SHM_DIR_DEFAULT));
    private String hugetlbfsDirectory = System.getProperty(HUGETLBFS_DIR_PROP_NAME, "");
    private long shmLivenessTimeoutNs =
        Long.getLong(SHM_LIVENESS_TIMEOUT_PROP_NAME, SHM_LIVENESS_TIMEOUT_DEFAULT_NS);
    private String tcpAddress = System.getProperty(TCP_ADDRESS_PROP_NAME, TCP_ADDRESS_DEFAULT);
    private long tcpConnectTimeoutNs = Long.getLong(TCP_CONNECT_TIMEOUT_PROP_NAME, TCP_CONNECT_TIMEOUT_DEFAULT_NS);
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
