package io.verbus.bench.contender;

import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.Pinger;
import io.verbus.bench.Ponger;
import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;
import io.verbus.common.VarHandles;
import org.agrona.BitUtil;
import org.agrona.concurrent.MessageHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.ringbuffer.OneToOneRingBuffer;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.nio.ByteBuffer;

/**
 * The hardware floor: what any inter-thread messaging on this machine costs at least.
 * <ul>
 *     <li>Latency: two threads bounce one cache line. The pinger stores an odd value, the ponger sees it and stores
 *     the next even value. No payload moves, so the figure is the same for every size: the coherence round trip
 *     between the two cores.</li>
 *     <li>Throughput: Agrona's single-producer single-consumer {@link OneToOneRingBuffer}, the least a message copy
 *     between two threads costs.</li>
 * </ul>
 */
public final class FloorContender implements Contender
{
    private static final int RING_CAPACITY_BYTES = 1024 * 1024;
    private static final int MESSAGE_TYPE_ID = 1;

    @Override
    public String name()
    {
        return "floor";
    }

    @Override
    public String provider()
    {
        return "one cache line (latency), agrona OneToOneRingBuffer (throughput)";
    }

    @Override
    public PingPongPair openPingPong(final int maxLength)
    {
        final CacheLine line = new CacheLine();
        final Pinger pinger = new Pinger()
        {
            @Override
            public boolean send(final long sequence, final int length)
            {
                line.publish(2 * sequence - 1);
                return true;
            }

            @Override
            public boolean pollEcho(final long sequence)
            {
                return line.read() == 2 * sequence;
            }
        };
        final Ponger ponger = new Ponger()
        {
            @Override
            public int echo()
            {
                final long value = line.read();
                if ((value & 1) == 1)
                {
                    line.publish(value + 1);
                    return 1;
                }
                return 0;
            }
        };
        return new SimplePingPongPair(pinger, ponger, () -> {});
    }

    @Override
    public StreamPair openStream(final int maxLength)
    {
        final UnsafeBuffer ringMemory = new UnsafeBuffer(ByteBuffer.allocateDirect(
            RING_CAPACITY_BYTES + RingBufferDescriptor.TRAILER_LENGTH));
        final OneToOneRingBuffer ring = new OneToOneRingBuffer(ringMemory);
        final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(BitUtil.align(maxLength, 64)));
        final StreamPublisher publisher = length -> ring.write(MESSAGE_TYPE_ID, message, 0, length);
        final MessageHandler countingHandler = (msgTypeId, buffer, index, length) -> {};
        final StreamSubscriber subscriber = length -> ring.read(countingHandler, 256);
        return new SimpleStreamPair(publisher, subscriber, () -> {});
    }

    /**
     * One long alone on its cache line (padding on both sides), written with release and read with acquire.
     */
    @SuppressWarnings("unused")
    static final class CacheLine
    {
        private static final VarHandle VALUE = VarHandles.field(MethodHandles.lookup(), "value", long.class);

        private long p01, p02, p03, p04, p05, p06, p07, p08, p09, p10, p11, p12, p13, p14, p15;
        private long value;
        private long q01, q02, q03, q04, q05, q06, q07, q08, q09, q10, q11, q12, q13, q14, q15;

        void publish(final long newValue)
        {
            VALUE.setRelease(this, newValue);
        }

        long read()
        {
            return (long)VALUE.getAcquire(this);
        }
    }
}
