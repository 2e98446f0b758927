package io.verbus.tuning;

import java.util.List;
import java.util.Optional;

/**
 * An RDMA device under {@code /sys/class/infiniband}.
 *
 * @param name       device name, e.g. {@code mlx5_0}, {@code rxe0}.
 * @param soft       true for software providers (rxe Soft-RoCE, siw Soft-iWARP): functional, never low latency.
 * @param numaNode   the NUMA node the NIC sits on, or -1 when the firmware does not say.
 * @param pciAddress the PCI function of a hardware NIC, e.g. {@code 0000:3b:00.0}.
 * @param driver     the kernel driver bound to the device, e.g. {@code mlx5_core}.
 * @param ports      the device's ports in number order.
 */
public record RdmaDevice(
    String name,
    boolean soft,
    int numaNode,
    Optional<String> pciAddress,
    Optional<String> driver,
    List<RdmaPort> ports)
{
    public RdmaDevice
    {
        ports = List.copyOf(ports);
    }
}
