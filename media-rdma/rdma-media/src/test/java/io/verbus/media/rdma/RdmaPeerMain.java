package io.verbus.media.rdma;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.BufferClaim;
import io.verbus.EventIdleStrategy;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.driver.IdleStrategies;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.status.CountersReader;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.LockSupport;

/**
 * One side of a cross-process rdma test, as a plain main so it runs anywhere a JVM does (another process, a
 * network namespace, the Soft-RoCE guest):
 * <pre>
 *   RdmaPeerMain publish   &lt;verbus-dir&gt; &lt;channel&gt; &lt;stream-id&gt; &lt;count&gt; [options]
 *       prints "PORT n", publishes, prints "PUBLISHED n" (or "FAILED why"), waits for "DONE" on stdin
 *   RdmaPeerMain subscribe &lt;verbus-dir&gt; &lt;channel&gt; &lt;stream-id&gt; &lt;count&gt; [options]
 *       prints "RECEIVED n OK first=s in t ms immediates=i" (i: WRITE_WITH_IMM completions, commit=imm) or
 *       "FAILED why"; a join=recent subscription first prints
 *       "CATCH-UP bytes=b gap=g ms=t" (what it READ from the publisher's log, what was no longer held, how long)
 * </pre>
 * Messages are {@link MessageStream}'s: sequence-numbered and CRC32-checked, checked in order on arrival (rejoined
 * by a {@link FragmentAssembler}). Options:
 * <pre>
 *   --exclusive               an ExclusivePublication (direct mode on rdma: the publishing thread sends)
 *   --send=offer|flush|claim  offer, retrying on back pressure; the same calling flush() on back pressure;
 *                             tryClaim/commit, with every {@value #ABORT_EVERY}th claim aborted once first
 *   --sizes=mixed|fragmented  the {@link MessageStream.Sizes} profile (both sides must agree)
 *   --subscribers=n           the publisher waits until n subscribers are admitted before its first message
 *   --stall-ms=n              fail when no message went out (publisher) or came in (subscriber) for this long
 *   --late-joiner             (subscriber) joins mid-stream: reads from its first message through message count-1
 *   --late-joiner-by=n        (publisher) if one more subscriber has not been admitted by message n, wait for it
 *   --driver-idle=name        the driver's idle strategy (default sleeping)
 *   --pause-every=n           (publisher) pauses after every n messages, so that a subscriber runs out of data
 *                             and (idle=event) blocks until the next message wakes it
 *   --pause-ms=n              how long (default {@value #PAUSE_MS_DEFAULT}); longer than the subscriber takes to drain
 *                             what the window let the publisher get ahead by
 *   --threading=mode          the driver's threading mode: shared (default), dedicated, or invoker, where the driver
 *                             runs only when this process's own loops call {@code Verbus.invoke()}, as an
 *                             application's duty cycle does: the publisher every 64 messages and on every refused
 *                             offer, the subscriber on every poll, both while they wait
 * </pre>
 * A subscriber whose channel says {@code idle=event} waits between empty polls in {@link EventIdleStrategy} (blocking
 * on the connection's completion channel), as an application would, and prints "WAKE-UPS n" (from the counters)
 * after its result; any other subscriber yields between empty polls.
 * <p>
 * Failures are reported as one line starting with FAILED, with what is needed to tell a stall from a loss: the
 * publication's position and limit, the rdma counters, and any error the driver reported.
 */
public final class RdmaPeerMain
{
    /** Each side gives up after this many seconds (the Soft-RoCE guest under TCG needs more than the default). */
    public static final String TIMEOUT_PROP_NAME = "verbus.rdma.peer.timeout.s";
    private static final long TIMEOUT_NS = TimeUnit.SECONDS.toNanos(Long.getLong(TIMEOUT_PROP_NAME, 120));
    private static final long STALL_MS_DEFAULT = 20_000;
    /** How long the publisher pauses with {@code --pause-every}, unless {@code --pause-ms} says otherwise. */
    static final long PAUSE_MS_DEFAULT = 2;
    /** In claim mode, this many messages apart a claim is aborted before the real one. */
    static final int ABORT_EVERY = 13;

