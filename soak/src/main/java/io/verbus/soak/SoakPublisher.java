package io.verbus.soak;

import io.aeron.logbuffer.BufferClaim;
import io.verbus.Publication;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.driver.IdleStrategies;
import io.verbus.media.rdma.RdmaCounters;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.status.CountersReader;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * The soak's long-lived publisher process for one provider: one stream per {@link SoakLanes lane} on one control
 * endpoint, one thread per writer, each rate-capped or flat out.
 * <pre>
 *   SoakPublisher &lt;verbus-dir&gt; &lt;channel-keys&gt; &lt;stream-base&gt; [--subscribers=n] [--rates=r0,r1,r2,r3]
 *                 [--inject=lost@N,duplicate@N,reorder@N,corrupt@N] [--stat-ms=n]
 * </pre>
 * Prints {@code PORT p}, waits until n subscribers are connected on every lane, prints {@code STARTED}, then every
 * stat period {@code STAT source:published:bytes ...}. On {@code STOP} (stdin) its writers stop and it prints
 * {@code FINAL source:count ...}; on {@code EXIT} it closes and exits 0. {@code ERROR ...} reports a failure.
 * {@code --inject} is the test hook that proves the soak can fail: writer 0 (lane 0) then skips, repeats, swaps
 * or corrupts the message with that sequence.
 */
public final class SoakPublisher
{
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(120);

    private final List<Writer> writers = new ArrayList<>();
    private volatile boolean running = true;

