package io.verbus.media;

/**
 * Accepts publishers for one subscription and announces their images to an {@link ImageSink}. Owned by the
 * receiver agent.
 */
public interface MediaReceiver extends AutoCloseable
{
    /**
     * One duty cycle: accept connections, send the subscriber positions back as credits, detect lost peers.
     *
     * @return work done (0 lets the idle strategy back off).
     */
    int doWork();

    /** Releases the media's resources; images it announced must have been reported unavailable. */
    void close();
}
