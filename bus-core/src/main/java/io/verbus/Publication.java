package io.verbus;

import io.aeron.DirectBufferVector;
import io.aeron.ReservedValueSupplier;
import io.aeron.logbuffer.BufferClaim;
import org.agrona.DirectBuffer;

/**
 * Writes messages into a stream. A plain {@code Publication} may be shared by many threads
 * (concurrent appends); an {@link ExclusivePublication} has one writer thread.
 * <p>
 * The return value of {@code offer} and {@code tryClaim} is the new stream position when positive, else
 * one of the codes below, which have the same values as Aeron's so code written for Aeron reads them unchanged.
 */
public interface Publication extends AutoCloseable
{
    /** No subscriber is connected: the message was not written. */
    long NOT_CONNECTED = -1;

    /** The slowest subscriber is a full window behind: retry later. */
    long BACK_PRESSURED = -2;

    /** The log rotated to a new term during the call: retry at once. */
    long ADMIN_ACTION = -3;

    /** The publication is closed. */
    long CLOSED = -4;

    /** The stream has reached the highest position its term length can address. */
    long MAX_POSITION_EXCEEDED = -5;

    /**
     * Appends a whole buffer as one message: {@code offer(buffer, 0, buffer.capacity())}.
     *
     * @param buffer holding the message from index 0 to its capacity.
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when the capacity is above {@link #maxMessageLength()}.
     */
    default long offer(final DirectBuffer buffer)
    {
        return offer(buffer, 0, buffer.capacity());
    }

    /**
     * Appends a message, fragmenting it when it exceeds {@link #maxPayloadLength()}.
     *
     * @param buffer holding the message.
     * @param offset of the message in the buffer.
     * @param length of the message in bytes, 0 to {@link #maxMessageLength()}.
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when the length is negative or above {@link #maxMessageLength()}.
     */
    long offer(DirectBuffer buffer, int offset, int length);

    /**
     * Appends one message gathered from two buffers, e.g. a header and a payload, without copying them
     * together first.
     *
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when a length is negative or the sum is above {@link #maxMessageLength()}.
     */
    long offer(
        DirectBuffer bufferOne, int offsetOne, int lengthOne,
        DirectBuffer bufferTwo, int offsetTwo, int lengthTwo);

    /**
     * Appends a message as {@link #offer(DirectBuffer, int, int)} does, and lets the supplier set the 64-bit reserved
     * value of each frame's header (Aeron's semantics: called once per fragment, after the payload is written and
     * before the frame is published, with the frame's offset and length in the term buffer).
     *
     * @param reservedValueSupplier sets the reserved value of each frame, or null for the default (0).
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when the length is negative or above {@link #maxMessageLength()}.
     */
    long offer(DirectBuffer buffer, int offset, int length, ReservedValueSupplier reservedValueSupplier);

    /**
     * Appends one message gathered from two buffers, with a {@link ReservedValueSupplier} for each frame's header.
     *
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when a length is negative or the sum is above {@link #maxMessageLength()}.
     */
    long offer(
        DirectBuffer bufferOne, int offsetOne, int lengthOne,
        DirectBuffer bufferTwo, int offsetTwo, int lengthTwo,
        ReservedValueSupplier reservedValueSupplier);

    /**
     * Appends one message gathered from the vectors in order, without copying them together first.
     *
     * @param vectors that make up the message; each is validated (Aeron's {@link DirectBufferVector#validate()}).
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when a vector is invalid or the total is above {@link #maxMessageLength()}.
     */
    default long offer(final DirectBufferVector[] vectors)
    {
        return offer(vectors, null);
    }

    /**
     * Appends one message gathered from the vectors, with a {@link ReservedValueSupplier} for each frame's header.
     *
     * @return the new stream position, or a negative code.
     * @throws IllegalArgumentException when a vector is invalid or the total is above {@link #maxMessageLength()}.
     */
    long offer(DirectBufferVector[] vectors, ReservedValueSupplier reservedValueSupplier);

    /**
     * Claims space for a message of up to {@link #maxPayloadLength()} bytes written in place: write it through
     * {@link BufferClaim#buffer()} from {@link BufferClaim#offset()}, then {@link BufferClaim#commit()} or
     * {@link BufferClaim#abort()}.
     *
     * @return the new stream position once committed, or a negative code (the claim is then untouched).
     * @throws IllegalArgumentException when the length is negative or above {@link #maxPayloadLength()}.
     */
    long tryClaim(int length, BufferClaim bufferClaim);

    /** @return the position up to which the publication has written (its tail), or {@link #CLOSED}. */
    long position();

    /** @return the position the publication may write up to before it is back pressured. */
    long positionLimit();

    /**
     * @return how many bytes may be offered before the publication is back pressured ({@link #positionLimit()} -
     * {@link #position()}; negative when the publisher is past its limit), or {@link #CLOSED}.
     */
    long availableWindow();

    /**
     * @return the id this publication was registered with: unique within its Verbus for {@code ipc} and media
     * channels, Aeron's registration id for {@code aeron:} channels; what {@code Verbus.asyncAdd*} returned.
     */
    long registrationId();

    /**
     * @return Aeron's original registration id: that of the publication whose log this one shares. The same as
     * {@link #registrationId()} for an exclusive publication and for the first concurrent publication of a channel
     * and stream; a later concurrent one of the same channel and stream shares the first's log and reports its id.
     */
    long originalRegistrationId();

    /**
     * Aeron's channel endpoint status: {@link io.aeron.status.ChannelEndpointStatus#ACTIVE} while open (an
     * {@code ipc} or {@code rdma:} publication has no separate endpoint to fail: its endpoint is bound when the add
     * returns, as Aeron reports for IPC), {@link io.aeron.status.ChannelEndpointStatus#NO_ID_ALLOCATED} once closed;
     * {@code aeron:} channels report Aeron's own value.
     *
     * @return the status of the channel endpoint.
     */
    long channelStatus();

    /** @return the highest position the log can address: term length x 2^31. */
    long maxPossiblePosition();

    /** @return log2 of the term length: shift a position right by it to get the number of terms it spans. */
    int positionBitsToShift();

    /** @return true when at least one subscriber is connected. */
    boolean isConnected();

    /** @return the largest message {@code offer} accepts (fragmented as needed). */
    int maxMessageLength();

    /** @return the largest payload of one frame: {@code tryClaim}'s limit. */
    int maxPayloadLength();

    /** @return the channel this publication was added with. */
    String channel();

    /** @return the stream id. */
    int streamId();

    /** @return the session id that identifies this publication's log to subscribers. */
    int sessionId();

    /** @return the initial term id of the log. */
    int initialTermId();

    /** @return the length of one term of the log in bytes. */
    int termBufferLength();

    /** @return true once closed. */
    boolean isClosed();

    /** Closes the publication; further offers return {@link #CLOSED}. Idempotent. */
    void close();
}
