package io.verbus.tuning;

import io.verbus.fabric.PortPreference;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * The RDMA devices and ports of a host, read from {@code /sys/class/infiniband} without privileges.
 */
public final class RdmaInventory
{
    static final String CLASS_DIR = "/sys/class/infiniband";

    private final List<RdmaDevice> devices;

    private RdmaInventory(final List<RdmaDevice> devices)
    {
        this.devices = List.copyOf(devices);
    }

    public static RdmaInventory scan(final HostFs fs)
    {
        final List<RdmaDevice> devices = new ArrayList<>();
        for (final String name : fs.list(CLASS_DIR))
        {
            devices.add(readDevice(fs, name));
        }
        return new RdmaInventory(devices);
    }

    public List<RdmaDevice> devices()
    {
        return devices;
    }

    public boolean isEmpty()
    {
        return devices.isEmpty();
    }

    public List<RdmaPort> ports()
    {
        final List<RdmaPort> ports = new ArrayList<>();
        devices.forEach((device) -> ports.addAll(device.ports()));
        return ports;
    }

    /**
     * The port Verbus's verbs provider picks, by the same rule it uses ({@link PortPreference}): hardware before
     * software, InfiniBand before RoCE v2, then the largest MTU.
     *
     * @return the preferred usable port, or empty when none is.
     */
    public Optional<RdmaPort> preferredPort()
    {
        RdmaPort best = null;
        PortPreference.Candidate bestCandidate = null;
        for (final RdmaDevice device : devices)
        {
            for (final RdmaPort port : device.ports())
            {
                final PortPreference.Candidate candidate = new PortPreference.Candidate(device.name(), device.soft(),
                    port.number(), port.isActive(), port.isInfiniBand(),
                    port.isEthernet() && !port.roceV2GidIndexes().isEmpty(), port.activeMtu().orElse(0));
                if (candidate.isUsable() &&
                    (null == bestCandidate || PortPreference.BEST_FIRST.compare(candidate, bestCandidate) < 0))
                {
                    best = port;
                    bestCandidate = candidate;
                }
            }
        }
        return Optional.ofNullable(best);
    }

    public RdmaDevice deviceOf(final RdmaPort port)
    {
        for (final RdmaDevice device : devices)
        {
            if (device.name().equals(port.device()))
            {
                return device;
            }
        }
        throw new IllegalArgumentException("port of an unknown device: " + port.name());
    }

    /**
     * @return the network interfaces behind the RDMA ports, in device order, without repeats.
     */
    public List<String> netdevs()
    {
        final Set<String> netdevs = new LinkedHashSet<>();
        for (final RdmaPort port : ports())
        {
            port.netdev().ifPresent(netdevs::add);
        }
        return List.copyOf(netdevs);
    }

    private static RdmaDevice readDevice(final HostFs fs, final String name)
    {
        final String dir = CLASS_DIR + "/" + name;
        final boolean hasPciDevice = fs.exists(dir + "/device");
        final Optional<String> pciAddress = hasPciDevice ? fs.linkTargetName(dir + "/device") : Optional.empty();
        final Optional<String> driver = hasPciDevice ? fs.linkTargetName(dir + "/device/driver") : Optional.empty();
        // rxe and siw attach to a netdev (sysfs "parent") instead of owning a PCI function.
        final boolean soft = PortPreference.isSoftwareDevice(name) ||
            (!hasPciDevice && fs.exists(dir + "/parent"));
        final int numaNode = fs.read(dir + "/device/numa_node").map(RdmaInventory::parseIntOrMinusOne).orElse(-1);
        final Optional<String> parent = fs.read(dir + "/parent").filter((value) -> !value.isEmpty());
        final List<String> pciNetdevs = fs.list(dir + "/device/net");

        final List<RdmaPort> ports = new ArrayList<>();
        for (final String portName : fs.list(dir + "/ports"))
        {
            final int number = parseIntOrMinusOne(portName);
            if (number > 0)
            {
                ports.add(readPort(fs, name, number, dir + "/ports/" + portName, parent, pciNetdevs));
            }
        }
        return new RdmaDevice(name, soft, numaNode, pciAddress, driver, ports);
    }

    private static RdmaPort readPort(
        final HostFs fs,
        final String device,
        final int number,
        final String dir,
        final Optional<String> parent,
        final List<String> pciNetdevs)
    {
        final String state = stateWord(fs.read(dir + "/state").orElse("unknown"));
        final String physicalState = stateWord(fs.read(dir + "/phys_state").orElse("unknown"));
        final String linkLayer = fs.read(dir + "/link_layer").orElse("unknown");
        final String rate = fs.read(dir + "/rate").orElse("unknown");
        final Optional<Integer> activeMtu = fs.read(dir + "/active_mtu").flatMap(RdmaInventory::parseMtu);

        final List<Integer> roceV2 = new ArrayList<>();
        Optional<String> netdev = Optional.empty();
        for (final String index : fs.list(dir + "/gid_attrs/types"))
        {
            final int gidIndex = parseIntOrMinusOne(index);
            final Optional<String> type = fs.read(dir + "/gid_attrs/types/" + index);
            if (gidIndex >= 0 && type.isPresent() && type.get().toLowerCase().contains("v2"))
            {
                roceV2.add(gidIndex);
            }
            if (netdev.isEmpty())
            {
                netdev = fs.read(dir + "/gid_attrs/ndevs/" + index).filter((value) -> !value.isEmpty());
            }
        }
        if (netdev.isEmpty())
        {
            // ports are numbered from 1; a PCI function usually has one netdev per port
            netdev = parent.or(() -> number <= pciNetdevs.size() ?
                Optional.of(pciNetdevs.get(number - 1)) : Optional.empty());
        }
        return new RdmaPort(device, number, state, physicalState, linkLayer, rate, activeMtu, roceV2, netdev);
    }

    /**
     * sysfs prints states as {@code 4: ACTIVE} or {@code 5: LinkUp}: keep the word.
     */
    static String stateWord(final String raw)
    {
        final int colon = raw.indexOf(':');
        return (colon >= 0 ? raw.substring(colon + 1) : raw).strip();
    }

    /**
     * Accepts {@code 4096}, {@code 4096 (5)} and {@code 5: 4096}.
     */
    static Optional<Integer> parseMtu(final String raw)
    {
        for (final String token : raw.split("[^0-9]+"))
        {
            final int value = parseIntOrMinusOne(token);
            if (value >= 256)
            {
                return Optional.of(value);
            }
        }
        return Optional.empty();
    }

    static int parseIntOrMinusOne(final String text)
    {
        try
        {
            return Integer.parseInt(text.strip());
        }
        catch (final NumberFormatException ex)
        {
            return -1;
        }
    }
}
