package io.verbus.bench.contender;

import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.Pinger;
import io.verbus.bench.Ponger;
import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * The seed comparison's two-sided RDMA: SEND into RECVs the receiver posted in advance, over one fabric provider.
 * The receiver's CPU takes every message off its completion queue and posts the RECV again.
 */
public final class FabricSendReceiveContender implements Contender
{
    private static final long POST_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);

    private final String provider;

    public FabricSendReceiveContender(final String provider)
    {
        this.provider = provider;
    }

    @Override
    public String name()
    {
        return provider + "-send-recv";
    }

    @Override
    public String provider()
    {
        return FabricLink.label(provider) + ", SEND/RECV";
    }

    @Override
    public String unavailableReason()
    {
        return FabricLink.unavailableReason(provider);
    }

    @Override
    public PingPongPair openPingPong(final int maxLength) throws IOException
    {
        final FabricLink link = FabricLink.open(provider, maxLength);
        final FabricPeer a = link.a;
        final FabricPeer b = link.b;
        final Pinger pinger = new Pinger()
        {
            @Override
            public boolean send(final long sequence, final int length)
            {
                MessageHeader.write(a.buffer, a.stagingOffset, sequence, length);
                a.batch.clear();
                a.addSend(a.stagingOffset, length);
                return a.post();
            }

            @Override
            public boolean pollEcho(final long sequence)
            {
                if (0 == a.pollCompletions())
                {
                    return false;
                }
                final long echoed = MessageHeader.sequence(a.buffer, a.lastReceiveOffset());
                a.repostLastReceive();
                return MessageHeader.isEchoOf(sequence, echoed); // a late echo of an earlier message is dropped
            }
        };
        final Ponger ponger = () ->
        {
            if (0 == b.pollCompletions())
            {
                return 0;
            }
            // copy out, so the slot can take the next message while the echo is in flight
            final int length = b.lastReceiveLength();
            b.buffer.putBytes(b.stagingOffset, b.buffer, b.lastReceiveOffset(), length);
            b.repostLastReceive();
            b.batch.clear();
            b.addSend(b.stagingOffset, length);
            postWithin(b);
            return 1;
        };
        return new SimplePingPongPair(pinger, ponger, link);
    }

    @Override
    public StreamPair openStream(final int maxLength) throws IOException
    {
        final FabricLink link = FabricLink.open(provider, maxLength);
        final FabricPeer a = link.a;
        final FabricPeer b = link.b;
        final StreamPublisher publisher = new StreamPublisher()
        {
            @Override
            public boolean send(final int length)
            {
                a.batch.clear();
                a.addSend(a.stagingOffset, length);
                return a.post();
            }

            @Override
            public int flush()
            {
                return a.pollCompletions();
            }
        };
        final StreamSubscriber subscriber = length -> b.drainReceives();
        return new SimpleStreamPair(publisher, subscriber, link);
    }

    static void postWithin(final FabricPeer peer)
    {
        final long deadlineNs = System.nanoTime() + POST_TIMEOUT_NS;
        while (!peer.post())
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("send queue full for 5 s");
            }
            Thread.onSpinWait();
        }
    }
}
