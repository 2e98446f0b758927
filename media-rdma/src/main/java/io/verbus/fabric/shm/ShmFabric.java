package io.verbus.fabric.shm;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The shm fabric: one device name, {@code shm0}; each open gives a new device with its own identity (GID),
 * so two QPs of one process may sit on two devices or on one.
 */
public final class ShmFabric implements Fabric
{
    /** The device name this fabric offers. */
    public static final String DEVICE_NAME = "shm0";

    private final FabricContext context;
    private final List<ShmDevice> devices = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    ShmFabric(final FabricContext context)
    {
        this.context = context;
    }

    @Override
    public String providerName()
    {
        return ShmFabricProvider.NAME;
    }

    @Override
    public List<String> deviceNames()
    {
        return List.of(DEVICE_NAME);
    }

    @Override
    public Device openDevice(final String name)
    {
        if (closed)
        {
            throw new IllegalStateException("shm fabric is closed");
        }
        if (!DEVICE_NAME.equals(name))
        {
            throw new IllegalArgumentException("no shm device '" + name + "', devices: " + deviceNames());
        }
        final ShmDevice device = ShmDevice.open(name, context);
        devices.add(device);
        return device;
    }

    @Override
    public void close()
    {
        closed = true;
        for (final ShmDevice device : new ArrayList<>(devices))
        {
            device.close();
        }
        devices.clear();
    }
}
