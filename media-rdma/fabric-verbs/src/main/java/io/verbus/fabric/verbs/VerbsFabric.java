package io.verbus.fabric.verbs;

import io.verbus.fabric.Fabric;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static java.lang.foreign.ValueLayout.ADDRESS;

/**
 * The verbs provider's fabric: the RDMA devices libibverbs lists, ordered by the port each would use
 * ({@link PortSelector}), the best first.
 */
public final class VerbsFabric implements Fabric
{
    private static final System.Logger LOGGER = System.getLogger(VerbsFabric.class.getName());

    private final LibIbverbs lib;
    private final InetAddress configuredAddress;
    private final Survey survey;
    private final List<VerbsDevice> openDevices = new ArrayList<>();
    private boolean closed;

    private VerbsFabric(final LibIbverbs lib, final InetAddress configuredAddress, final Survey survey)
    {
        this.lib = lib;
        this.configuredAddress = configuredAddress;
        this.survey = survey;
    }

    /**
     * Load libibverbs, list the devices and choose the port to use; logs the choice in one line.
     *
     * @return the fabric.
     * @throws VerbsUnavailableException if there is no library, no device or no usable ACTIVE port.
     */
    public static VerbsFabric open()
    {
        final LibIbverbs lib = LibIbverbs.load(VerbsConfiguration.library());
        final InetAddress address = VerbsConfiguration.address();
        final Survey survey = survey(lib, VerbsConfiguration.device(), address);
        LOGGER.log(System.Logger.Level.INFO, survey.choice.explanation());
        return new VerbsFabric(lib, address, survey);
    }

    /**
     * What the devices offer, without keeping anything open.
     *
     * @param lib        the binding.
     * @param onlyDevice a device name to restrict to, or empty.
     * @param address    the configured address, or null.
     * @return the ordered devices and the chosen port.
     * @throws VerbsUnavailableException if nothing is usable, saying why.
     */
    static Survey survey(final LibIbverbs lib, final String onlyDevice, final InetAddress address)
    {
        final Map<String, List<PortSelector.PortInfo>> portsByDevice = new LinkedHashMap<>();
        final List<String> listed = new ArrayList<>();
        try (Arena arena = Arena.ofConfined())
        {
            final MemorySegment list = VerbsDevice.deviceList(lib, arena);
            try
            {
                for (long i = 0; ; i++)
                {
                    final MemorySegment device = list.getAtIndex(ADDRESS, i);
                    if (MemorySegment.NULL.equals(device))
                    {
                        break;
                    }
                    final String name = VerbsDevice.deviceName(lib, device);
                    listed.add(name);
                    if (!onlyDevice.isEmpty() && !onlyDevice.equals(name))
                    {
                        continue;
                    }
                    portsByDevice.put(name, VerbsDevice.surveyPorts(lib, device, name));
                }
            }
            finally
            {
                VerbsDevice.freeDeviceList(lib, list);
            }
        }

        if (portsByDevice.isEmpty())
        {
            throw new VerbsUnavailableException("no RDMA device named '" + onlyDevice + "' (" +
                VerbsConfiguration.DEVICE_PROP_NAME + "); libibverbs lists " + listed + "; " +
                VerbsUnavailableException.SOFT_PROVIDERS_HINT);
        }
        final List<PortSelector.PortInfo> allPorts = new ArrayList<>();
        portsByDevice.values().forEach(allPorts::addAll);
        final PortSelector.PortChoice choice = PortSelector.choose(allPorts, address);
        if (null == choice)
        {
            throw new VerbsUnavailableException(PortSelector.whyNone(allPorts, address) + "; " +
                VerbsUnavailableException.SOFT_PROVIDERS_HINT);
        }

        final List<String> ordered = new ArrayList<>();
        final List<PortSelector.PortChoice> bestPerDevice = new ArrayList<>();
        portsByDevice.forEach((name, ports) ->
        {
            final PortSelector.PortChoice best = PortSelector.choose(ports, address);
            if (null != best)
            {
                bestPerDevice.add(best);
            }
        });
        bestPerDevice.sort(PortSelector.PREFERENCE);
        bestPerDevice.forEach(best -> ordered.add(best.port().deviceName()));
        return new Survey(List.copyOf(ordered), choice);
    }

    /**
     * @param orderedDeviceNames devices with a usable port, the preferred first.
     * @param choice             the port Verbus uses by default.
     */
    record Survey(List<String> orderedDeviceNames, PortSelector.PortChoice choice)
    {
    }

    @Override
    public String providerName()
    {
        return VerbsFabricProvider.NAME;
    }

    @Override
    public List<String> deviceNames()
    {
        return survey.orderedDeviceNames();
    }

    /**
     * @return the port choice made when the fabric opened, with its explanation.
     */
    public PortSelector.PortChoice portChoice()
    {
        return survey.choice();
    }

    @Override
    public synchronized VerbsDevice openDevice(final String name)
    {
        if (closed)
        {
            throw new IllegalStateException("verbs fabric is closed");
        }
        if (!survey.orderedDeviceNames().contains(name))
        {
            throw new IllegalArgumentException("no usable verbs device '" + name + "', devices: " + deviceNames());
        }
        final VerbsDevice device = VerbsDevice.open(lib, name, configuredAddress, this::onDeviceClosed);
        openDevices.add(device);
        return device;
    }

    synchronized void onDeviceClosed(final VerbsDevice device)
    {
        openDevices.remove(device);
    }

    @Override
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        for (final VerbsDevice device : new ArrayList<>(openDevices))
        {
            device.close();
        }
        openDevices.clear();
    }
}
