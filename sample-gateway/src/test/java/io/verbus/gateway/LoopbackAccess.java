package io.verbus.gateway;

import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * Gives tests in sub-packages the package-private {@link LoopbackChannel}.
 */
public final class LoopbackAccess
{
    /** A loopback stream seen as its two ends. */
    public static final class Channel
    {
        private final LoopbackChannel channel;

        Channel(final LoopbackChannel channel)
        {
            this.channel = channel;
        }

        /** @return the publishing end. */
        public ExclusivePublication publication()
        {
            return channel;
        }

        /** @return the subscribing end. */
        public Subscription subscription()
        {
            return channel;
        }

        /** @return messages offered and not yet polled. */
        public int pending()
        {
            return channel.pending();
        }

        /** @param i index from the oldest pending. @return a copy of that message. */
        public UnsafeBuffer peek(final int i)
        {
            return channel.peek(i);
        }

        /** @param count offers to refuse with BACK_PRESSURED. */
        public void refuseNextOffers(final int count)
        {
            channel.refuseNextOffers(count);
        }

        /** @param connected whether offers are taken at all. */
        public void connected(final boolean connected)
        {
            channel.connected(connected);
        }
    }

    private LoopbackAccess()
    {
    }

    /**
     * @param capacity messages the stream holds before back pressure.
     * @return a new loopback stream.
     */
    public static Channel channel(final int capacity)
    {
        return new Channel(new LoopbackChannel(capacity));
    }
}
