package io.verbus;

import io.aeron.FragmentAssembler;
import io.aeron.exceptions.DriverTimeoutException;
import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.DirectBuffer;
import org.agrona.collections.Int2ObjectHashMap;
import org.agrona.concurrent.UnsafeBuffer;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The processes of {@code StandaloneDriverCrossProcessTest}: a standalone driver, and clients attached to it that
 * publish or check a stream, watch for the driver's death, or hold a counter. Each prints one line per milestone for
 * the test to wait on, and exits 0 on success. The publisher, subscriber and watcher take an optional last argument,
 * the channel (default {@code ipc}; {@code aeron:ipc} goes through the driver's Aeron media driver).
 * <p>
 * Messages: {@code long sequence} (per publication, from 0), then {@code length - 8} bytes, byte i being
 * {@code (byte)(sequence * 31 + i)}; lengths cycle from 8 to 407 bytes, and every 1000th message is 3000 bytes long
 * (fragmented over the 1408-byte MTU). The subscriber checks every byte and that each session's sequence goes up by
 * one, and both sides print a checksum over every payload byte.
 */
public final class StandaloneDriverChild
{
    private StandaloneDriverChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final String role = args[0];
        final String dir = args[1];
        switch (role)
        {
            case "driver" -> runDriver(dir, Long.parseLong(args[2]));
            case "aeron-driver" -> runAeronDriver(dir);
            case "publisher" -> runPublisher(dir, Integer.parseInt(args[2]), Long.parseLong(args[3]),
                channel(args, 4));
            case "subscriber" -> runSubscriber(dir, Integer.parseInt(args[2]), Long.parseLong(args[3]),
                Integer.parseInt(args[4]), channel(args, 5));
            case "victim" -> runVictim(dir);
            case "watcher" -> runWatcher(dir, Long.parseLong(args[2]), channel(args, 3));
            case "counter" -> runCounter(dir);
            default -> throw new IllegalArgumentException(role);
        }
    }

    private static String channel(final String[] args, final int index)
    {
        return args.length > index ? args[index] : "ipc";
    }

    private static void runDriver(final String dir, final long clientTimeoutMs) throws Exception
    {
        try (MediaDriver ignored = MediaDriver.launch(new Verbus.Context().dir(dir)
            .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff").termLength(1024 * 1024)
            .clientLivenessTimeoutNs(TimeUnit.MILLISECONDS.toNanos(clientTimeoutMs))))
        {
            System.out.println("DRIVER READY");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    /** A plain Aeron media driver in {@code dir}, for Verbus processes to attach to (Context.aeronDirectoryName). */
    private static void runAeronDriver(final String dir) throws Exception
    {
        try (io.aeron.driver.MediaDriver ignored = io.aeron.driver.MediaDriver.launch(
            new io.aeron.driver.MediaDriver.Context().aeronDirectoryName(dir)
                .threadingMode(io.aeron.driver.ThreadingMode.SHARED)
                .sharedIdleStrategy(new org.agrona.concurrent.SleepingMillisIdleStrategy(1))
                .ipcTermBufferLength(64 * 1024).dirDeleteOnStart(true)))
        {
            System.out.println("AERON DRIVER READY");
            System.out.flush();
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    static int messageLength(final long sequence)
    {
        return 0 == sequence % 1000 && sequence > 0 ? 3000 : 8 + (int)(sequence % 400);
    }

    static void fill(final UnsafeBuffer buffer, final int offset, final long sequence, final int length)
    {
        buffer.putLong(offset, sequence);
        for (int i = 8; i < length; i++)
        {
            buffer.putByte(offset + i, (byte)(sequence * 31 + i));
        }
    }

    private static long checksum(final DirectBuffer buffer, final int offset, final int length)
    {
        long sum = 0;
        for (int i = 0; i < length; i++)
        {
            sum = sum * 31 + buffer.getByte(offset + i);
        }
        return sum;
    }

    /**
     * An exclusive and a concurrent publication on the stream, taking turns, each alternating tryClaim and offer
     * (offer for messages longer than one frame), {@code count} messages in all.
     */
    private static void runPublisher(final String dir, final int streamId, final long count, final String channel)
    {
        try (Verbus verbus = Verbus.connect(new Verbus.Context().dir(dir)))
        {
            final ExclusivePublication exclusive = verbus.addExclusivePublication(channel, streamId);
            final Publication concurrent = verbus.addPublication(channel, streamId);
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!(exclusive.isConnected() && concurrent.isConnected()))
            {
                check(System.nanoTime() < deadline, "no subscriber within 60 s");
                Thread.onSpinWait();
            }
            System.out.println("PUBLISHING");
            System.out.flush();
            final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
            final BufferClaim claim = new BufferClaim();
            long exclusiveSequence = 0;
            long concurrentSequence = 0;
            long checksum = 0;
            final long start = System.nanoTime();
            final long sendDeadline = start + TimeUnit.MINUTES.toNanos(20);
            for (long i = 0; i < count; i++)
            {
                final boolean useExclusive = 0 == (i & 1);
                final long sequence = useExclusive ? exclusiveSequence : concurrentSequence;
                final int length = messageLength(sequence);
                long result;
                do
                {
                    final Publication publication = useExclusive ? exclusive : concurrent;
                    if (0 == (sequence & 1) && length <= publication.maxPayloadLength())
                    {
                        result = publication.tryClaim(length, claim);
                        if (result > 0)
                        {
                            fill((UnsafeBuffer)claim.buffer(), claim.offset(), sequence, length);
                            claim.commit();
                        }
                    }
                    else
                    {
                        fill(buffer, 0, sequence, length);
                        result = publication.offer(buffer, 0, length);
                    }
                    check(result > 0 || result == Publication.BACK_PRESSURED || result == Publication.ADMIN_ACTION,
                        "offer failed: " + result);
                    check(System.nanoTime() < sendDeadline, "publisher stuck at message " + i);
                }
                while (result < 0);
                fill(buffer, 0, sequence, length);
                checksum += checksum(buffer, 0, length);
                if (useExclusive)
                {
                    exclusiveSequence++;
                }
                else
                {
                    concurrentSequence++;
                }
            }
            final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            System.out.println("SENT " + count + " CHECKSUM " + checksum + " MS " + elapsedMs);
            System.out.flush();
            // Stay until the subscriber has it all: closing now would end the stream with the messages still readable,
            // but let the subscriber finish on a live log.
            final long lingerDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
            while (exclusive.isConnected() && System.nanoTime() < lingerDeadline)
            {
                sleep(10);
            }
        }
    }

    /** Receives {@code count} messages from {@code images} sessions, checking every byte and each sequence. */
    private static void runSubscriber(
        final String dir, final int streamId, final long count, final int images, final String channel)
    {
        try (Verbus verbus = Verbus.connect(new Verbus.Context().dir(dir)))
        {
            final Subscription subscription = verbus.addSubscription(channel, streamId);
            System.out.println("SUBSCRIBED");
            System.out.flush();
            final Int2ObjectHashMap<long[]> nextSequence = new Int2ObjectHashMap<>();
            final long[] received = new long[1];
            final long[] checksum = new long[1];
            final AtomicReference<String> error = new AtomicReference<>();
            final FragmentHandler handler = new FragmentAssembler((buffer, offset, length, header) ->
            {
                final long sequence = buffer.getLong(offset);
                final long[] expected = nextSequence.computeIfAbsent(header.sessionId(), (k) -> new long[1]);
                if (sequence != expected[0] && null == error.get())
                {
                    error.set("session " + header.sessionId() + ": sequence " + sequence + ", expected " + expected[0]);
                }
                expected[0] = sequence + 1;
                if (length != messageLength(sequence) && null == error.get())
                {
                    error.set("sequence " + sequence + ": length " + length + ", expected " + messageLength(sequence));
                }
                for (int i = 8; i < length; i++)
                {
                    if (buffer.getByte(offset + i) != (byte)(sequence * 31 + i) && null == error.get())
                    {
                        error.set("sequence " + sequence + ": byte " + i + " corrupt");
                    }
                }
                checksum[0] += checksum(buffer, offset, length);
                received[0]++;
            });
            final long start = System.nanoTime();
            final long deadline = start + TimeUnit.MINUTES.toNanos(20);
            while (received[0] < count && null == error.get())
            {
                if (0 == subscription.poll(handler, 256))
                {
                    check(System.nanoTime() < deadline, "received only " + received[0] + " of " + count);
                    check(!subscription.isClosed(), "subscription closed after " + received[0] + " messages");
                    Thread.onSpinWait();
                }
            }
            check(null == error.get(), error.get());
            check(nextSequence.size() == images, "saw " + nextSequence.size() + " sessions, expected " + images);
            final long elapsedMs = (System.nanoTime() - start) / 1_000_000;
            System.out.println("RECEIVED " + received[0] + " CHECKSUM " + checksum[0] + " MS " + elapsedMs);
            System.out.flush();
        }
    }

    /**
     * A client that is about to be killed: subscribes to stream 1 and never polls (so it holds back stream 1's
     * publishers by a window), and publishes on stream 2.
     */
    private static void runVictim(final String dir) throws Exception
    {
        final Verbus verbus = Verbus.connect(new Verbus.Context().dir(dir));
        verbus.addSubscription("ipc", 1);
        final Publication publication = verbus.addPublication("ipc", 2);
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
        System.out.println("VICTIM READY");
        System.out.flush();
        for (long i = 0; ; i++)
        {
            buffer.putLong(0, i);
            publication.offer(buffer, 0, 8);
            Thread.sleep(1);
        }
    }

    /** A client that adds a counter, sets it, prints "COUNTER id" and waits to be killed. */
    private static void runCounter(final String dir) throws Exception
    {
        final Verbus verbus = Verbus.connect(new Verbus.Context().dir(dir));
        final org.agrona.concurrent.status.AtomicCounter counter = verbus.addCounter(1001, "child process counter");
        counter.set(77);
        System.out.println("COUNTER " + counter.id());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }

    /** A client with a publication and a subscription that waits for its driver to go away, and says how it saw it. */
    private static void runWatcher(final String dir, final long driverTimeoutMs, final String channel)
        throws Exception
    {
        final AtomicReference<Throwable> error = new AtomicReference<>();
        final Verbus verbus = Verbus.connect(new Verbus.Context().dir(dir).driverTimeoutMs(driverTimeoutMs)
            .errorHandler((t) -> error.compareAndSet(null, t)));
        final Publication publication = verbus.addPublication(channel, 9);
        final Subscription subscription = verbus.addSubscription(channel, 9);
        System.out.println("WATCHING");
        System.out.flush();
        final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        while (!verbus.isClosed() && System.nanoTime() < deadline)
        {
            Thread.sleep(5);
        }
        final long seenAtMs = System.currentTimeMillis();
        check(verbus.isClosed(), "driver death not seen in 120 s");
        final long offer = publication.offer(new UnsafeBuffer(new byte[8]), 0, 8);
        check(Publication.CLOSED == offer, "offer after driver death returned " + offer);
        check(subscription.isClosed(), "subscription still open");
        check(error.get() instanceof DriverTimeoutException, "error handler got " + error.get());
        System.out.println("DRIVER GONE AT " + seenAtMs + " " + error.get().getMessage());
        System.out.flush();
        verbus.close();
    }

    private static void check(final boolean condition, final String message)
    {
        if (!condition)
        {
            System.out.println("FAILED: " + message);
            System.out.flush();
            System.exit(1);
        }
    }

    private static void sleep(final long millis)
    {
        try
        {
            Thread.sleep(millis);
        }
        catch (final InterruptedException ex)
        {
            Thread.currentThread().interrupt();
        }
    }
}