    /** Invoker mode: the Verbus whose driver this process's loops run; null in the other modes. */
    private static Verbus invoked;

    /** How the publisher sends. */
    enum SendMode
    {
        OFFER, FLUSH, CLAIM
    }

    private static final class Options
    {
        boolean exclusive;
        SendMode send = SendMode.OFFER;
        MessageStream.Sizes sizes = MessageStream.Sizes.MIXED;
        int subscribers = 1;
        boolean lateJoiner;
        long lateJoinerBy = -1;
        long pauseEvery;
        ThreadingMode threading = ThreadingMode.SHARED;
        long pauseNs = TimeUnit.MILLISECONDS.toNanos(PAUSE_MS_DEFAULT);
        long stallNs = TimeUnit.MILLISECONDS.toNanos(STALL_MS_DEFAULT);
        String driverIdle = IdleStrategies.SLEEPING;

        static Options parse(final String[] args, final int from)
        {
            final Options options = new Options();
            for (int i = from; i < args.length; i++)
            {
                final String arg = args[i];
                final int eq = arg.indexOf('=');
                final String name = eq < 0 ? arg : arg.substring(0, eq);
                final String value = eq < 0 ? "" : arg.substring(eq + 1);
                switch (name)
                {
                    case "--exclusive" -> options.exclusive = true;
                    case "--send" -> options.send = SendMode.valueOf(value.toUpperCase(Locale.ROOT));
                    case "--sizes" -> options.sizes = MessageStream.Sizes.valueOf(value.toUpperCase(Locale.ROOT));
                    case "--subscribers" -> options.subscribers = Integer.parseInt(value);
                    case "--stall-ms" -> options.stallNs = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(value));
                    case "--late-joiner" -> options.lateJoiner = true;
                    case "--late-joiner-by" -> options.lateJoinerBy = Long.parseLong(value);
                    case "--driver-idle" -> options.driverIdle = value;
                    case "--pause-every" -> options.pauseEvery = Long.parseLong(value);
                    case "--pause-ms" -> options.pauseNs = TimeUnit.MILLISECONDS.toNanos(Long.parseLong(value));
                    case "--threading" -> options.threading = ThreadingMode.valueOf(value.toUpperCase(Locale.ROOT));
                    default -> throw new IllegalArgumentException("unknown option " + arg);
                }
            }
            return options;
        }
    }

    private RdmaPeerMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        if (args.length < 5 || !("publish".equals(args[0]) || "subscribe".equals(args[0])))
        {
            System.err.println("usage: RdmaPeerMain publish|subscribe <verbus-dir> <channel> <stream-id> <count> " +
                "[--exclusive] [--send=offer|flush|claim] [--sizes=mixed|fragmented] [--subscribers=n] " +
                "[--stall-ms=n] [--late-joiner] [--late-joiner-by=n] [--driver-idle=name] [--pause-every=n] " +
                "[--pause-ms=n] [--threading=shared|dedicated|invoker]");
            System.exit(2);
        }
        final String dir = args[1];
        final String channel = args[2];
        final int streamId = Integer.parseInt(args[3]);
        final long count = Long.parseLong(args[4]);
        final Options options = Options.parse(args, 5);
        final AtomicReference<String> firstError = new AtomicReference<>();
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir).threadingMode(options.threading)
            .idleStrategy(options.driverIdle).errorHandler((ex) ->
            {
                firstError.compareAndSet(null, String.valueOf(ex));
                System.out.println("ERROR " + ex);
                System.out.flush();
            })))
        {
            invoked = ThreadingMode.INVOKER == options.threading ? verbus : null;
            final int status = "publish".equals(args[0]) ?
                publish(verbus, channel, streamId, count, options, firstError) :
                subscribe(verbus, channel, streamId, count, options, firstError);
            System.out.flush();
            System.exit(status);
        }
    }

    private static int publish(
        final Verbus verbus,
        final String channel,
        final int streamId,
        final long count,
        final Options options,
        final AtomicReference<String> firstError) throws Exception
    {
        final Publication publication = options.exclusive ?
            verbus.addExclusivePublication(channel, streamId) : verbus.addPublication(channel, streamId);
        final CountersReader counters = verbus.countersReader();
        System.out.println("PORT " + RdmaVerbusTest.controlPort(counters));
        System.out.flush();

        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        if (!awaitSubscribers(counters, options, deadlineNs))
        {
            return 1;
        }

        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_FRAGMENTED_LENGTH);
        final BufferClaim claim = new BufferClaim();
        final ExclusivePublication exclusive = options.exclusive ? (ExclusivePublication)publication : null;
        final long startNs = System.nanoTime();
        long lastProgressNs = startNs;
        long sequence = 0;
        long abortedFor = -1;
        long backPressured = 0;
        int length = MessageStream.encode(message, 0, 0, options.sizes);
        while (sequence < count)
        {
            if (sequence == options.lateJoinerBy && subscriberCount(counters) <= options.subscribers)
            {
                if (!awaitLateJoiner(counters, options))
                {
                    return 1;
                }
                lastProgressNs = System.nanoTime();
            }
            final long result;
            if (SendMode.CLAIM == options.send && length <= publication.maxPayloadLength())
            {
                result = publication.tryClaim(length, claim);
                if (result > 0)
                {
                    if (sequence % ABORT_EVERY == 0 && abortedFor != sequence)
                    {
                        // A claim given back: it becomes padding the subscriber must skip, and the next claim
                        // follows it.
                        abortedFor = sequence;
                        claim.buffer().setMemory(claim.offset(), length, (byte)0x5A);
                        claim.abort();
                        continue;
                    }
                    MessageStream.encode(claim.buffer(), claim.offset(), sequence, options.sizes);
                    claim.commit();
                }
            }
            else
            {
                result = publication.offer(message, 0, length);
            }

            final long nowNs = System.nanoTime();
            if (result > 0)
            {
                lastProgressNs = nowNs;
                if (++sequence < count)
                {
                    length = MessageStream.encode(message, 0, sequence, options.sizes);
                }
                if (0 == (sequence & 63))
                {
                    driverTurn();
                }
                if (options.pauseEvery > 0 && 0 == sequence % options.pauseEvery)
                {
                    LockSupport.parkNanos(options.pauseNs);
                    lastProgressNs = System.nanoTime();
                }
                continue;
            }
            if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
            {
                System.out.println("FAILED publication returned " + result + " at message " + sequence);
                return 1;
            }
            backPressured++;
            if (nowNs - lastProgressNs > options.stallNs || nowNs > deadlineNs)
            {
                reportPublisherStall(
                    nowNs, deadlineNs, lastProgressNs, sequence, result, publication, firstError, counters);
                return 1;
            }
            if (SendMode.FLUSH == options.send && null != exclusive)
            {
                exclusive.flush();
            }
            driverTurn();
            Thread.yield();
        }
        System.out.println("PUBLISHER-STATS " + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNs) +
            " ms, not accepted " + backPressured + " times, position " + publication.position());
        System.out.println("PUBLISHED " + sequence); // exactly this: the Soft-RoCE guest script matches it
        System.out.flush();
        awaitDone();
        return 0;
    }

    private static void reportPublisherStall(
        final long nowNs,
        final long deadlineNs,
        final long lastProgressNs,
        final long sequence,
        final long result,
        final Publication publication,
        final AtomicReference<String> firstError,
        final CountersReader counters)
    {
        System.out.println("FAILED publisher " + (nowNs > deadlineNs ?
            "out of time (" + TIMEOUT_PROP_NAME + ") at message " + sequence :
            "stalled at message " + sequence + " for " +
            TimeUnit.NANOSECONDS.toMillis(nowNs - lastProgressNs) + " ms") + ": last result " + result +
            ", position " + publication.position() + ", limit " + publication.positionLimit() +
            ", connected " + publication.isConnected() + ", driver error " + firstError.get() + "; " +
            rdmaCounters(counters));
    }

    /** @return true once {@code options.subscribers} subscribers are admitted, false (reported) at the deadline. */
    private static boolean awaitSubscribers(
        final CountersReader counters, final Options options, final long deadlineNs)
    {
        while (subscriberCount(counters) < options.subscribers)
        {
            if (System.nanoTime() > deadlineNs)
            {
                System.out.println("FAILED only " + subscriberCount(counters) + " of " + options.subscribers +
                    " subscribers connected");
                return false;
            }
            driverTurn();
            RdmaRig.sleepMicros(1000);
        }
        return true;
    }

    /** @return true once the late joiner is admitted too, false (reported) when it never connects. */
    private static boolean awaitLateJoiner(final CountersReader counters, final Options options)
    {
        // The late joiner is not in yet: hold here (the sender agent drives the idle writer's media).
        final long holdDeadlineNs = System.nanoTime() + TIMEOUT_NS;
        while (subscriberCount(counters) <= options.subscribers)
        {
            if (System.nanoTime() > holdDeadlineNs)
            {
                System.out.println("FAILED the late joiner never connected");
                return false;
            }
            driverTurn();
            RdmaRig.sleepMicros(1000);
        }
        return true;
    }

    /**
     * Waits for the test to say on stdin that the subscribers are done (or for stdin to close); in invoker mode the
     * driver keeps running meanwhile (heartbeats, the subscribers' statuses), the stdin read on a thread of its own.
     */
    private static void awaitDone() throws IOException
    {
        if (null == invoked)
        {
            readUntilDone();
            return;
        }
        final Thread reader = new Thread(() ->
        {
            try
            {
                readUntilDone();
            }
            catch (final IOException ex)
            {
                // stdin gone: done as well
            }
        }, "stdin-reader");
        reader.setDaemon(true);
        reader.start();
        while (reader.isAlive())
        {
            driverTurn();
            RdmaRig.sleepMicros(100);
        }
    }

    private static void readUntilDone() throws IOException
    {
        final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while (null != (line = in.readLine()) && !"DONE".equals(line.trim()))
        {
            // wait for the test to say the subscribers are done
        }
    }

    /** Invoker mode: one duty cycle of this process's driver, from the calling loop; else nothing. */
    private static void driverTurn()
    {
        final Verbus verbus = invoked;
        if (null != verbus)
        {
            verbus.invoke();
        }
    }

    private static int subscribe(
        final Verbus verbus,
        final String channel,
        final int streamId,
        final long count,
        final Options options,
        final AtomicReference<String> firstError)
    {
        final AtomicReference<String> unavailable = new AtomicReference<>();
        final Subscription subscription = verbus.addSubscription(channel, streamId, (image) -> {},
            (image) -> unavailable.compareAndSet(null, "image " + image.sessionId() + " from " +
                image.sourceIdentity() + " became unavailable at position " + image.position()));
        // Adopt the first sequence seen (a late joiner starts wherever the stream is) and report it.
        final MessageStream.Checker checker = new MessageStream.Checker(-1, options.sizes);
        final FragmentAssembler assembler = new FragmentAssembler(
            (buffer, offset, length, header) -> checker.onMessage(buffer, offset, length));
        final IdleStrategy pollIdle = channel.contains("idle=event") ? new EventIdleStrategy(subscription) : null;
        final long deadlineNs = System.nanoTime() + TIMEOUT_NS;
        long first = -1;
        long firstArrivalNs = System.nanoTime(); // replaced by the first arrival's time when seen
        long lastProgressNs = firstArrivalNs;
        long lastReceived = 0;
        long nextProgress = 10_000;
        // A late joiner is done once it has the last message; anyone else once it has them all.
        while ((options.lateJoiner ? checker.expected < count : checker.received < count) && null == checker.failure)
        {
            final long nowNs = System.nanoTime();
            if (checker.received != lastReceived)
            {
                lastReceived = checker.received;
                lastProgressNs = nowNs;
            }
            if (first < 0 && checker.received > 0)
            {
                first = checker.expected - checker.received;
                firstArrivalNs = nowNs;
            }
            if (checker.received >= nextProgress)
            {
                System.out.println("PROGRESS " + checker.received);
                System.out.flush();
                nextProgress += 10_000;
            }
            if (null != unavailable.get())
            {
                // Diagnostics only: give the control thread a moment to log why the connection went (its INFO line).
                RdmaRig.sleepMicros(TimeUnit.MILLISECONDS.toMicros(500));
                System.out.println("FAILED after " + checker.received + " messages: " + unavailable.get() +
                    ", driver error " + firstError.get());
                return 1;
            }
            if (nowNs - lastProgressNs > options.stallNs || nowNs > deadlineNs)
            {
                System.out.println("FAILED subscriber " + (nowNs > deadlineNs ?
                    "out of time (" + TIMEOUT_PROP_NAME + ") after " + checker.received + " messages" :
                    "stalled after " + checker.received + " messages for " +
                    TimeUnit.NANOSECONDS.toMillis(nowNs - lastProgressNs) + " ms") + ": images " +
                    subscription.imageCount() + (subscription.imageCount() > 0 ?
                    " at position " + subscription.images().get(0).position() : "") +
                    ", driver error " + firstError.get() + "; " + rdmaCounters(verbus.countersReader()));
                return 1;
            }
            final int fragments = subscription.poll(assembler, 256);
            driverTurn();
            if (null != pollIdle)
            {
                pollIdle.idle(fragments);
            }
            else if (0 == fragments)
            {
                Thread.yield();
            }
        }
        if (null != checker.failure)
        {
            System.out.println("FAILED " + checker.failure + " (driver error " + firstError.get() + ")");
            return 1;
        }
        first = checker.expected - checker.received;
        printCatchUp(verbus.countersReader());
        System.out.println("RECEIVED " + checker.received + " OK first=" + first + " in " +
            TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - firstArrivalNs) + " ms immediates=" +
            counterTotal(verbus.countersReader(), RdmaCounters.IMMEDIATES_TYPE_ID, ""));
        if (null != pollIdle)
        {
            System.out.println("WAKE-UPS " + counterTotal(verbus.countersReader(), RdmaCounters.WAKE_UPS_TYPE_ID, ""));
        }
        return 0;
    }

    /** @return the sum of the counters of this type whose label starts with the prefix. */
    private static long counterTotal(final CountersReader counters, final int typeId, final String labelPrefix)
    {
        final long[] total = { 0 };
        counters.forEach((counterId, counterTypeId, keyBuffer, label) ->
        {
            if (typeId == counterTypeId && label.startsWith(labelPrefix))
            {
                total[0] += counters.getCounterValue(counterId);
            }
        });
        return total[0];
    }

    private static long subscriberCount(final CountersReader counters)
    {
        return counterTotal(counters, RdmaCounters.CONNECTIONS_TYPE_ID, "rdma subscribers");
    }

    /**
     * A {@code join=recent} subscription prints "CATCH-UP bytes=b gap=g ms=t" before its result: what it READ from
     * the publisher's log, what it asked for that the log no longer held, and how long the READs and checks took.
     */
    private static void printCatchUp(final CountersReader counters)
    {
        final long[] values = { -1, 0, 0 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (RdmaCounters.CATCH_UP_BYTES_TYPE_ID == typeId)
            {
                values[0] = counters.getCounterValue(counterId);
            }
            else if (RdmaCounters.CATCH_UP_GAP_TYPE_ID == typeId)
            {
                values[1] = counters.getCounterValue(counterId);
            }
            else if (RdmaCounters.CATCH_UP_TIME_TYPE_ID == typeId)
            {
                values[2] = counters.getCounterValue(counterId);
            }
        });
        if (values[0] >= 0)
        {
            System.out.printf(Locale.ROOT, "CATCH-UP bytes=%d gap=%d ms=%.1f%n", values[0], values[1], values[2] / 1e6);
        }
    }

    /** @return every rdma and publication counter as "label=value", for a failure report. */
    private static String rdmaCounters(final CountersReader counters)
    {
        final StringBuilder builder = new StringBuilder();
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (label.startsWith("rdma") || label.startsWith("pub-") || label.startsWith("sub-") ||
                label.startsWith("back-pressure"))
            {
                builder.append(label).append('=').append(counters.getCounterValue(counterId)).append("; ");
            }
        });
        return builder.toString();
    }
}
