package io.verbus.bench.contender;

import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;
import org.agrona.CloseHelper;

/**
 * A stream made of two ends and what closes them.
 */
final class SimpleStreamPair implements StreamPair
{
    private final StreamPublisher publisher;
    private final StreamSubscriber subscriber;
    private final AutoCloseable resources;

    SimpleStreamPair(final StreamPublisher publisher, final StreamSubscriber subscriber, final AutoCloseable resources)
    {
        this.publisher = publisher;
        this.subscriber = subscriber;
        this.resources = resources;
    }

    @Override
    public StreamPublisher publisher()
    {
        return publisher;
    }

    @Override
    public StreamSubscriber subscriber()
    {
        return subscriber;
    }

    @Override
    public void close()
    {
        CloseHelper.quietClose(resources);
    }
}
