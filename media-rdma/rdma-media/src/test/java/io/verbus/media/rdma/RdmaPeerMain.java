package io.verbus.media.rdma;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

/**
 * One side of a cross-process rdma test, as a plain main so it runs anywhere a JVM does (another process, a
 * network namespace, the Soft-RoCE guest):
 * <pre>
 *   RdmaPeerMain publish   &lt;verbus-dir&gt; &lt;channel&gt; &lt;stream-id&gt; &lt;count&gt;   prints "PORT n", publishes, waits for "DONE" on stdin
 *   RdmaPeerMain subscribe &lt;verbus-dir&gt; &lt;channel&gt; &lt;stream-id&gt; &lt;count&gt;   prints "RECEIVED n OK" or "FAILED why"
 * </pre>
 * Messages are {@link MessageStream}'s: sequence-numbered and checksummed, checked in order on arrival.
 */
public final class RdmaPeerMain
{
    /** Each side gives up after this many seconds (the Soft-RoCE guest under TCG needs more than the default). */
    public static final String TIMEOUT_PROP_NAME = "verbus.rdma.peer.timeout.s";
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(Long.getLong(TIMEOUT_PROP_NAME, 120));

    private RdmaPeerMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length != 5 || !("publish".equals(args[0]) || "subscribe".equals(args[0])))
        {
            System.err.println("usage: RdmaPeerMain publish|subscribe <verbus-dir> <channel> <stream-id> <count>");
            System.exit(2);
        }
        final String dir = args[1];
        final String channel = args[2];
        final int streamId = Integer.parseInt(args[3]);
        final long count = Long.parseLong(args[4]);
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir).threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping")))
        {
            final int status = "publish".equals(args[0]) ?
                publish(verbus, channel, streamId, count) : subscribe(verbus, channel, streamId, count);
            System.out.flush();
            System.exit(status);
        }
    }

    private static int publish(final Verbus verbus, final String channel, final int streamId, final long count)
        throws Exception
    {
        final Publication publication = verbus.addPublication(channel, streamId);
        System.out.println("PORT " + RdmaVerbusTest.controlPort(verbus.countersReader()));
        System.out.flush();
        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        long sequence = 0;
        while (sequence < count)
        {
            if (System.nanoTime() > deadlineNs)
            {
                System.out.println("FAILED publish stuck at " + sequence);
                return 1;
            }
            final int length = MessageStream.encode(message, sequence);
            if (publication.offer(message, 0, length) > 0)
            {
                sequence++;
            }
            else
            {
                RdmaRig.sleepMicros(50);
            }
        }
        System.out.println("PUBLISHED " + sequence);
        System.out.flush();
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while (null != (line = in.readLine()) && !"DONE".equals(line.trim()))
        {
            // wait for the test to say the subscriber is done
        }
        return 0;
    }

    private static int subscribe(final Verbus verbus, final String channel, final int streamId, final long count)
    {
        final Subscription subscription = verbus.addSubscription(channel, streamId);
        // Adopt the first sequence seen (a late joiner starts wherever the stream is) and report it.
        final MessageStream.Checker checker = new MessageStream.Checker(-1);
        final UnsafeBuffer view = new UnsafeBuffer(0, 0);
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        long first = -1;
        long firstArrivalNs = System.nanoTime(); // replaced by the first arrival's time when seen
        long nextProgress = 10_000;
        while (checker.received < count && null == checker.failure)
        {
            if (first < 0 && checker.received > 0)
            {
                first = checker.expected - checker.received;
                firstArrivalNs = System.nanoTime();
            }
            if (checker.received >= nextProgress)
            {
                System.out.println("PROGRESS " + checker.received);
                System.out.flush();
                nextProgress += 10_000;
            }
            if (System.nanoTime() > deadlineNs)
            {
                System.out.println("FAILED timed out after " + checker.received + " messages");
                return 1;
            }
            final int fragments = subscription.poll((buffer, offset, length, header) ->
            {
                view.wrap(buffer, offset, length);
                checker.onFragment(view, 0, length);
            }, 256);
            if (0 == fragments)
            {
                RdmaRig.sleepMicros(100);
            }
        }
        if (null != checker.failure)
        {
            System.out.println("FAILED " + checker.failure);
            return 1;
        }
        first = checker.expected - checker.received;
        System.out.println("RECEIVED " + checker.received + " OK first=" + first + " in " +
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - firstArrivalNs) + " ms");
        return 0;
    }
}
