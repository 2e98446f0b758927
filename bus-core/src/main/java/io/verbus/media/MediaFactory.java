package io.verbus.media;

import io.verbus.ChannelUri;

import java.util.Set;

/**
 * A media that carries Verbus logs for channels of one scheme, found with {@link java.util.ServiceLoader}
 * ({@code META-INF/services/io.verbus.media.MediaFactory}). Verbus maps the log and runs the agents; the media
 * moves bytes and reports positions.
 */
public interface MediaFactory
{
    /** @return the channel scheme this media serves, e.g. {@code "rdma"}. */
    String scheme();

    /**
     * @return the channel keys this media accepts besides {@link ChannelUri#COMMON_KEYS}; Verbus rejects any other
     * key before calling the media.
     */
    Set<String> supportedKeys();

    /**
     * Creates the sender side of a publication whose log Verbus has mapped and initialised.
     *
     * @param context of the driver (counters, error handler, clocks, mapper, dir, idle and threading settings).
     * @param uri     the publication's channel, keys already validated.
     * @param log     the publication's log and limit counter.
     * @return a sender owned by one thread from then on.
     */
    MediaSender newSender(MediaContext context, ChannelUri uri, PublicationLog log);

    /**
     * Creates the receiver side of a subscription; it announces images to the sink as publishers connect.
     *
     * @param context  of the driver.
     * @param uri      the subscription's channel, keys already validated.
     * @param streamId of the subscription.
     * @param images   where to announce images as they come and go.
     * @return a receiver owned by the receiver agent from then on.
     */
    MediaReceiver newReceiver(MediaContext context, ChannelUri uri, int streamId, ImageSink images);
}
