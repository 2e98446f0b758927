package io.verbus.media;

/**
 * Told by Verbus that an image a media announced has closed itself on a corrupt frame: it will never read again,
 * so its subscriber position will never move again. The media must let the connection go (a publisher that kept
 * counting it would stay back pressured for ever) and may reconnect; it still reports the image unavailable
 * through {@link ImageSink#onImageUnavailable(long)} as for any lost connection.
 * <p>
 * Called on the subscriber's polling thread, from inside a poll: it must only raise a flag for the media's own
 * thread, never block or touch the media's resources.
 */
@FunctionalInterface
public interface ImageCorruptionListener
{
    /** For a media that has nothing to let go. */
    ImageCorruptionListener NONE = (imageId) -> {};

    /**
     * @param imageId from {@link ImageDescriptor#imageId()}.
     */
    void onImageCorrupt(long imageId);
}
