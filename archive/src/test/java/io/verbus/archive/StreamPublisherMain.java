package io.verbus.archive;

import io.verbus.Publication;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;

/**
 * The publisher process of the cross-process archive tests: publishes a {@link MessageStream} (the rarely
 * fragmented profile) on a Verbus channel.
 * <pre>
 *   StreamPublisherMain &lt;verbus-dir&gt; &lt;channel&gt; &lt;stream-id&gt; &lt;count&gt;
 *       &lt;messages-per-second, 0 = unthrottled&gt;
 * </pre>
 * Prints {@code PORT p SESSION s}, waits for {@code GO} on stdin, publishes (printing {@code AT n} every tenth),
 * prints {@code PUBLISHED n POSITION p MS t}, then waits for {@code DONE}.
 */
public final class StreamPublisherMain
{
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(600);

    private StreamPublisherMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final String dir = args[0];
        final String channel = args[1];
        final int streamId = Integer.parseInt(args[2]);
        final long count = Long.parseLong(args[3]);
        final long messagesPerSecond = Long.parseLong(args[4]);
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir).threadingMode(ThreadingMode.SHARED)
            .idleStrategy("backoff")))
        {
            final Publication publication = verbus.addPublication(channel, streamId);
            System.out.println("PORT " + StreamPublisherMainPort.of(verbus) + " SESSION " + publication.sessionId());
            System.out.flush();
            awaitLine(in, "GO");

            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
            final long startNs = System.nanoTime();
            final long deadlineNs = startNs + TIMEOUT_NS;
            final long tenth = Math.max(1, count / 10);
            long sequence = 0;
            while (sequence < count)
            {
                if (messagesPerSecond > 0)
                {
                    final long dueNs = startNs + sequence * 1_000_000_000L / messagesPerSecond;
                    if (System.nanoTime() < dueNs)
                    {
                        LockSupport.parkNanos(20_000);
                        continue;
                    }
                }
                final int length = MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED);
                if (publication.offer(message, 0, length) > 0)
                {
                    sequence++;
                    if (sequence % tenth == 0)
                    {
                        System.out.println("AT " + sequence);
                        System.out.flush();
                    }
                }
                else if (System.nanoTime() > deadlineNs)
                {
                    System.out.println("FAILED stuck at " + sequence);
                    System.exit(1);
                }
                else
                {
                    // Back pressured: give the two cores to the subscribers instead of spinning.
                    Thread.yield();
                }
            }
            final long elapsedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs);
            System.out.println("PUBLISHED " + sequence + " POSITION " + publication.position() + " MS " + elapsedMs);
            System.out.flush();
            awaitLine(in, "DONE");
        }
        System.exit(0);
    }

    private static void awaitLine(final BufferedReader in, final String expected) throws Exception
    {
        String line;
        while (null != (line = in.readLine()) && !expected.equals(line.trim()))
        {
            // only the expected word moves on
        }
    }
}
