package io.verbus.aeron;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.BufferClaim;
import io.verbus.ExclusivePublication;
import io.verbus.log.OfferArguments;
import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/**
 * A Verbus publication over an Aeron publication (concurrent or exclusive) of the embedded Aeron driver. Return
 * codes pass through unchanged: Verbus's equal Aeron's. Inputs are checked as the native publications check them,
 * so a bad length fails the same way on every channel. The {@link ExclusivePublication}-only methods ({@code termId},
 * {@code termOffset}, {@code appendPadding}, {@code offerBlock}) need an Aeron exclusive publication: on one added
 * with {@code addPublication} they throw {@link UnsupportedOperationException}.
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

    public long offer(
        final DirectBuffer buffer,
        final int offset,
        final int length,
        final ReservedValueSupplier reservedValueSupplier)
    {
        checkMessageLength(length, 0);
        OfferArguments.checkBuffer(buffer, offset, length, "buffer");
        return publication.offer(buffer, offset, length, reservedValueSupplier);
    }

    public long offer(
        final DirectBuffer bufferOne, final int offsetOne, final int lengthOne,
        final DirectBuffer bufferTwo, final int offsetTwo, final int lengthTwo,
        final ReservedValueSupplier reservedValueSupplier)
    {
        checkMessageLength(lengthOne, lengthTwo);
        OfferArguments.checkBuffer(bufferOne, offsetOne, lengthOne, "buffer");
        OfferArguments.checkBuffer(bufferTwo, offsetTwo, lengthTwo, "bufferTwo");
        return publication.offer(
            bufferOne, offsetOne, lengthOne, bufferTwo, offsetTwo, lengthTwo, reservedValueSupplier);
    }

    public long offer(final DirectBufferVector[] vectors, final ReservedValueSupplier reservedValueSupplier)
    {
        OfferArguments.checkVectorsNotNull(vectors);
        checkMessageLength(DirectBufferVector.validateAndComputeLength(vectors), 0);
        return publication.offer(vectors, reservedValueSupplier);
    }

    public long availableWindow()
    {
        return publication.availableWindow();
    }

    public long registrationId()
    {
        return publication.registrationId();
    }

    public long originalRegistrationId()
    {
        return publication.originalRegistrationId();
    }

    public long channelStatus()
    {
        return publication.channelStatus();
    }

    public long maxPossiblePosition()
    {
        return publication.maxPossiblePosition();
    }

    public int positionBitsToShift()
    {
        return publication.positionBitsToShift();
    }

    public int termId()
    {
        return exclusive().termId();
    }

    public int termOffset()
    {
        return exclusive().termOffset();
    }

    public long appendPadding(final int length)
    {
        return exclusive().appendPadding(length);
    }

    public long offerBlock(final MutableDirectBuffer buffer, final int offset, final int length)
    {
        return exclusive().offerBlock(buffer, offset, length);
    }

    private io.aeron.ExclusivePublication exclusive()
    {
        if (publication instanceof io.aeron.ExclusivePublication exclusivePublication)
        {
            return exclusivePublication;
        }
        throw new UnsupportedOperationException(
            "not an exclusive publication (added with addPublication): " + channel);
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
