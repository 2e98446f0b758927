package io.verbus.bench.contender;

import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.Pinger;
import io.verbus.bench.Ponger;
import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;

import java.io.IOException;

/**
 * The seed comparison's one-sided RDMA: the sender WRITEs the message into the receiver's memory, then WRITEs a
 * doorbell (a sequence number, or the stream position, as a checked word: see {@link FabricPeer}) that the receiver
 * polls; the receiver's CPU never handles a completion. A stream is a ring in the receiver's memory whose consumed
 * position the receiver WRITEs back every quarter ring, so the sender never overruns it. While it waits on the
 * doorbell, the waiting thread calls {@link io.verbus.fabric.QueuePair#progress()}: on the tcp provider that thread
 * is then the receiving NIC (a no-op on hardware).
 */
public final class FabricWriteContender implements Contender
{
    private static final int REAP_EVERY_POLLS = 64;

    private final String provider;

    public FabricWriteContender(final String provider)
    {
        this.provider = provider;
    }

    @Override
    public String name()
    {
        return provider + "-rdma-write";
    }

    @Override
    public String provider()
    {
        return FabricLink.label(provider) + ", RDMA WRITE + doorbell WRITE";
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
            private int polls;

            @Override
            public boolean send(final long sequence, final int length)
            {
                MessageHeader.write(a.buffer, a.stagingOffset, sequence, length);
                a.batch.clear();
                a.addWrite(a.stagingOffset, length, FabricPeer.RING_OFFSET);
                a.addWriteOfCheckedWord(sequence, FabricPeer.DOORBELL_OFFSET);
                return a.post();
            }

            @Override
            public boolean pollEcho(final long sequence)
            {
                if (a.readCheckedWord(FabricPeer.DOORBELL_OFFSET) != sequence)
                {
                    a.qp.progress();
                    if (++polls % REAP_EVERY_POLLS == 0)
                    {
                        a.pollCompletions();
                    }
                    return false;
                }
                // The doorbell rang this sequence, so the ring must hold it too (a late echo never rings it).
                final long echoed = MessageHeader.sequence(a.buffer, FabricPeer.RING_OFFSET);
                if (!MessageHeader.isEchoOf(sequence, echoed))
                {
                    throw new IllegalStateException("the doorbell rang " + sequence + " but the ring holds " + echoed);
                }
                return true;
            }
        };
        final Ponger ponger = new Ponger()
        {
            private long lastSequence;
            private int polls;

            @Override
            public int echo()
            {
                final long sequence = b.readCheckedWord(FabricPeer.DOORBELL_OFFSET);
                if (sequence == lastSequence || FabricPeer.NO_WORD == sequence)
                {
                    b.qp.progress();
                    if (++polls % REAP_EVERY_POLLS == 0)
                    {
                        b.pollCompletions();
                    }
                    return 0;
                }
                lastSequence = sequence;
                final int length = MessageHeader.length(b.buffer, FabricPeer.RING_OFFSET);
                if (length < MessageHeader.HEADER_LENGTH || length > FabricPeer.STAGING_LENGTH)
                {
                    throw new IllegalStateException("message length " + length + " out of range");
                }
                // the ping's bytes in this end's ring are the echo's source: the next ping waits for this pong
                b.batch.clear();
                b.addWrite(FabricPeer.RING_OFFSET, length, FabricPeer.RING_OFFSET);
                b.addWriteOfCheckedWord(sequence, FabricPeer.DOORBELL_OFFSET);
                FabricSendReceiveContender.postWithin(b);
                return 1;
            }
        };
        return new SimplePingPongPair(pinger, ponger, link);
    }

    @Override
    public StreamPair openStream(final int maxLength) throws IOException
    {
        return stream(FabricLink.open(provider, maxLength));
    }

    /** The stream over an open link, from {@code a} to {@code b}; closing the pair closes the link. */
    static StreamPair stream(final FabricLink link)
    {
        final FabricPeer a = link.a;
        final FabricPeer b = link.b;
        final StreamPublisher publisher = new StreamPublisher()
        {
            private long position;
            private long consumed;

            @Override
            public boolean send(final int length)
            {
                final long credit = a.readCheckedWord(FabricPeer.CREDIT_OFFSET);
                if (FabricPeer.NO_WORD != credit)
                {
                    consumed = credit;
                }
                if (position + length - consumed > FabricPeer.RING_CAPACITY)
                {
                    a.pollCompletions();
                    return false;
                }
                // sizes divide the ring, so a message never wraps
                final int ringOffset = (int)(position % FabricPeer.RING_CAPACITY);
                a.batch.clear();
                a.addWrite(a.stagingOffset, length, FabricPeer.RING_OFFSET + ringOffset);
                a.addWriteOfCheckedWord(position + length, FabricPeer.DOORBELL_OFFSET);
                if (!a.post())
                {
                    return false;
                }
                position += length;
                return true;
            }

            @Override
            public int flush()
            {
                return a.pollCompletions();
            }
        };
        final StreamSubscriber subscriber = new StreamSubscriber()
        {
            private long consumed;
            private long credited;
            private int polls;

            @Override
            public int poll(final int length)
            {
                final long position = b.readCheckedWord(FabricPeer.DOORBELL_OFFSET);
                if (position == consumed || FabricPeer.NO_WORD == position)
                {
                    b.qp.progress();
                    if (++polls % REAP_EVERY_POLLS == 0)
                    {
                        b.pollCompletions();
                    }
                    return 0;
                }
                final int messages = (int)((position - consumed) / length);
                consumed = position;
                if (consumed - credited >= FabricPeer.RING_CAPACITY / 4)
                {
                    b.batch.clear();
                    b.addWriteOfCheckedWord(consumed, FabricPeer.CREDIT_OFFSET);
                    if (b.post())
                    {
                        credited = consumed;
                    }
                }
                return messages;
            }
        };
        return new SimpleStreamPair(publisher, subscriber, link);
    }
}
