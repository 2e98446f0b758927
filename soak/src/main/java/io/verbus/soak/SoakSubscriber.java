package io.verbus.soak;

import io.aeron.FragmentAssembler;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.driver.IdleStrategies;
import org.agrona.concurrent.BackoffIdleStrategy;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A soak subscriber process: subscribes to every {@link SoakLanes lane} of one publisher and checks every message
 * ({@link SoakMessages.LaneCheck}).
 * <pre>
 *   SoakSubscriber &lt;verbus-dir&gt; &lt;channel&gt; &lt;stream-base&gt; [--stat-ms=n] [--drain-ms=n]
 * </pre>
 * Prints {@code JOINED} once every source has been seen, {@code STAT lane:received:bytes:lost:duplicated:reordered:
 * corrupt ...} every stat period, {@code UNAVAILABLE ...} when an image goes. On {@code END source:count ...} (stdin,
 * the publisher's final counts) it drains until it has every message up to those counts or the drain time passed,
 * counts what is missing as lost, prints a last STAT and {@code DONE}, and exits 0.
 */
public final class SoakSubscriber
{
    private volatile Map<Integer, Long> endCounts;
    /** Set once done: closing the subscriptions makes their images unavailable, which is no news then. */
    private volatile boolean closing;

    private SoakSubscriber()
    {
    }

    public static void main(final String[] args)
    {
        if (args.length < 3)
        {
            System.err.println(
                "usage: SoakSubscriber <verbus-dir> <channel> <stream-base> [--stat-ms=n] [--drain-ms=n]");
            System.exit(2);
        }
        System.exit(new SoakSubscriber().run(args));
    }

    private int run(final String[] args)
    {
        final String channel = args[1];
        final int streamBase = Integer.parseInt(args[2]);
        long statMs = 250;
        long drainMs = 30_000;
        for (int i = 3; i < args.length; i++)
        {
            final long value = Long.parseLong(args[i].substring(args[i].indexOf('=') + 1));
            if (args[i].startsWith("--stat-ms="))
            {
                statMs = value;
            }
            else if (args[i].startsWith("--drain-ms="))
            {
                drainMs = value;
            }
            else
            {
                throw new IllegalArgumentException("unknown option " + args[i]);
            }
        }
        Thread.ofPlatform().daemon().start(this::readEnd);
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(args[0]).threadingMode(ThreadingMode.SHARED)
            .idleStrategy(IdleStrategies.BACKOFF).errorHandler((ex) -> SoakPublisher.println("DRIVER-ERROR " + ex))))
        {
            final Subscription[] subscriptions = new Subscription[SoakLanes.LANES];
            final FragmentAssembler[] assemblers = new FragmentAssembler[SoakLanes.LANES];
            final SoakMessages.LaneCheck[] checks = new SoakMessages.LaneCheck[SoakLanes.LANES];
            for (int lane = 0; lane < SoakLanes.LANES; lane++)
            {
                final int thisLane = lane;
                checks[lane] = new SoakMessages.LaneCheck(lane, SoakLanes.sizesOf(lane));
                final SoakMessages.LaneCheck check = checks[lane];
                assemblers[lane] = new FragmentAssembler((buffer, offset, length, header) ->
                    check.onMessage(buffer, offset, length));
                subscriptions[lane] = verbus.addSubscription(channel, streamBase + lane, (image) -> {},
                    (image) ->
                    {
                        if (!closing)
                        {
                            SoakPublisher.println("UNAVAILABLE lane " + thisLane + " session " + image.sessionId() +
                                " at " + image.position());
                        }
                    });
            }
            pollUntilDrained(subscriptions, assemblers, checks, statMs, drainMs);
            SoakPublisher.println(stat(checks));
            SoakPublisher.println("DONE");
            closing = true;
        }
        return 0;
    }

    private void pollUntilDrained(
        final Subscription[] subscriptions,
        final FragmentAssembler[] assemblers,
        final SoakMessages.LaneCheck[] checks,
        final long statMs,
        final long drainMs)
    {
        final BackoffIdleStrategy idle = new BackoffIdleStrategy(
            10, 20, TimeUnit.MICROSECONDS.toNanos(1), TimeUnit.MICROSECONDS.toNanos(100));
        final long statNs = TimeUnit.MILLISECONDS.toNanos(statMs);
        long nextStatNs = System.nanoTime() + statNs;
        long drainDeadlineNs = 0;
        boolean joined = false;
        while (true)
        {
            int fragments = 0;
            for (int lane = 0; lane < subscriptions.length; lane++)
            {
                fragments += subscriptions[lane].poll(assemblers[lane], 256);
            }
            idle.idle(fragments);
            final long nowNs = System.nanoTime();
            if (nowNs - nextStatNs < 0)
            {
                continue;
            }
            nextStatNs = nowNs + statNs;
            if (!joined && allSeen(checks))
            {
                joined = true;
                SoakPublisher.println("JOINED");
            }
            final Map<Integer, Long> end = endCounts;
            if (null != end)
            {
                if (0 == drainDeadlineNs)
                {
                    drainDeadlineNs = nowNs + TimeUnit.MILLISECONDS.toNanos(drainMs);
                }
                if (drained(checks, end) || nowNs - drainDeadlineNs > 0)
                {
                    applyEnd(checks, end);
                    return;
                }
            }
            SoakPublisher.println(stat(checks));
        }
    }

    private static boolean allSeen(final SoakMessages.LaneCheck[] checks)
    {
        for (final SoakMessages.LaneCheck check : checks)
        {
            if (!check.allSourcesSeen())
            {
                return false;
            }
        }
        return true;
    }

    private static boolean drained(final SoakMessages.LaneCheck[] checks, final Map<Integer, Long> end)
    {
        for (final SoakMessages.LaneCheck check : checks)
        {
            for (int thread = 0; thread < check.sources.length; thread++)
            {
                final Long count = end.get(SoakMessages.source(laneOf(checks, check), thread));
                if (null != count && check.sources[thread].expected < count)
                {
                    return false;
                }
            }
        }
        return true;
    }

    private static void applyEnd(final SoakMessages.LaneCheck[] checks, final Map<Integer, Long> end)
    {
        for (final SoakMessages.LaneCheck check : checks)
        {
            for (int thread = 0; thread < check.sources.length; thread++)
            {
                final Long count = end.get(SoakMessages.source(laneOf(checks, check), thread));
                final SoakMessages.SourceCheck source = check.sources[thread];
                if (null == count)
                {
                    continue;
                }
                if (source.expected < 0)
                {
                    source.lost += count; // never saw one: a subscriber there from the start missed them all
                }
                else
                {
                    source.onEnd(count);
                }
            }
        }
    }

    private static int laneOf(final SoakMessages.LaneCheck[] checks, final SoakMessages.LaneCheck check)
    {
        for (int lane = 0; lane < checks.length; lane++)
        {
            if (checks[lane] == check)
            {
                return lane;
            }
        }
        throw new IllegalStateException("unknown lane");
    }

    static String stat(final SoakMessages.LaneCheck[] checks)
    {
        final StringBuilder line = new StringBuilder("STAT");
        for (int lane = 0; lane < checks.length; lane++)
        {
            line.append(' ').append(lane);
            for (final long value : checks[lane].totals())
            {
                line.append(':').append(value);
            }
        }
        return line.toString();
    }

    private void readEnd()
    {
        try
        {
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            String line;
            while (null != (line = in.readLine()))
            {
                if (line.startsWith("END"))
                {
                    final Map<Integer, Long> counts = new HashMap<>();
                    for (final String item : line.substring(3).trim().split(" "))
                    {
                        if (!item.isBlank())
                        {
                            final int colon = item.indexOf(':');
                            counts.put(Integer.parseInt(item.substring(0, colon)),
                                Long.parseLong(item.substring(colon + 1)));
                        }
                    }
                    endCounts = counts;
                    return;
                }
            }
        }
        catch (final IOException ignore)
        {
            // the orchestrator is gone
        }
    }
}