    private SoakPublisher()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length < 3)
        {
            System.err.println("usage: SoakPublisher <verbus-dir> <channel-keys> <stream-base> [--subscribers=n] " +
                "[--rates=r0,r1,r2,r3] [--inject=kind@seq,...] [--stat-ms=n]");
            System.exit(2);
        }
        System.exit(new SoakPublisher().run(args));
    }

    private int run(final String[] args) throws Exception
    {
        final String keys = args[1];
        final int streamBase = Integer.parseInt(args[2]);
        int subscribers = 1;
        long[] rates = new long[SoakLanes.WRITERS.size()];
        String inject = "";
        long statMs = 250;
        for (int i = 3; i < args.length; i++)
        {
            final String value = args[i].substring(args[i].indexOf('=') + 1);
            if (args[i].startsWith("--subscribers="))
            {
                subscribers = Integer.parseInt(value);
            }
            else if (args[i].startsWith("--rates="))
            {
                rates = SoakOptions.parseLongs(value, rates.length);
            }
            else if (args[i].startsWith("--inject="))
            {
                inject = value;
            }
            else if (args[i].startsWith("--stat-ms="))
            {
                statMs = Long.parseLong(value);
            }
            else
            {
                throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(args[0]).threadingMode(ThreadingMode.SHARED)
            .idleStrategy(IdleStrategies.BACKOFF).errorHandler((ex) -> println("DRIVER-ERROR " + ex))))
        {
            final Publication[] publications = addPublications(verbus, keys, streamBase);
            if (!awaitSubscribers(verbus.countersReader(), subscribers * SoakLanes.LANES))
            {
                return 1;
            }
            println("STARTED");
            for (final SoakLanes.Writer writer : SoakLanes.WRITERS)
            {
                final Writer thread = new Writer(writer, publications[writer.lane()], rates[writers.size()],
                    0 == writers.size() ? Injections.parse(inject) : Injections.NONE);
                writers.add(thread);
                thread.start();
            }
            reportUntilStopped(statMs);
            for (final Writer writer : writers)
            {
                writer.join();
            }
            final StringBuilder line = new StringBuilder("FINAL");
            for (final Writer writer : writers)
            {
                line.append(' ').append(writer.spec.source()).append(':').append(writer.published.get());
            }
            println(stat());
            println(line.toString());
            awaitLine("EXIT");
        }
        return 0;
    }

    private static Publication[] addPublications(final Verbus verbus, final String keys, final int streamBase)
    {
        final Publication[] publications = new Publication[SoakLanes.LANES];
        String endpoint = "127.0.0.1:0";
        for (int lane = 0; lane < SoakLanes.LANES; lane++)
        {
            final String channel = "rdma:endpoint=" + endpoint + "|" + keys;
            publications[lane] = SoakLanes.exclusive(lane) ?
                verbus.addExclusivePublication(channel, streamBase + lane) :
                verbus.addPublication(channel, streamBase + lane);
            if (0 == lane)
            {
                // Every lane on the one control endpoint: it hands each connection to its stream's publication.
                final int port = controlPort(verbus.countersReader());
                endpoint = "127.0.0.1:" + port;
                println("PORT " + port);
            }
        }
        return publications;
    }

    private void reportUntilStopped(final long statMs) throws IOException
    {
        final Thread stdin = Thread.ofPlatform().daemon().start(() ->
        {
            awaitLine("STOP");
            running = false;
        });
        while (running)
        {
            println(stat());
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(statMs));
        }
        stdin.interrupt();
    }

    private String stat()
    {
        final StringBuilder line = new StringBuilder("STAT");
        for (final Writer writer : writers)
        {
            line.append(' ').append(writer.spec.source()).append(':').append(writer.published.get()).append(':')
                .append(writer.bytes.get());
        }
        return line.toString();
    }

    private boolean awaitSubscribers(final CountersReader counters, final int connections)
    {
        final long deadlineNs = System.nanoTime() + CONNECT_TIMEOUT_NS;
        while (subscriberConnections(counters) < connections)
        {
            if (System.nanoTime() > deadlineNs)
            {
                println("ERROR only " + subscriberConnections(counters) + " of " + connections +
                    " subscriber connections after " + TimeUnit.NANOSECONDS.toSeconds(CONNECT_TIMEOUT_NS) + " s");
                return false;
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
        }
        return true;
    }

    static long subscriberConnections(final CountersReader counters)
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

    static int controlPort(final CountersReader counters)
    {
        final int[] port = { -1 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (RdmaCounters.CONTROL_PORT_TYPE_ID == typeId)
            {
                port[0] = (int)counters.getCounterValue(counterId);
            }
        });
        return port[0];
    }

    static void awaitLine(final String expected)
    {
        try
        {
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while (null != (line = in.readLine()) && !expected.equals(line.trim()))
            {
                // wait for the orchestrator's word
            }
        }
        catch (final IOException ignore)
        {
            // stdin gone: the orchestrator is gone, carry on as told
        }
    }

    static synchronized void println(final String line)
    {
        System.out.println(line);
        System.out.flush();
    }

    /** The test hook's faults, by sequence of writer 0. */
    record Injections(long lost, long duplicate, long reorder, long corrupt)
    {
        static final Injections NONE = new Injections(-1, -1, -1, -1);

        static Injections parse(final String spec)
        {
            long lost = -1;
            long duplicate = -1;
            long reorder = -1;
            long corrupt = -1;
            for (final String item : spec.split(","))
            {
                if (item.isBlank())
                {
                    continue;
                }
                final String kind = item.substring(0, item.indexOf('@'));
                final long at = Long.parseLong(item.substring(item.indexOf('@') + 1));
                switch (kind)
                {
                    case "lost" -> lost = at;
                    case "duplicate" -> duplicate = at;
                    case "reorder" -> reorder = at;
                    case "corrupt" -> corrupt = at;
                    default -> throw new IllegalArgumentException("unknown injection " + item);
                }
            }
            return new Injections(lost, duplicate, reorder, corrupt);
        }

        boolean any(final long sequence)
        {
            return sequence == lost || sequence == duplicate || sequence == reorder || sequence == corrupt;
        }
    }

    /** One writer thread: sends its source's sequence until told to stop, within its rate. */
    private final class Writer extends Thread
    {
        final SoakLanes.Writer spec;
        final AtomicLong published = new AtomicLong();
        final AtomicLong bytes = new AtomicLong();
        private final Publication publication;
        private final long rate;
        private final Injections injections;
        private final ExpandableArrayBuffer message = new ExpandableArrayBuffer(SoakMessages.MAX_LENGTH);
        private final BufferClaim claim = new BufferClaim();
        private final MessageStream.Crc crc = new MessageStream.Crc();
        private final BackoffIdleStrategy idle = new BackoffIdleStrategy(
            10, 20, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(200));
        private long abortedFor = -1;

        Writer(final SoakLanes.Writer spec, final Publication publication, final long rate, final Injections injections)
        {
            super("soak-writer-" + spec.lane() + "-" + spec.thread());
            this.spec = spec;
            this.publication = publication;
            this.rate = rate;
            this.injections = injections;
        }

        public void run()
        {
            try
            {
                send();
            }
            catch (final Throwable ex)
            {
                println("ERROR writer " + spec + ": " + ex);
            }
        }

        private void send()
        {
            final long startNs = System.nanoTime();
            long sequence = 0;
            while (running)
            {
                if (rate > 0 && sequence >= (System.nanoTime() - startNs) * rate / 1_000_000_000L)
                {
                    LockSupport.parkNanos(100_000);
                    continue;
                }
                if (injections.any(sequence))
                {
                    sequence = inject(sequence);
                    continue;
                }
                final long result = sendOne(sequence);
                if (result > 0)
                {
                    sequence++;
                    published.lazySet(sequence);
                    idle.reset();
                }
                else if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
                {
                    println("ERROR writer " + spec + " publication returned " + result + " at " + sequence);
                    return;
                }
                else
                {
                    idle.idle();
                }
            }
        }

        /** @return > 0 when message {@code sequence} went out (its bytes counted), else the publication's code. */
        private long sendOne(final long sequence)
        {
            final int length = spec.sizes().lengthFor(spec.source(), sequence);
            if (SoakLanes.Send.CLAIM == spec.send())
            {
                final long result = publication.tryClaim(length, claim);
                if (result > 0)
                {
                    if (sequence % SoakLanes.ABORT_EVERY == 0 && abortedFor != sequence)
                    {
                        abortedFor = sequence;
                        claim.buffer().setMemory(claim.offset(), length, (byte)0x5A);
                        claim.abort();
                        return Publication.ADMIN_ACTION;
                    }
                    SoakMessages.encode(claim.buffer(), claim.offset(), spec.source(), sequence, spec.sizes(), crc);
                    claim.commit();
                    bytes.lazySet(bytes.get() + length);
                }
                return result;
            }
            SoakMessages.encode(message, 0, spec.source(), sequence, spec.sizes(), crc);
            return offer(length);
        }

        private long offer(final int length)
        {
            final long result = publication.offer(message, 0, length);
            if (result > 0)
            {
                bytes.lazySet(bytes.get() + length);
            }
            return result;
        }

        private void offerUntilSent(final long sequence, final boolean corrupt)
        {
            final int length = SoakMessages.encode(message, 0, spec.source(), sequence, spec.sizes(), crc);
            if (corrupt)
            {
                SoakMessages.corrupt(message, 0, length);
            }
            while (offer(length) <= 0 && running)
            {
                idle.idle();
            }
        }

        /** Sends the fault planned at {@code sequence}; returns the next sequence. */
        private long inject(final long sequence)
        {
            println("INJECT at " + sequence + " " + injections);
            if (sequence == injections.lost())
            {
                published.lazySet(sequence + 1); // counted as sent: the subscribers must miss it
                return sequence + 1;
            }
            if (sequence == injections.reorder())
            {
                offerUntilSent(sequence + 1, false);
                offerUntilSent(sequence, false);
                published.lazySet(sequence + 2);
                return sequence + 2;
            }
            offerUntilSent(sequence, sequence == injections.corrupt());
            if (sequence == injections.duplicate())
            {
                offerUntilSent(sequence, false);
            }
            published.lazySet(sequence + 1);
            return sequence + 1;
        }
    }
}
