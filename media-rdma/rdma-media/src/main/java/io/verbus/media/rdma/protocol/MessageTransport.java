package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** Whole handshake messages in and out of a control connection. */
public interface MessageTransport extends AutoCloseable
{
    /** Send {@code buffer[offset, offset + length)} as one message. */
    void send(DirectBuffer buffer, int offset, int length) throws HandshakeException;

    /**
     * Receive one message into {@code buffer} at 0, reading the header first and refusing a length outside
     * [{@link HandshakeHeader#LENGTH}, {@link HandshakeHeader#MAX_MESSAGE_LENGTH}] before reading any body.
     *
     * @param timeoutMs how long to wait for the whole message.
     * @return the number of bytes received.
     */
    int receive(MutableDirectBuffer buffer, long timeoutMs) throws HandshakeException;

    /** Who is at the other end, for log lines. */
    String peer();

    void close();
}
