package io.verbus.aeron;

import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.RawBlockHandler;
import io.verbus.AvailableImageHandler;
import io.verbus.Image;
import io.verbus.Subscription;
import io.verbus.UnavailableImageHandler;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;

/**
 * A Verbus subscription over an Aeron subscription. Polling goes straight to Aeron; each Aeron image gets one
 * Verbus image wrapper, made when Aeron announces it, so handlers see the same object on both events.
 */
public final class AeronSubscriptionAdapter implements Subscription
{
    private final String channel;
    private final Map<io.aeron.Image, AeronImageAdapter> adapters = new ConcurrentHashMap<>();
    private final AvailableImageHandler availableImageHandler;
    private final UnavailableImageHandler unavailableImageHandler;
    private volatile io.aeron.Subscription subscription;

    AeronSubscriptionAdapter(
        final String channel,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        this.channel = channel;
        this.availableImageHandler = availableImageHandler;
        this.unavailableImageHandler = unavailableImageHandler;
    }

    void subscription(final io.aeron.Subscription subscription)
    {
        this.subscription = subscription;
    }

    void onAvailableImage(final io.aeron.Image image)
    {
        adoptSubscriptionOf(image);
        availableImageHandler.onAvailableImage(adapter(image));
    }

    void onUnavailableImage(final io.aeron.Image image)
    {
        adoptSubscriptionOf(image);
        final AeronImageAdapter adapter = adapters.remove(image);
        unavailableImageHandler.onUnavailableImage(null != adapter ? adapter : new AeronImageAdapter(image, this));
    }

    /**
     * Aeron's client can announce an image while {@code addSubscription} still waits for its answer (the driver sends
     * the subscription's images right after it), on the adding thread, before this adapter was given the
     * subscription: take it from the image, so a handler that asks the image's subscription for its stream id or
     * polls it meets the subscription rather than a null.
     */
    private void adoptSubscriptionOf(final io.aeron.Image image)
    {
        if (null == subscription)
        {
            subscription = image.subscription();
        }
    }

    private AeronImageAdapter adapter(final io.aeron.Image image)
    {
        return adapters.computeIfAbsent(image, (i) -> new AeronImageAdapter(i, this));
    }

    /** @return the wrapped Aeron subscription. */
    public io.aeron.Subscription aeronSubscription()
    {
        return subscription;
    }

    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        io.verbus.log.OfferArguments.checkNotNull(fragmentHandler, "poll: fragmentHandler");
        return subscription.poll(fragmentHandler, fragmentLimit);
    }

    public int controlledPoll(final ControlledFragmentHandler fragmentHandler, final int fragmentLimit)
    {
        io.verbus.log.OfferArguments.checkNotNull(fragmentHandler, "controlledPoll: fragmentHandler");
        return subscription.controlledPoll(fragmentHandler, fragmentLimit);
    }

    public long blockPoll(final BlockHandler blockHandler, final int blockLengthLimit)
    {
        return subscription.blockPoll(blockHandler, blockLengthLimit);
    }

    public long rawPoll(final RawBlockHandler rawBlockHandler, final int blockLengthLimit)
    {
        return subscription.rawPoll(rawBlockHandler, blockLengthLimit);
    }

    public Image imageAtIndex(final int index)
    {
        return adapter(subscription.imageAtIndex(index));
    }

    public void forEachImage(final Consumer<Image> consumer)
    {
        for (final io.aeron.Image image : subscription.images())
        {
            consumer.accept(adapter(image));
        }
    }

    public boolean hasNoImages()
    {
        return subscription.hasNoImages();
    }

    public long registrationId()
    {
        return subscription.registrationId();
    }

    public long channelStatus()
    {
        return subscription.channelStatus();
    }

    public List<Image> images()
    {
        final List<io.aeron.Image> images = subscription.images();
        final List<Image> result = new ArrayList<>(images.size());
        for (final io.aeron.Image image : images)
        {
            result.add(adapter(image));
        }
        return result;
    }

    public int imageCount()
    {
        return subscription.imageCount();
    }

    public Image imageBySessionId(final int sessionId)
    {
        final io.aeron.Image image = subscription.imageBySessionId(sessionId);
        return null == image ? null : adapter(image);
    }

    public boolean isConnected()
    {
        return subscription.isConnected();
    }

    public String channel()
    {
        return channel;
    }

    public int streamId()
    {
        return subscription.streamId();
    }

    public boolean isClosed()
    {
        return subscription.isClosed();
    }

    public void close()
    {
        subscription.close();
    }

    public String toString()
    {
        return "AeronSubscription{channel=" + channel + ", streamId=" + streamId() + '}';
    }
}
