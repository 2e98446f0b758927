package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** One end of an in-memory control connection: whole messages through blocking queues. */
final class QueueTransport implements MessageTransport
{
    private final BlockingQueue<byte[]> in;
    private final BlockingQueue<byte[]> out;
    private final String peer;
    /** What a man in the middle does to each message this end sends, before the peer gets it. */
    private volatile java.util.function.Consumer<byte[]> tamper = (bytes) -> {};

    private QueueTransport(final BlockingQueue<byte[]> in, final BlockingQueue<byte[]> out, final String peer)
    {
        this.in = in;
        this.out = out;
        this.peer = peer;
    }

    static QueueTransport[] pair()
    {
        final BlockingQueue<byte[]> aToB = new LinkedBlockingQueue<>();
        final BlockingQueue<byte[]> bToA = new LinkedBlockingQueue<>();
        return new QueueTransport[]{ new QueueTransport(bToA, aToB, "b"), new QueueTransport(aToB, bToA, "a") };
    }

    void tamper(final java.util.function.Consumer<byte[]> tamper)
    {
        this.tamper = tamper;
    }

    public void send(final DirectBuffer buffer, final int offset, final int length)
    {
        final byte[] bytes = new byte[length];
        buffer.getBytes(offset, bytes);
        tamper.accept(bytes);
        out.add(bytes);
    }

    public int receive(final MutableDirectBuffer buffer, final long timeoutMs) throws HandshakeException
    {
        try
        {
            final byte[] bytes = in.poll(timeoutMs, TimeUnit.MILLISECONDS);
            if (null == bytes)
            {
                throw new HandshakeException(HandshakeException.Reason.TIMEOUT, "nothing from " + peer);
            }
            buffer.putBytes(0, bytes);
            return bytes.length;
        }
        catch (final InterruptedException ex)
        {
            throw new HandshakeException(HandshakeException.Reason.CLOSED, "interrupted");
        }
    }

    public String peer()
    {
        return peer;
    }

    public void close()
    {
    }
}
