package io.verbus.fabric;

import java.util.List;

/**
 * What a device reports (the subset of {@code ibv_device_attr} Verbus uses) plus the provider's name.
 *
 * @param name                    device name, e.g. {@code mlx5_0}, {@code rxe0}, {@code shm0}, {@code tcp0}.
 * @param provider                provider name: {@code verbs}, {@code shm} or {@code tcp}.
 * @param maxQueuePairs           most QPs the device can hold.
 * @param maxQueuePairWorkRequests deepest send or receive queue a QP may ask for.
 * @param maxCompletionQueueEntries deepest CQ.
 * @param maxInlineData           largest payload a WR may carry with {@link SendFlags#INLINE}.
 * @param maxMessageLength        largest SEND / WRITE / READ payload of one WR.
 * @param maxMemoryRegionLength   largest region that can be registered.
 * @param atomicsSupported        whether 8-byte fetch-add and compare-swap are executed.
 * @param ports                   the ports, in port-number order.
 */
public record DeviceAttributes(
    String name,
    String provider,
    int maxQueuePairs,
    int maxQueuePairWorkRequests,
    int maxCompletionQueueEntries,
    int maxInlineData,
    long maxMessageLength,
    long maxMemoryRegionLength,
    boolean atomicsSupported,
    List<PortAttributes> ports)
{
    public DeviceAttributes
    {
        ports = List.copyOf(ports);
    }

    /**
     * @param portNumber 1-based port number.
     * @return that port's attributes.
     * @throws IllegalArgumentException if the device has no such port.
     */
    public PortAttributes port(final int portNumber)
    {
        for (final PortAttributes port : ports)
        {
            if (port.portNumber() == portNumber)
            {
                return port;
            }
        }
        throw new IllegalArgumentException("device " + name + " has no port " + portNumber + ", ports: " + ports);
    }
}
