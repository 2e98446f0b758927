package io.verbus.aeron;

import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Image;

/**
 * A Verbus image over an Aeron image.
 */
public final class AeronImageAdapter implements Image
{
    private final io.aeron.Image image;

    /**
     * @param image the Aeron image.
     */
    public AeronImageAdapter(final io.aeron.Image image)
    {
        this.image = image;
    }

    /** @return the wrapped Aeron image. */
    public io.aeron.Image aeronImage()
    {
        return image;
    }

    public int sessionId()
    {
        return image.sessionId();
    }

    public int streamId()
    {
        return image.subscription().streamId();
    }

    public int initialTermId()
    {
        return image.initialTermId();
    }

    public int termBufferLength()
    {
        return image.termBufferLength();
    }

    public long joinPosition()
    {
        return image.joinPosition();
    }

    public long position()
    {
        return image.position();
    }

    public String sourceIdentity()
    {
        return image.sourceIdentity();
    }

    public boolean isClosed()
    {
        return image.isClosed();
    }

    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        io.verbus.log.OfferArguments.checkNotNull(fragmentHandler, "poll: fragmentHandler");
        return image.poll(fragmentHandler, fragmentLimit);
    }

    public int controlledPoll(final ControlledFragmentHandler fragmentHandler, final int fragmentLimit)
    {
        io.verbus.log.OfferArguments.checkNotNull(fragmentHandler, "controlledPoll: fragmentHandler");
        return image.controlledPoll(fragmentHandler, fragmentLimit);
    }

    public String toString()
    {
        return "AeronImage{sessionId=" + sessionId() + ", source=" + sourceIdentity() + '}';
    }
}
