package io.verbus;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;

import java.util.List;

/**
 * Receives a stream from every publisher on a channel and stream id: one {@link Image} per publisher.
 * Polled by one thread; images are added and removed by the driver and announced to the handlers.
 */
public interface Subscription extends AutoCloseable
{
    /**
     * Polls the images round-robin, fairly, for up to {@code fragmentLimit} fragments in total.
     *
     * @return the number of fragments delivered.
     */
    int poll(FragmentHandler fragmentHandler, int fragmentLimit);

    /**
     * Controlled variant of {@link #poll}.
     *
     * @return the number of fragments consumed.
     */
    int controlledPoll(ControlledFragmentHandler fragmentHandler, int fragmentLimit);

    /** @return a snapshot of the current images. */
    List<Image> images();

    /** @return the number of current images. */
    int imageCount();

    /** @return the image of the given session, or null. */
    Image imageBySessionId(int sessionId);

    /** @return true when at least one image is available. */
    boolean isConnected();

    /** @return the channel this subscription was added with. */
    String channel();

    /** @return the stream id. */
    int streamId();

    /** @return true once closed. */
    boolean isClosed();

    /** Closes the subscription and releases its images. Idempotent. */
    void close();
}
