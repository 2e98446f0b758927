package io.verbus.tools;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkRequestBatch;

import java.io.PrintStream;
import java.lang.foreign.MemorySegment;
import java.lang.invoke.VarHandle;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_LONG;

/**
 * 64-byte RDMA WRITE ping-pong through the fabric SPI on the verbs provider, measured the way perftest's
 * {@code ib_write_lat} measures it, so the two figures can sit side by side: two RC QPs on one device,
 * connected to each other; A writes an inline message into B's buffer, the message's last 8 bytes carry a
 * sequence number that the receiving side polls in memory, then B writes it back into A's buffer. The
 * figure is half of each round trip. Every 16th WRITE is signaled and completions are reaped as they come,
 * so the send queues never fill. One thread drives both ends (no busy-spinning second thread).
 *
 * <pre>java ... io.verbus.tools.VerbsWriteLatency [--iterations N] [--warmup N] [--size BYTES]</pre>
 */
public final class VerbsWriteLatency
{
    /** Default measured round trips. */
    public static final int DEFAULT_ITERATIONS = 5_000;
    /** Default round trips before measuring: enough for C2 to compile the post/poll path. */
    public static final int DEFAULT_WARMUP = 20_000;
    /** Default message size: the figure issue 4 asks for. */
    public static final int DEFAULT_SIZE = 64;
    /** The provider it measures, found by name so this tool needs only the fabric SPI to compile. */
    static final String VERBS_PROVIDER_NAME = "verbs";
    private static final int SIGNAL_EVERY = 16;
    private static final long ARRIVAL_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final VarHandle LONG_ACQUIRE = JAVA_LONG.varHandle();

    /**
     * What one run measured.
     *
     * @param iterations   round trips measured.
     * @param sizeBytes    message size.
     * @param halfRoundTripNs sorted half round trips, nanoseconds.
     * @param device       device name.
     * @param maxInlineData inline capacity of the QPs.
     */
    public record Result(int iterations, int sizeBytes, long[] halfRoundTripNs, String device, int maxInlineData)
    {
        public long percentileNs(final double percentile)
        {
            // The nearest-rank sample; the epsilon keeps 99.9 % of 1000 at rank 999 (the product is 999.0000000000001).
            final int index = (int)Math.min(halfRoundTripNs.length - 1,
                Math.ceil(percentile / 100.0 * halfRoundTripNs.length - 1e-9) - 1);
            return halfRoundTripNs[Math.max(0, index)];
        }

        public String summary()
        {
            return String.format("Verbus verbs WRITE %d B inline ping-pong on %s, %d iterations, half round trip " +
                "(as ib_write_lat): min %.2f us, p50 %.2f us, p99 %.2f us, p99.9 %.2f us, max %.2f us",
                sizeBytes, device, iterations, halfRoundTripNs[0] / 1000.0, percentileNs(50) / 1000.0,
                percentileNs(99) / 1000.0, percentileNs(99.9) / 1000.0,
                halfRoundTripNs[halfRoundTripNs.length - 1] / 1000.0);
        }
    }

    private VerbsWriteLatency()
    {
    }

    public static void main(final String[] args)
    {
        int iterations = DEFAULT_ITERATIONS;
        int warmup = DEFAULT_WARMUP;
        int size = DEFAULT_SIZE;
        for (int i = 0; i < args.length; i++)
        {
            switch (args[i])
            {
                case "--iterations" -> iterations = intArgument(args, ++i, "--iterations", 1);
                case "--warmup" -> warmup = intArgument(args, ++i, "--warmup", 0);
                case "--size" -> size = intArgument(args, ++i, "--size", Long.BYTES);
                case "--help", "-h" ->
                {
                    System.out.println("usage: VerbsWriteLatency [--iterations N] [--warmup N] [--size BYTES>=8]");
                    System.out.println("64 B RDMA WRITE ping-pong between two QPs on the first verbs device.");
                    return;
                }
                default -> fail("unknown flag '" + args[i] + "' (try --help)");
            }
        }
        final Result result = run(iterations, warmup, size);
        System.out.println(result.summary());
    }

    /**
     * @param iterations measured round trips.
     * @param warmup     unmeasured round trips first.
     * @param size       message bytes, at least 8, at most the inline capacity.
     * @return the measurement.
     */
    public static Result run(final int iterations, final int warmup, final int size)
    {
        try (Fabric fabric = Fabrics.open(VERBS_PROVIDER_NAME);
            Device device = fabric.openDevice())
        {
            return run(device, iterations, warmup, size);
        }
    }

