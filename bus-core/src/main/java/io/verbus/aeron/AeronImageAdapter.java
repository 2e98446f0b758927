package io.verbus.aeron;

import io.aeron.logbuffer.BlockHandler;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.RawBlockHandler;
import io.verbus.Image;
import io.verbus.Subscription;

/**
 * A Verbus image over an Aeron image.
 */
public final class AeronImageAdapter implements Image
{
    private final io.aeron.Image image;
    private final Subscription subscription;

    /**
     * @param image the Aeron image.
     */
    public AeronImageAdapter(final io.aeron.Image image)
    {
        this(image, null);
    }

    /**
     * @param image        the Aeron image.
     * @param subscription the Verbus subscription that wraps the image's Aeron subscription.
     */
    public AeronImageAdapter(final io.aeron.Image image, final Subscription subscription)
    {
        this.image = image;
        this.subscription = subscription;
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

    public int boundedPoll(final FragmentHandler fragmentHandler, final long limitPosition, final int fragmentLimit)
    {
        return image.boundedPoll(fragmentHandler, limitPosition, fragmentLimit);
    }

    public int boundedControlledPoll(
        final ControlledFragmentHandler fragmentHandler, final long limitPosition, final int fragmentLimit)
    {
        return image.boundedControlledPoll(fragmentHandler, limitPosition, fragmentLimit);
    }

    public long controlledPeek(
        final long initialPosition, final ControlledFragmentHandler fragmentHandler, final long limitPosition)
    {
        return image.controlledPeek(initialPosition, fragmentHandler, limitPosition);
    }

    public int blockPoll(final BlockHandler blockHandler, final int blockLengthLimit)
    {
        return image.blockPoll(blockHandler, blockLengthLimit);
    }

    public int rawPoll(final RawBlockHandler rawBlockHandler, final int blockLengthLimit)
    {
        return image.rawPoll(rawBlockHandler, blockLengthLimit);
    }

    public boolean isEndOfStream()
    {
        return image.isEndOfStream();
    }

    public long endOfStreamPosition()
    {
        return image.endOfStreamPosition();
    }

    /** @return the Verbus subscription this image was announced on (null for a wrapper made without one). */
    public Subscription subscription()
    {
        return subscription;
    }

    public void position(final long newPosition)
    {
        image.position(newPosition);
    }

    public int mtuLength()
    {
        return image.mtuLength();
    }

    public int activeTransportCount()
    {
        return image.activeTransportCount();
    }

    public String toString()
    {
        return "AeronImage{sessionId=" + sessionId() + ", source=" + sourceIdentity() + '}';
    }
}
