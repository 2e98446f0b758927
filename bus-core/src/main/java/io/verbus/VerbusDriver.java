package io.verbus;

import org.agrona.concurrent.status.CountersReader;

/**
 * The embedded driver behind {@link Verbus}. (API/SPI surface commit: implementation follows.)
 */
final class VerbusDriver implements AutoCloseable
{
    private final Verbus.Context context;
    private volatile boolean closed;

    VerbusDriver(final Verbus.Context context)
    {
        this.context = context;
    }

    Publication addPublication(final String channel, final int streamId, final boolean exclusive)
    {
        throw new UnsupportedOperationException("not implemented yet");
    }

    Subscription addSubscription(
        final String channel,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        throw new UnsupportedOperationException("not implemented yet");
    }

    int invoke()
    {
        return 0;
    }

    CountersReader countersReader()
    {
        throw new UnsupportedOperationException("not implemented yet");
    }

    Verbus.Context context()
    {
        return context;
    }

    boolean isClosed()
    {
        return closed;
    }

    public void close()
    {
        closed = true;
    }
}
