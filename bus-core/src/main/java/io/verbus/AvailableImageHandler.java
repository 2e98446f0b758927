package io.verbus;

/**
 * Told when a {@link Subscription} gains an {@link Image}: a publisher's stream became readable.
 * Called on the thread that discovered the image (a driver agent, or the caller of an add method).
 */
@FunctionalInterface
public interface AvailableImageHandler
{
    /**
     * @param image that is now available to poll through its subscription.
     */
    void onAvailableImage(Image image);
}