    /**
     * @param device     an opened verbs device.
     * @param iterations measured round trips.
     * @param warmup     unmeasured round trips first.
     * @param size       message bytes.
     * @return the measurement.
     */
    public static Result run(final Device device, final int iterations, final int warmup, final int size)
    {
        if (size < Long.BYTES)
        {
            throw new IllegalArgumentException("size must be >= 8 bytes: " + size);
        }
        final ProtectionDomain pd = device.allocateProtectionDomain();
        final CompletionQueue cq = device.createCompletionQueue(256);
        final QueuePairConfig config = new QueuePairConfig().completionQueue(cq).maxInlineData(size)
            .maxSendWorkRequests(64).maxReceiveWorkRequests(1)
            .portNumber(device.attributes().ports().getFirst().portNumber());
        final QueuePair a = pd.createQueuePair(config);
        final QueuePair b = pd.createQueuePair(config);
        final MemorySegment memory = device.allocateMemory(4096);
        final MemoryRegion region = pd.registerMemory(memory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        try
        {
            a.connect(b.localConnectionInfo());
            b.connect(a.localConnectionInfo());
            // A's inbox at 0, B's at 1024; sources (inline, so unregistered use is fine) at 2048 and 3072.
            final long inboxA = region.address();
            final long inboxB = region.address() + 1024;
            final MemorySegment sourceA = memory.asSlice(2048, size);
            final MemorySegment sourceB = memory.asSlice(3072, size);
            final long[] samples = new long[iterations];
            final Pinger pinger = new Pinger(a, b, cq, region.rkey(), inboxA, inboxB, sourceA, sourceB, memory, size);
            for (int i = 0; i < warmup; i++)
            {
                pinger.roundTrip();
            }
            for (int i = 0; i < iterations; i++)
            {
                final long start = System.nanoTime();
                pinger.roundTrip();
                samples[i] = (System.nanoTime() - start) / 2;
            }
            pinger.drain();
            Arrays.sort(samples);
            return new Result(iterations, size, samples, device.attributes().name(), a.maxInlineData());
        }
        finally
        {
            a.close();
            b.close();
            region.deregister();
            cq.close();
            pd.close();
        }
    }

    /** The loop's state, allocated once. */
    public static final class Pinger
    {
        private final QueuePair a;
        private final QueuePair b;
        private final CompletionQueue cq;
        private final int rkey;
        private final long inboxA;
        private final long inboxB;
        private final MemorySegment sourceA;
        private final MemorySegment sourceB;
        private final MemorySegment memory;
        private final int size;
        private final WorkRequestBatch batch = new WorkRequestBatch(1);
        private final WorkCompletion[] completions = WorkCompletion.newArray(16);
        private long sequence;
        private long outstandingSignaled;

        public Pinger(
            final QueuePair a,
            final QueuePair b,
            final CompletionQueue cq,
            final int rkey,
            final long inboxA,
            final long inboxB,
            final MemorySegment sourceA,
            final MemorySegment sourceB,
            final MemorySegment memory,
            final int size)
        {
            this.a = a;
            this.b = b;
            this.cq = cq;
            this.rkey = rkey;
            this.inboxA = inboxA;
            this.inboxB = inboxB;
            this.sourceA = sourceA;
            this.sourceB = sourceB;
            this.memory = memory;
            this.size = size;
        }

        public void roundTrip()
        {
            sequence++;
            write(a, sourceA, inboxB);
            awaitSequence(inboxB);
            write(b, sourceB, inboxA);
            awaitSequence(inboxA);
        }

        private void write(final QueuePair qp, final MemorySegment source, final long remoteAddress)
        {
            source.set(JAVA_LONG, size - Long.BYTES, sequence);
            final int flags = SendFlags.INLINE | (sequence % SIGNAL_EVERY == 0 ? SendFlags.SIGNALED : 0);
            batch.clear().add().write(sequence, source.address(), size, 0, remoteAddress, rkey, flags);
            final int result = qp.postSend(batch);
            if (result != PostResult.OK)
            {
                throw new IllegalStateException("post failed: " + PostResult.toString(result));
            }
            if ((flags & SendFlags.SIGNALED) != 0)
            {
                outstandingSignaled++;
            }
            reap();
        }

        private void awaitSequence(final long inbox)
        {
            final long offset = inbox - memory.address() + size - Long.BYTES;
            final long deadline = System.nanoTime() + ARRIVAL_TIMEOUT_NS;
            while ((long)LONG_ACQUIRE.getAcquire(memory, offset) != sequence)
            {
                if (System.nanoTime() > deadline)
                {
                    throw new IllegalStateException("WRITE " + sequence + " did not arrive within 5 s");
                }
                Thread.onSpinWait();
            }
        }

        private void reap()
        {
            outstandingSignaled -= WriteCompletions.reap(cq, completions);
        }

        public void drain()
        {
            final long deadline = System.nanoTime() + ARRIVAL_TIMEOUT_NS;
            while (outstandingSignaled > 0 && System.nanoTime() < deadline)
            {
                reap();
            }
        }

        long sequence()
        {
            return sequence;
        }
    }

    private static int intArgument(final String[] args, final int index, final String flag, final int min)
    {
        if (index >= args.length)
        {
            fail(flag + " needs a value");
        }
        try
        {
            final int value = Integer.parseInt(args[index]);
            if (value < min)
            {
                fail(flag + " must be >= " + min + ": " + value);
            }
            return value;
        }
        catch (final NumberFormatException ex)
        {
            fail(flag + " must be a whole number: " + args[index]);
            return 0;
        }
    }

    private static void fail(final String message)
    {
        final PrintStream err = System.err;
        err.println("VerbsWriteLatency: " + message);
        System.exit(2);
    }
}
