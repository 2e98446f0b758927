package io.verbus.fabric.tcp;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The tcp fabric: one device name, {@code tcp0}; each open gives a new device with its own listener and NIC.
 */
public final class TcpFabric implements Fabric
{
    /** The device name this fabric offers. */
    public static final String DEVICE_NAME = "tcp0";

    private final FabricContext context;
    private final List<TcpDevice> devices = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    TcpFabric(final FabricContext context)
    {
        this.context = context;
    }

    @Override
    public String providerName()
    {
        return TcpFabricProvider.NAME;
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
            throw new IllegalStateException("tcp fabric is closed");
        }
        if (!DEVICE_NAME.equals(name))
        {
            throw new IllegalArgumentException("no tcp device '" + name + "', devices: " + deviceNames());
        }
        final TcpDevice device = TcpDevice.open(name, context);
        devices.add(device);
        return device;
    }

    @Override
    public void close()
    {
        closed = true;
        for (final TcpDevice device : new ArrayList<>(devices))
        {
            device.close();
        }
        devices.clear();
    }
}
