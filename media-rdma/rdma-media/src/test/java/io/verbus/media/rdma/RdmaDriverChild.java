package io.verbus.media.rdma;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.BufferClaim;
import io.verbus.ExclusivePublication;
import io.verbus.MediaDriver;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * The processes of {@code RdmaStandaloneDriverCrossProcessTest}: a standalone driver with the rdma media on its
 * class path, and clients attached to it ({@code Verbus.connect}) that publish or check an {@code rdma:} stream:
 * <pre>
 *   RdmaDriverChild driver     &lt;dir&gt; &lt;client-timeout-ms&gt;
 *       prints "DRIVER READY"
 *   RdmaDriverChild publisher  &lt;dir&gt; &lt;channel&gt; &lt;stream-id&gt; &lt;count&gt;
 *       prints "PORT n" (its control port, from the driver's counters), then "CONNECTED", waits for "GO" on stdin,
 *       prints "STARTING rdma-subscribers=n" (the rdma subscribers its publication admitted), sends, prints
 *       "SENT n CRCSUM s MS t" and stays until "DONE" (or the end of stdin)
 *   RdmaDriverChild subscriber &lt;dir&gt; &lt;channel&gt; &lt;stream-id&gt; &lt;count&gt; [stop-after]
 *       prints "IMAGE" when it sees the publisher, then "RECEIVED n CRCSUM s MS t"; with stop-after, it stops
 *       polling after that many messages, prints "STALLED n" and waits to be killed
 * </pre>
 * Messages are {@link MessageStream}'s (mixed sizes, sequence and CRC32 checked on each). The sums of the CRC32s
 * on both sides must agree. Failures print one line starting with FAILED and exit 1.
 */
public final class RdmaDriverChild
{
    private static final long TIMEOUT_NS = TimeUnit.MINUTES.toNanos(5);

    private RdmaDriverChild()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final String role = args[0];
        final String dir = args[1];
        switch (role)
        {
            case "driver" -> runDriver(dir, Long.parseLong(args[2]));
            case "publisher" -> runPublisher(dir, args[2], Integer.parseInt(args[3]), Long.parseLong(args[4]));
            case "subscriber" -> runSubscriber(dir, args[2], Integer.parseInt(args[3]), Long.parseLong(args[4]),
                args.length > 5 ? Long.parseLong(args[5]) : -1);
            default -> throw new IllegalArgumentException(role);
        }
    }

    private static void runDriver(final String dir, final long clientTimeoutMs) throws Exception
    {
        try (MediaDriver ignored = MediaDriver.launch(new Verbus.Context().dir(dir)
            .threadingMode(ThreadingMode.SHARED).idleStrategy("backoff")
            .clientLivenessTimeoutNs(TimeUnit.MILLISECONDS.toNanos(clientTimeoutMs))
            .errorHandler((ex) -> println("DRIVER ERROR " + ex))))
        {
            println("DRIVER READY");
            Thread.sleep(Long.MAX_VALUE);
        }
    }

    private static void runPublisher(final String dir, final String channel, final int streamId, final long count)
        throws Exception
    {
        final BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Verbus verbus = Verbus.connect(new Verbus.Context().dir(dir)))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(channel, streamId);
            println("PORT " + RdmaVerbusTest.controlPort(verbus.countersReader()));
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (!publication.isConnected())
            {
                check(System.nanoTime() < deadlineNs, "no subscriber connected");
                Thread.sleep(1);
            }
            println("CONNECTED");
            check("GO".equals(stdin.readLine()), "no GO on stdin");
            println("STARTING rdma-subscribers=" + rdmaSubscribers(verbus.countersReader()));

            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_LENGTH);
            final MessageStream.Crc crc = new MessageStream.Crc();
            final BufferClaim claim = new BufferClaim();
            long crcSum = 0;
            final long startNs = System.nanoTime();
            for (long sequence = 0; sequence < count; sequence++)
            {
                final int length = MessageStream.encode(message, sequence);
                long result;
                do
                {
                    if (0 == (sequence & 1)) // alternately tryClaim and offer
                    {
                        result = publication.tryClaim(length, claim);
                        if (result > 0)
                        {
                            claim.buffer().putBytes(claim.offset(), message, 0, length);
                            claim.commit();
                        }
                    }
                    else
                    {
                        result = publication.offer(message, 0, length);
                    }
                    check(result > 0 || Publication.BACK_PRESSURED == result || Publication.ADMIN_ACTION == result,
                        "offer of " + sequence + " returned " + result);
                    check(System.nanoTime() < deadlineNs + TIMEOUT_NS, "stuck at message " + sequence +
                        ", position " + publication.position() + ", limit " + publication.positionLimit());
                }
                while (result < 0);
                crcSum += crc.of(message, 0, length);
            }
            println("SENT " + count + " CRCSUM " + crcSum + " MS " + (System.nanoTime() - startNs) / 1_000_000);
            // Stay until told: closing now would end the stream, which the subscribers would see only after draining.
            final String line = stdin.readLine();
            check(null == line || "DONE".equals(line), "unexpected '" + line + "' on stdin");
        }
    }

    private static void runSubscriber(
        final String dir, final String channel, final int streamId, final long count, final long stopAfter)
        throws Exception
    {
        try (Verbus verbus = Verbus.connect(new Verbus.Context().dir(dir)))
        {
            final Subscription subscription = verbus.addSubscription(channel, streamId);
            final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
            while (0 == subscription.imageCount())
            {
                check(System.nanoTime() < deadlineNs, "no image");
                Thread.sleep(1);
            }
            println("IMAGE");
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final MessageStream.Crc crc = new MessageStream.Crc();
            final long[] crcSum = new long[1];
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
            {
                checker.onMessage(buffer, offset, length);
                crcSum[0] += crc.of(buffer, offset, length);
            });
            final long target = stopAfter >= 0 ? stopAfter : count;
            final long startNs = System.nanoTime();
            while (checker.received < target && null == checker.failure)
            {
                if (0 == subscription.poll(assembler, (int)Math.min(256, target - checker.received)))
                {
                    check(System.nanoTime() < deadlineNs + TIMEOUT_NS, "received only " + checker.received);
                    check(0 < subscription.imageCount(), "image gone after " + checker.received + " messages");
                    Thread.onSpinWait();
                }
            }
            check(null == checker.failure, checker.failure);
            if (stopAfter >= 0)
            {
                println("STALLED " + checker.received);
                Thread.sleep(Long.MAX_VALUE);
            }
            println("RECEIVED " + checker.received + " CRCSUM " + crcSum[0] + " MS " +
                (System.nanoTime() - startNs) / 1_000_000);
        }
    }

    /** @return the rdma subscribers admitted by the publications whose counters these are. */
    static long rdmaSubscribers(final CountersReader counters)
    {
        final long[] count = { 0 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (RdmaCounters.CONNECTIONS_TYPE_ID == typeId && label.startsWith("rdma subscribers"))
            {
                count[0] += counters.getCounterValue(counterId);
            }
        });
        return count[0];
    }

    private static void println(final String line)
    {
        System.out.println(line);
        System.out.flush();
    }

    private static void check(final boolean condition, final String message)
    {
        if (!condition)
        {
            println("FAILED: " + message);
            System.exit(1);
        }
    }
}
