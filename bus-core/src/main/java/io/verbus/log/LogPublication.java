package io.verbus.log;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.status.ChannelEndpointStatus;
import io.verbus.Publication;
import io.verbus.common.VarHandles;
import io.verbus.media.PublicationLog;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.Position;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

import static io.aeron.protocol.DataHeaderFlyweight.HEADER_LENGTH;

/**
 * What the concurrent and exclusive publications over a native log share: geometry, limits, input checks and the
 * status a failed offer returns.
 */
public abstract class LogPublication implements Publication
{
    /** Told when a publication closes, so the driver can retire its log. */
    @FunctionalInterface
    public interface CloseListener
    {
        /**
         * @param publication that was closed by its owner.
         */
        void onClose(LogPublication publication);
    }

    protected final String channel;
    protected final int streamId;
    protected final int sessionId;
    protected final int initialTermId;
    protected final int termLength;
    protected final int positionBitsToShift;
    protected final int maxPayloadLength;
    protected final int maxMessageLength;
    protected final long maxPossiblePosition;
    protected final UnsafeBuffer[] termBuffers;
    protected final UnsafeBuffer metaDataBuffer;
    protected final PublicationLog publicationLog;
    protected final Position publisherLimit;
    protected final AtomicCounter backPressureEvents;
    private final CloseListener closeListener;
    private final long registrationId;
    protected volatile boolean isClosed;
    private static final VarHandle IS_CLOSED =
        VarHandles.field(MethodHandles.lookup(), "isClosed", boolean.class);

    protected LogPublication(
        final String channel,
        final PublicationLog publicationLog,
        final AtomicCounter backPressureEvents,
        final CloseListener closeListener)
    {
        this(channel, publicationLog, backPressureEvents, closeListener, publicationLog.registrationId());
    }

    /**
     * @param registrationId this publication's own id: the log's for the publication that made the log, a new one
     *                       for each concurrent publication that shares it.
     */
    protected LogPublication(
        final String channel,
        final PublicationLog publicationLog,
        final AtomicCounter backPressureEvents,
        final CloseListener closeListener,
        final long registrationId)
    {
        this.registrationId = registrationId;
        this.channel = channel;
        this.publicationLog = publicationLog;
        this.streamId = publicationLog.streamId();
        this.sessionId = publicationLog.sessionId();
        this.initialTermId = publicationLog.initialTermId();
        this.termLength = publicationLog.termLength();
        this.positionBitsToShift = publicationLog.positionBitsToShift();
        this.termBuffers = publicationLog.logBuffers().termBuffers();
        this.metaDataBuffer = publicationLog.logBuffers().metaDataBuffer();
        this.maxPayloadLength = LogBufferDescriptor.mtuLength(metaDataBuffer) - HEADER_LENGTH;
        this.maxMessageLength = io.aeron.logbuffer.FrameDescriptor.computeMaxMessageLength(termLength);
        this.maxPossiblePosition = termLength * (1L << 31);
        this.publisherLimit = publicationLog.publisherLimit();
        this.backPressureEvents = backPressureEvents;
        this.closeListener = closeListener;
    }

    /** @return the log and limit counter shared with the conductor or the media. */
    public PublicationLog publicationLog()
    {
        return publicationLog;
    }

    /** @return the id of the back-pressure events counter (a standalone driver hands it to its client). */
    public int backPressureCounterId()
    {
        return backPressureEvents.id();
    }

    public long offer(final DirectBuffer buffer, final int offset, final int length)
    {
        return offer(buffer, offset, length, buffer, 0, 0); // which checks every argument before it claims
    }

    public long offer(
        final DirectBuffer buffer,
        final int offset,
        final int length,
        final ReservedValueSupplier reservedValueSupplier)
    {
        return offer(buffer, offset, length, buffer, 0, 0, reservedValueSupplier);
    }

    public long availableWindow()
    {
        final long position = position();
        return CLOSED == position ? CLOSED : publisherLimit.getVolatile() - position;
    }

    public long registrationId()
    {
        return registrationId;
    }

    /** @return the registration id of the log: that of the publication that made it (Aeron's original id). */
    public long originalRegistrationId()
    {
        return publicationLog.registrationId();
    }

    public long channelStatus()
    {
        return isClosed ? ChannelEndpointStatus.NO_ID_ALLOCATED : ChannelEndpointStatus.ACTIVE;
    }

    public long maxPossiblePosition()
    {
        return maxPossiblePosition;
    }

    public int positionBitsToShift()
    {
        return positionBitsToShift;
    }

    /**
     * Validates the vectors (Aeron's {@link DirectBufferVector#validateAndComputeLength}) and the total against
     * {@link #maxMessageLength()}.
     *
     * @return the message length.
     */
    protected final int checkVectors(final DirectBufferVector[] vectors)
    {
        OfferArguments.checkVectorsNotNull(vectors);
        final int length = DirectBufferVector.validateAndComputeLength(vectors);
        checkMessageLength(length, 0);
        return length;
    }

