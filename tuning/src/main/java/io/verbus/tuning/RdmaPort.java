package io.verbus.tuning;

import java.util.List;
import java.util.Optional;

/**
 * One port of an RDMA device as sysfs shows it under {@code /sys/class/infiniband/<dev>/ports/<n>}.
 *
 * @param device          the device name, e.g. {@code mlx5_0}.
 * @param number          the port number (from 1).
 * @param state           logical state word: ACTIVE, INIT, DOWN, ARMED (the number before the colon dropped).
 * @param physicalState   physical state word: LinkUp, Polling, Disabled ...
 * @param linkLayer       {@code InfiniBand} or {@code Ethernet}.
 * @param rate            e.g. {@code 100 Gb/sec (4X EDR)}.
 * @param activeMtu       the active MTU in bytes when sysfs has it (not on every kernel).
 * @param roceV2GidIndexes GID table indexes whose type is RoCE v2 (Ethernet ports only).
 * @param netdev          the Ethernet interface behind a RoCE port, or the IPoIB interface of an IB port.
 */
public record RdmaPort(
    String device,
    int number,
    String state,
    String physicalState,
    String linkLayer,
    String rate,
    Optional<Integer> activeMtu,
    List<Integer> roceV2GidIndexes,
    Optional<String> netdev)
{
    public static final String INFINIBAND = "InfiniBand";
    public static final String ETHERNET = "Ethernet";

    public String name()
    {
        return device + "/" + number;
    }

    public boolean isActive()
    {
        return "ACTIVE".equals(state);
    }

    public boolean isInfiniBand()
    {
        return INFINIBAND.equals(linkLayer);
    }

    public boolean isEthernet()
    {
        return ETHERNET.equals(linkLayer);
    }
}
