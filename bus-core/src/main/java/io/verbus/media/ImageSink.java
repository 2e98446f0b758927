package io.verbus.media;

import org.agrona.concurrent.status.ReadablePosition;

/**
 * Where a {@link MediaReceiver} announces the images it receives. Implemented by Verbus for each subscription.
 * Called from the receiver agent's thread.
 */
public interface ImageSink
{
    /**
     * A publisher's stream has become readable: Verbus creates a bounded image over the descriptor's terms, adds
     * it to the subscription and tells the available-image handler.
     *
     * @param descriptor of the image; its memory must stay valid until {@link #onImageUnavailable(long)}.
     * @return the image's subscriber position counter, which the media reads with {@code getVolatile} to send
     * credits back to the publisher.
     * @throws IllegalArgumentException when the descriptor is inconsistent (term length, stream id, bound).
     */
    ReadablePosition onImageAvailable(ImageDescriptor descriptor);

    /**
     * The image's publisher is gone or its connection failed: Verbus removes the image from the subscription and
     * tells the unavailable-image handler. Unknown ids are ignored. The subscriber's thread may still be inside a
     * poll of the image when this returns: keep the term buffers and the bound mapped for the context's linger
     * timeout ({@code Verbus.Context.lingerTimeoutNs()}) after it. An image that found a corrupt frame has already
     * left its subscription (and told the media through its
     * bound, {@link ImageBound#onImageCorrupt(String)}), but its position counter stays allocated until this call.
     *
     * @param imageId from {@link ImageDescriptor#imageId()}.
     */
    void onImageUnavailable(long imageId);
}
