package io.verbus.fabric.soft;

import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiFunction;

/**
 * A soft provider's fabric: one device name; each open gives a new device (its own identity and, for tcp, its own
 * listener and NIC thread), so two QPs of one process may sit on two devices or on one. The shm and tcp providers
 * differ only in the device they open, so they share this class.
 */
public final class SoftFabric implements Fabric
{
    private final String providerName;
    private final String deviceName;
    private final FabricContext context;
    private final BiFunction<String, FabricContext, ? extends SoftDevice> deviceOpener;
    private final List<SoftDevice> devices = new CopyOnWriteArrayList<>();
    private volatile boolean closed;

    /**
     * @param providerName the provider's name, e.g. {@code shm}.
     * @param deviceName   the one device name the provider offers, e.g. {@code shm0}.
     * @param context      the fabric's settings, passed to every device.
     * @param deviceOpener opens a device of that name with that context.
     */
    public SoftFabric(
        final String providerName,
        final String deviceName,
        final FabricContext context,
        final BiFunction<String, FabricContext, ? extends SoftDevice> deviceOpener)
    {
        this.providerName = providerName;
        this.deviceName = deviceName;
        this.context = context;
        this.deviceOpener = deviceOpener;
    }

    @Override
    public String providerName()
    {
        return providerName;
    }

    @Override
    public List<String> deviceNames()
    {
        return List.of(deviceName);
    }

    @Override
    public Device openDevice(final String name)
    {
        if (closed)
        {
            throw new IllegalStateException(providerName + " fabric is closed");
        }
        if (!deviceName.equals(name))
        {
            throw new IllegalArgumentException(
                "no " + providerName + " device '" + name + "', devices: " + deviceNames());
        }
        final SoftDevice device = deviceOpener.apply(name, context);
        devices.add(device);
        return device;
    }

    @Override
    public void close()
    {
        closed = true;
        for (final SoftDevice device : new ArrayList<>(devices))
        {
            device.close();
        }
        devices.clear();
    }
}
