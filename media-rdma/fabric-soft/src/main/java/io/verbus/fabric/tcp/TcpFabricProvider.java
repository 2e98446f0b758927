package io.verbus.fabric.tcp;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricProvider;
import io.verbus.fabric.soft.SoftFabric;

/**
 * The {@code tcp} provider: a software NIC over TCP for hosts without RDMA.
 */
public final class TcpFabricProvider implements FabricProvider
{
    /** Provider name. */
    public static final String NAME = "tcp";

    /** The one device name this provider offers. */
    public static final String DEVICE_NAME = "tcp0";

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public int autoPreference()
    {
        return 10;
    }

    @Override
    public String unavailableReason(final FabricContext context)
    {
        try
        {
            context.resolveTcpAddress();
            return null;
        }
        catch (final IllegalArgumentException ex)
        {
            return ex.getMessage();
        }
    }

    @Override
    public Fabric open(final FabricContext context)
    {
        return new SoftFabric(NAME, DEVICE_NAME, context, TcpDevice::open);
    }
}
