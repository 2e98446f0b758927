package io.verbus.fabric.verbs;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricProvider;

/**
 * The {@code verbs} fabric provider: real RDMA hardware (InfiniBand, RoCE) or Soft-RoCE through libibverbs.
 * Ranked first by {@code provider=auto}; when it is unavailable (no library, no device, no ACTIVE port)
 * the reason is logged once as a warning and auto falls back to the soft providers.
 */
public final class VerbsFabricProvider implements FabricProvider
{
    /** Provider name in channels and {@code Fabrics.open}. */
    public static final String NAME = "verbs";
    /** Above tcp and shm: real RDMA wins whenever it is present. */
    public static final int AUTO_PREFERENCE = 100;

    private static final System.Logger LOGGER = System.getLogger(VerbsFabricProvider.class.getName());
    private static final Object LOCK = new Object();
    private static String lastWarnedReason;

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public int autoPreference()
    {
        return AUTO_PREFERENCE;
    }

    @Override
    public String unavailableReason(final FabricContext context)
    {
        final String reason = probe();
        if (null != reason)
        {
            synchronized (LOCK)
            {
                if (!reason.equals(lastWarnedReason))
                {
                    lastWarnedReason = reason;
                    LOGGER.log(System.Logger.Level.WARNING, "verbs provider unavailable, provider=auto falls back " +
                        "to the soft providers (tcp, shm): " + reason);
                }
            }
        }
        return reason;
    }

    /**
     * @return null if a verbs fabric can be opened here, else why not (library, device or port).
     */
    static String probe()
    {
        try
        {
            final LibIbverbs lib = LibIbverbs.load(VerbsConfiguration.library());
            VerbsFabric.survey(lib, VerbsConfiguration.device(), VerbsConfiguration.address());
            return null;
        }
        catch (final VerbsUnavailableException | IllegalArgumentException ex)
        {
            return ex.getMessage();
        }
    }

    @Override
    public Fabric open(final FabricContext context)
    {
        return VerbsFabric.open();
    }
}
