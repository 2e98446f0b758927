package io.verbus.fabric.shm;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricProvider;
import io.verbus.fabric.soft.SoftFabric;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The {@code shm} provider: peers in different processes of one host, through shared files.
 */
public final class ShmFabricProvider implements FabricProvider
{
    /** Provider name. */
    public static final String NAME = "shm";

    /** The one device name this provider offers. */
    public static final String DEVICE_NAME = "shm0";

    @Override
    public String name()
    {
        return NAME;
    }

    @Override
    public int autoPreference()
    {
        // Same host only: never chosen by auto, always by name.
        return -1;
    }

    @Override
    public String unavailableReason(final FabricContext context)
    {
        final Path directory = context.shmDirectory();
        Path existing = directory;
        while (null != existing && !Files.exists(existing))
        {
            existing = existing.getParent();
        }
        if (null == existing || !Files.isWritable(existing))
        {
            return "shm directory " + directory + " cannot be created (no writable parent)";
        }
        return null;
    }

    @Override
    public Fabric open(final FabricContext context)
    {
        return new SoftFabric(NAME, DEVICE_NAME, context, ShmDevice::open);
    }
}
