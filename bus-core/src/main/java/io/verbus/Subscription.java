package io.verbus;

import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.RawBlockHandler;

import java.util.List;
import java.util.function.Consumer;

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

    /**
     * @return true when {@link #awaitData} can block until new data: the subscription has exactly one image and its
     * media can wake a waiting thread ({@code rdma:...|idle=event}). False for every other channel, with no image yet,
     * or with several images (one wait cannot cover several publishers).
     */
    default boolean canAwaitData()
    {
        return false;
    }

    /**
     * Event-driven idle, for the thread that polls this subscription, after a poll that found nothing (never call it
     * from another thread; {@code poll} itself never blocks). Arms the image's wake-up, looks once more so data that
     * landed after the last poll is not missed, and blocks until the publisher's next commit or the timeout. Used by
     * {@link EventIdleStrategy}: {@code while (running) idle.idle(sub.poll(handler, 10));}.
     *
     * @param timeoutNs longest wait (a media may cap it, rdma at 250 ms).
     * @return true when woken or data was already there (poll again); false on timeout or when this subscription
     * cannot wait ({@link #canAwaitData()} false: returns at once).
     */
    default boolean awaitData(final long timeoutNs)
    {
        return false;
    }

    /** @return a snapshot of the current images. */
    List<Image> images();

    /**
     * Polls each image once for a block of whole frames ({@link Image#blockPoll}).
     *
     * @param blockHandler     told of each image's block.
     * @param blockLengthLimit the most bytes one image delivers in one block.
     * @return the bytes consumed over all images.
     */
    long blockPoll(BlockHandler blockHandler, int blockLengthLimit);

    /**
     * Polls each image once for a raw block of whole frames ({@link Image#rawPoll}).
     *
     * @param rawBlockHandler  told of each image's block.
     * @param blockLengthLimit the most bytes one image delivers in one block.
     * @return the bytes consumed over all images.
     */
    long rawPoll(RawBlockHandler rawBlockHandler, int blockLengthLimit);

    /**
     * @param index from 0 to {@link #imageCount()} - 1.
     * @return the image at that index of the current images.
     * @throws IndexOutOfBoundsException when there is no image at that index (as Aeron's array access throws).
     */
    Image imageAtIndex(int index);

    /**
     * Calls the consumer with each current image, without copying the image list.
     *
     * @param consumer of each image.
     */
    void forEachImage(Consumer<Image> consumer);

    /** @return true when the subscription has no images. */
    boolean hasNoImages();

    /**
     * @return the id this subscription was registered with (Aeron's registration id for {@code aeron:} channels);
     * what {@code Verbus.asyncAddSubscription} returned.
     */
    long registrationId();

    /**
     * Aeron's channel endpoint status: {@link io.aeron.status.ChannelEndpointStatus#ACTIVE} while open ({@code ipc}
     * and {@code rdma:} subscriptions have no receive endpoint to bind, as Aeron's IPC subscriptions have none: an
     * {@code rdma:} subscription that cannot reach its publisher stays ACTIVE and retries, logging why),
     * {@link io.aeron.status.ChannelEndpointStatus#NO_ID_ALLOCATED} once closed; {@code aeron:} channels report
     * Aeron's own value.
     *
     * @return the status of the channel endpoint.
     */
    long channelStatus();

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
