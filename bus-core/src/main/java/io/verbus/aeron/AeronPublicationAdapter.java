package io.verbus.aeron;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.ExclusivePublication;
import io.verbus.log.OfferArguments;
import org.agrona.DirectBuffer;

/**
 * A Verbus publication over an Aeron publication (concurrent or exclusive) of the embedded Aeron driver. Return
 * codes pass through unchanged: Verbus's equal Aeron's. Inputs are checked as the native publications check them,
 * so a bad length fails the same way on every channel.
 */
public final class AeronPublicationAdapter implements ExclusivePublication
{
    private final io.aeron.Publication publication;
    private final String channel;

    /**
     * @param publication the Aeron publication.
     * @param channel     as the user gave it.
     */
    public AeronPublicationAdapter(final io.aeron.Publication publication, final String channel)
    {
        this.publication = publication;
        this.channel = channel;
    }

    /** @return the wrapped Aeron publication. */
    public io.aeron.Publication aeronPublication()
    {
        return publication;
    }

    public long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        checkMessageLength(length, 0);
        OfferArguments.checkBuffer(buffer, offset, length, "buffer");
        return publication.offer(buffer, offset, length);
    }

    public long offer(
        final DirectBuffer bufferOne, final int offsetOne, final int lengthOne,
        final DirectBuffer bufferTwo, final int offsetTwo, final int lengthTwo)
    {
        checkMessageLength(lengthOne, lengthTwo);
        OfferArguments.checkBuffer(bufferOne, offsetOne, lengthOne, "buffer");
        OfferArguments.checkBuffer(bufferTwo, offsetTwo, lengthTwo, "bufferTwo");
        return publication.offer(bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo);
    }

    public long tryClaim(final int length, final BufferClaim bufferClaim)
    {
        OfferArguments.checkNotNull(bufferClaim, "tryClaim: bufferClaim");
        if (length < 0 || length > publication.maxPayloadLength())
        {
            throw new IllegalArgumentException("claim length " + length + " must be from 0 to maxPayloadLength " +
                publication.maxPayloadLength() + " on " + channel);
        }
        return publication.tryClaim(length, bufferClaim);
    }

    public long position()
    {
        return publication.position();
    }

    public long positionLimit()
    {
        return publication.positionLimit();
    }

    public boolean isConnected()
    {
        return publication.isConnected();
    }

    public int maxMessageLength()
    {
        return publication.maxMessageLength();
    }

    public int maxPayloadLength()
    {
        return publication.maxPayloadLength();
    }

    public String channel()
    {
        return channel;
    }

    public int streamId()
    {
        return publication.streamId();
    }

    public int sessionId()
    {
        return publication.sessionId();
    }

    public int initialTermId()
    {
        return publication.initialTermId();
    }

    public int termBufferLength()
    {
        return publication.termBufferLength();
    }

    public boolean isClosed()
    {
        return publication.isClosed();
    }

    public void close()
    {
        publication.close();
    }

    /** Aeron's driver sends: nothing to do in the caller's thread. */
    public int flush()
    {
        return 0;
    }

    private void checkMessageLength(final int lengthOne, final int lengthTwo)
    {
        if (lengthOne < 0 || lengthTwo < 0)
        {
            throw new IllegalArgumentException(
                "message length must not be negative: " + Math.min(lengthOne, lengthTwo));
        }
        if ((long)lengthOne + lengthTwo > publication.maxMessageLength())
        {
            throw new IllegalArgumentException("message length " + ((long)lengthOne + lengthTwo) +
                " exceeds maxMessageLength " + publication.maxMessageLength() + " on " + channel);
        }
    }

    public String toString()
    {
        return "AeronPublication{channel=" + channel + ", streamId=" + streamId() + ", sessionId=" + sessionId() + '}';
    }
}
