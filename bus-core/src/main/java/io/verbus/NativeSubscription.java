package io.verbus;

import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.RawBlockHandler;
import io.aeron.status.ChannelEndpointStatus;
import io.verbus.log.LogImage;
import org.agrona.ErrorHandler;

import java.util.Arrays;
import java.util.List;
import java.util.function.Consumer;

/**
 * A subscription over native logs ({@code ipc:} or a media's bounded images). The images are a plain array
 * replaced under lock when they change, so {@code poll} reads one volatile reference and allocates nothing; it
 * polls the images round-robin from a rotating start so no publisher starves another. A handler that throws is
 * handled as {@link HandlerGuard} describes: the fragment counts as consumed and the exception goes to the error
 * handler.
 */
final class NativeSubscription implements Subscription
{
    private final long registrationId;
    private final String channel;
    private final ChannelUri uri;
    private final int streamId;
    private final AvailableImageHandler availableImageHandler;
    private final UnavailableImageHandler unavailableImageHandler;
    private final Consumer<NativeSubscription> closeHandler;
    private final HandlerGuard handlerGuard;
    private final ErrorHandler errorHandler;
    private volatile LogImage[] images = new LogImage[0];
    private volatile boolean isClosed;
    private int roundRobinIndex;

    NativeSubscription(
        final long registrationId,
        final ChannelUri uri,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler,
        final Consumer<NativeSubscription> closeHandler,
        final ErrorHandler errorHandler)
    {
        this.handlerGuard = new HandlerGuard(errorHandler);
        this.errorHandler = errorHandler;
        this.registrationId = registrationId;
        this.channel = uri.toString();
        this.uri = uri;
        this.streamId = streamId;
        this.availableImageHandler = availableImageHandler;
        this.unavailableImageHandler = unavailableImageHandler;
        this.closeHandler = closeHandler;
    }

    public long registrationId()
    {
        return registrationId;
    }

    ChannelUri uri()
    {
        return uri;
    }

    public boolean canAwaitData()
    {
        final LogImage[] images = this.images;
        return 1 == images.length && images[0].canAwaitData();
    }

    public boolean awaitData(final long timeoutNs)
    {
        final LogImage[] images = this.images;
        return 1 == images.length && images[0].awaitData(timeoutNs);
    }

    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        final FragmentHandler guardedHandler = handlerGuard.guard(fragmentHandler);
        final LogImage[] images = this.images;
        final int length = images.length;
        int fragmentsRead = 0;

        int startingIndex = roundRobinIndex++;
        if (startingIndex >= length)
        {
            roundRobinIndex = startingIndex = 0;
        }

        for (int i = startingIndex; i < length && fragmentsRead < fragmentLimit; i++)
        {
            fragmentsRead += images[i].poll(guardedHandler, fragmentLimit - fragmentsRead);
        }
        for (int i = 0; i < startingIndex && fragmentsRead < fragmentLimit; i++)
        {
            fragmentsRead += images[i].poll(guardedHandler, fragmentLimit - fragmentsRead);
        }

        return fragmentsRead;
    }

    public int controlledPoll(final ControlledFragmentHandler fragmentHandler, final int fragmentLimit)
    {
        final ControlledFragmentHandler guardedHandler = handlerGuard.guard(fragmentHandler);
        final LogImage[] images = this.images;
        final int length = images.length;
        int fragmentsRead = 0;

        int startingIndex = roundRobinIndex++;
        if (startingIndex >= length)
        {
            roundRobinIndex = startingIndex = 0;
        }

        for (int i = startingIndex; i < length && fragmentsRead < fragmentLimit; i++)
        {
            fragmentsRead += images[i].controlledPoll(guardedHandler, fragmentLimit - fragmentsRead);
        }
        for (int i = 0; i < startingIndex && fragmentsRead < fragmentLimit; i++)
        {
            fragmentsRead += images[i].controlledPoll(guardedHandler, fragmentLimit - fragmentsRead);
        }

        return fragmentsRead;
    }

    public long blockPoll(final BlockHandler blockHandler, final int blockLengthLimit)
    {
        long bytesConsumed = 0;
        for (final LogImage image : images)
        {
            bytesConsumed += image.blockPoll(blockHandler, blockLengthLimit);
        }
        return bytesConsumed;
    }

    public long rawPoll(final RawBlockHandler rawBlockHandler, final int blockLengthLimit)
    {
        long bytesConsumed = 0;
        for (final LogImage image : images)
        {
            bytesConsumed += image.rawPoll(rawBlockHandler, blockLengthLimit);
        }
        return bytesConsumed;
    }

    public Image imageAtIndex(final int index)
    {
        return images[index];
    }

    public void forEachImage(final Consumer<Image> consumer)
    {
        for (final LogImage image : images)
        {
            consumer.accept(image);
        }
    }

    public boolean hasNoImages()
    {
        return 0 == images.length;
    }

    public long channelStatus()
    {
        return isClosed ? ChannelEndpointStatus.NO_ID_ALLOCATED : ChannelEndpointStatus.ACTIVE;
    }

    public List<Image> images()
    {
        return List.of(images);
    }

    LogImage[] logImages()
    {
        return images;
    }

    public int imageCount()
    {
        return images.length;
    }

    public Image imageBySessionId(final int sessionId)
    {
        for (final LogImage image : images)
        {
            if (image.sessionId() == sessionId)
            {
                return image;
            }
        }
        return null;
    }

    public boolean isConnected()
    {
        for (final LogImage image : images)
        {
            if (!image.isClosed())
            {
                return true;
            }
        }
        return false;
    }

    public String channel()
    {
        return channel;
    }

    public int streamId()
    {
        return streamId;
    }

    public boolean isClosed()
    {
        return isClosed;
    }

    public void close()
    {
        if (!isClosed)
        {
            isClosed = true;
            closeHandler.accept(this);
        }
    }

    /** The Verbus closed: the subscription is closed too, without telling any handler. */
    void onDriverClosed()
    {
        isClosed = true;
    }

    /** Adds an image and tells the handler. Call under the driver's lock. */
    void addImage(final LogImage image)
    {
        final LogImage[] old = images;
        final LogImage[] updated = Arrays.copyOf(old, old.length + 1);
        updated[old.length] = image;
        images = updated;
        try
        {
            availableImageHandler.onAvailableImage(image);
        }
        catch (final RuntimeException ex)
        {
            // As Aeron's client conductor: the handler's failure is reported; the image stays, the caller carries on
            // (an add that attached this image must not fail half way and free memory the image still reads).
            errorHandler.onError(ex);
        }
    }

    /**
     * Removes an image, closes it and tells the handler. Call under the driver's lock.
     *
     * @return true when the image was present.
     */
    boolean removeImage(final LogImage image)
    {
        final LogImage[] old = images;
        final LogImage[] updated = Arrays.stream(old).filter(i -> i != image).toArray(LogImage[]::new);
        image.close();
        if (updated.length == old.length)
        {
            return false;
        }
        images = updated;
        try
        {
            unavailableImageHandler.onUnavailableImage(image);
        }
        catch (final RuntimeException ex)
        {
            errorHandler.onError(ex);
        }
        return true;
    }

    public String toString()
    {
        return "Subscription{channel=" + channel + ", streamId=" + streamId + ", images=" + images.length + '}';
    }
}
