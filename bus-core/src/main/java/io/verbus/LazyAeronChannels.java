package io.verbus;

import io.verbus.aeron.AeronChannels;
import io.verbus.common.InterruptImmuneIo;

import java.util.function.Supplier;

/**
 * The Aeron client of {@code aeron:} channels, made on first use: the client conductor and the standalone driver
 * each hold one and say only how to make it. It is made under the owner's lock, where control operations already
 * run (checked again there, so made once); duty cycles and close read it without the lock and see either none or the
 * whole client.
 */
final class LazyAeronChannels
{
    private final Object lock;
    private final Supplier<AeronChannels> factory;
    private volatile AeronChannels channels;

    /**
     * @param lock    the owner's lock.
     * @param factory called under {@code lock} on first use: checks the owner is open, then connects or launches.
     */
    LazyAeronChannels(final Object lock, final Supplier<AeronChannels> factory)
    {
        this.lock = lock;
        this.factory = factory;
    }

    /** @return the client, made now if this is the first use. */
    AeronChannels get()
    {
        AeronChannels aeron = channels;
        if (null == aeron)
        {
            synchronized (lock)
            {
                aeron = channels;
                if (null == aeron)
                {
                    // Launches Aeron's driver and client on the caller's thread: not to be failed by its interrupt.
                    aeron = InterruptImmuneIo.withInterruptCleared(factory);
                    channels = aeron;
                }
            }
        }
        return aeron;
    }

    /** @return the client if one was made, else null; never makes one. */
    AeronChannels ifMade()
    {
        return channels;
    }
}