    public long positionLimit()
    {
        return isClosed ? CLOSED : publisherLimit.getVolatile();
    }

    public boolean isConnected()
    {
        return !isClosed && publicationLog.isConnected();
    }

    public int maxMessageLength()
    {
        return maxMessageLength;
    }

    public int maxPayloadLength()
    {
        return maxPayloadLength;
    }

    public String channel()
    {
        return channel;
    }

    public int streamId()
    {
        return streamId;
    }

    public int sessionId()
    {
        return sessionId;
    }

    public int initialTermId()
    {
        return initialTermId;
    }

    public int termBufferLength()
    {
        return termLength;
    }

    public boolean isClosed()
    {
        return isClosed;
    }

    public long position()
    {
        if (isClosed)
        {
            return CLOSED;
        }
        return PublicationLog.producerPosition(metaDataBuffer, initialTermId, termLength, positionBitsToShift);
    }

    /**
     * Closes once, also when two threads call it at once (a shutdown hook and a finally block): the close listener
     * counts the publications sharing a concurrent log, and a second count would close the log under another one.
     */
    public void close()
    {
        if (IS_CLOSED.compareAndSet(this, false, true))
        {
            // A direct-mode sender is closed by the sender agent, not here: a claim still open may be committed
            // just after close(), and the sender waits (bounded) for it before its end of stream.
            closeListener.onClose(this);
        }
    }

    /** @return the position at the start of a term. */
    protected final long termBeginPosition(final int termId)
    {
        return LogBufferDescriptor.computeTermBeginPosition(termId, positionBitsToShift, initialTermId);
    }

    /** @return the code for an offer that could not proceed at {@code position}. */
    protected final long backPressureStatus(final long position, final int framedLength)
    {
        if (position + framedLength >= maxPossiblePosition)
        {
            return MAX_POSITION_EXCEEDED;
        }
        if (publicationLog.isConnected())
        {
            backPressureEvents.increment();
            return BACK_PRESSURED;
        }
        return NOT_CONNECTED;
    }

    protected final void checkMessageLength(final int lengthOne, final int lengthTwo)
    {
        if (lengthOne < 0 || lengthTwo < 0)
        {
            throw new IllegalArgumentException(
                "message length must not be negative: " + (lengthOne < 0 ? lengthOne : lengthTwo));
        }
        final long total = (long)lengthOne + lengthTwo;
        if (total > maxMessageLength)
        {
            throw new IllegalArgumentException(
                "message length " + total + " exceeds maxMessageLength " + maxMessageLength + " (term length " +
                termLength + " / 8) on " + channel);
        }
    }

    /**
     * Checks every argument of an offer before anything is claimed, so that a bad call leaves no hole in the log:
     * a null buffer, a negative offset or length, or a range beyond a buffer's capacity would otherwise fail inside
     * the copy after the space was claimed.
     *
     * @throws IllegalArgumentException naming the argument.
     */
    protected final void checkOfferArguments(
        final DirectBuffer bufferOne, final int offsetOne, final int lengthOne,
        final DirectBuffer bufferTwo, final int offsetTwo, final int lengthTwo)
    {
        OfferArguments.checkNotNull(bufferOne, "offer: buffer");
        OfferArguments.checkNotNull(bufferTwo, "offer: bufferTwo");
        checkMessageLength(lengthOne, lengthTwo);
        OfferArguments.checkBuffer(bufferOne, offsetOne, lengthOne, "buffer");
        OfferArguments.checkBuffer(bufferTwo, offsetTwo, lengthTwo, "bufferTwo");
    }

    /**
     * Checks a claim's arguments before anything is claimed.
     *
     * @throws IllegalArgumentException for a null claim or a bad length.
     */
    protected final void checkClaimArguments(final int length, final BufferClaim bufferClaim)
    {
        OfferArguments.checkNotNull(bufferClaim, "tryClaim: bufferClaim");
        checkClaimLength(length);
    }

    protected final void checkClaimLength(final int length)
    {
        if (length < 0)
        {
            throw new IllegalArgumentException("claim length must not be negative: " + length);
        }
        if (length > maxPayloadLength)
        {
            throw new IllegalArgumentException(
                "claim length " + length + " exceeds maxPayloadLength " + maxPayloadLength + " (mtu " +
                (maxPayloadLength + HEADER_LENGTH) + " - header) on " + channel + ": use offer to fragment");
        }
    }

    public String toString()
    {
        return getClass().getSimpleName() + "{channel=" + channel + ", streamId=" + streamId + ", sessionId=" +
            sessionId + ", termLength=" + termLength + '}';
    }
}
