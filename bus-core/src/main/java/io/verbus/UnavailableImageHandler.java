package io.verbus;

/**
 * Told when an {@link Image} leaves its {@link Subscription}: the publisher closed, the connection was lost,
 * or the image read a corrupt frame.
 */
@FunctionalInterface
public interface UnavailableImageHandler
{
    /**
     * @param image that is no longer polled by its subscription.
     */
    void onUnavailableImage(Image image);
}
