package io.verbus.fabric;

import java.util.List;

/**
 * Entry point of one provider: lists and opens its devices. Open with {@link Fabrics#open(String)}.
 */
public interface Fabric extends AutoCloseable
{
    /**
     * @return the provider name: {@code verbs}, {@code shm} or {@code tcp}.
     */
    String providerName();

    /**
     * @return names of the devices this provider offers, the preferred first.
     */
    List<String> deviceNames();

    /**
     * @param name one of {@link #deviceNames()}.
     * @return the opened device.
     * @throws IllegalArgumentException if there is no such device.
     */
    Device openDevice(String name);

    /**
     * @return the preferred device, opened.
     */
    default Device openDevice()
    {
        final List<String> names = deviceNames();
        if (names.isEmpty())
        {
            throw new FabricException("provider " + providerName() + " has no device");
        }
        return openDevice(names.getFirst());
    }

    /**
     * Close the fabric and every device still open.
     */
    @Override
    void close();
}
