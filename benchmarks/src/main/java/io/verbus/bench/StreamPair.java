package io.verbus.bench;

/**
 * Both ends of one contender's one-way stream, connected and ready. {@link #close()} may be called from another
 * thread to unblock an end that is stuck.
 */
public interface StreamPair extends AutoCloseable
{
    StreamPublisher publisher();

    StreamSubscriber subscriber();

    @Override
    void close();
}
