package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

/** A transport whose first message was already read (by the endpoint, to find the stream): replays it once. */
public final class PrefixedTransport implements MessageTransport
{
    private final MessageTransport delegate;
    private byte[] first;

    public PrefixedTransport(final MessageTransport delegate, final byte[] first)
    {
        this.delegate = delegate;
        this.first = first;
    }

    public void send(final DirectBuffer buffer, final int offset, final int length) throws HandshakeException
    {
        delegate.send(buffer, offset, length);
    }

    public int receive(final MutableDirectBuffer buffer, final long timeoutMs) throws HandshakeException
    {
        if (null != first)
        {
            final byte[] message = first;
            first = null;
            buffer.putBytes(0, message);
            return message.length;
        }
        return delegate.receive(buffer, timeoutMs);
    }

    public String peer()
    {
        return delegate.peer();
    }

    public void close()
    {
        delegate.close();
    }
}
