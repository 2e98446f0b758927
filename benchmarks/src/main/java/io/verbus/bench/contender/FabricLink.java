package io.verbus.bench.contender;

import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import org.agrona.CloseHelper;

import java.io.File;
import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Two connected {@link FabricPeer}s of one provider in this process, each on its own device as two hosts would be,
 * and the shm directory they share.
 */
final class FabricLink implements AutoCloseable
{
    /** Generous: on a loaded two-core machine a heartbeat thread can be kept off the CPU for a while. */
    private static final long SHM_LIVENESS_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final File INFINIBAND_DEVICES = new File("/sys/class/infiniband");

    final FabricPeer a;
    final FabricPeer b;
    private final TempDirectory directory;

    private FabricLink(final FabricPeer a, final FabricPeer b, final TempDirectory directory)
    {
        this.a = a;
        this.b = b;
        this.directory = directory;
    }

    static FabricLink open(final String provider, final int maxMessageLength) throws IOException
    {
        final TempDirectory directory = TempDirectory.create("verbus-bench-fabric-");
        FabricPeer a = null;
        FabricPeer b = null;
        try
        {
            a = new FabricPeer(provider, context(directory), maxMessageLength);
            b = new FabricPeer(provider, context(directory), maxMessageLength);
            FabricPeer.connect(a, b);
            return new FabricLink(a, b, directory);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(a, b, directory);
            throw ex;
        }
    }

    private static FabricContext context(final TempDirectory directory)
    {
        return new FabricContext()
            .shmDirectory(directory.path())
            .shmLivenessTimeoutNs(SHM_LIVENESS_TIMEOUT_NS)
            .tcpAddress("127.0.0.1");
    }

    /**
     * @param provider fabric provider name.
     * @return null when the provider can run here, else why not.
     */
    static String unavailableReason(final String provider)
    {
        final boolean inBuild = Fabrics.providerNames().contains(provider);
        if ("verbs".equals(provider) && !hasRdmaDevice())
        {
            return "no RDMA device on this host" + (inBuild ? "" : " (and the verbs provider is not in this build)");
        }
        return inBuild ? null : "fabric provider '" + provider + "' is not in this build";
    }

    /**
     * @return true when the kernel lists an RDMA device (a real NIC or Soft-RoCE).
     */
    static boolean hasRdmaDevice()
    {
        final String[] devices = INFINIBAND_DEVICES.list();
        return null != devices && devices.length > 0;
    }

    /**
     * @param provider fabric provider name.
     * @return its label, with Soft-RoCE named as such.
     */
    static String label(final String provider)
    {
        if ("verbs".equals(provider))
        {
            final String[] devices = INFINIBAND_DEVICES.list();
            if (null != devices)
            {
                for (final String device : devices)
                {
                    if (device.startsWith("rxe"))
                    {
                        return "fabric verbs (Soft-RoCE " + device + ")";
                    }
                }
            }
            return "fabric verbs";
        }
        return "tcp".equals(provider) ? "fabric tcp (the polling threads are the NIC)" : "fabric " + provider;
    }

    @Override
    public void close()
    {
        CloseHelper.quietCloseAll(a, b, directory);
    }
}
