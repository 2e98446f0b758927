package io.verbus.soak;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.LocalTime;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.SplittableRandom;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The soak of one provider: its long-lived publisher process, its long-lived subscriber processes, the subscriber
 * process that is killed -9 and restarted (the cycler thread), the handshake fuzzer against the publisher's control
 * port, and the stall watch. Every count of the summary for this provider is gathered here.
 */
final class ProviderSoak
{
    static final long START_TIMEOUT_MS = 120_000;
    /** Indices into the six subscriber totals. */
    static final int RECEIVED = 0;
    static final int BYTES = 1;
    static final int LOST = 2;
    static final int DUPLICATED = 3;
    static final int REORDERED = 4;
    static final int CORRUPT = 5;

    final String provider;
    final List<String> failures = Collections.synchronizedList(new ArrayList<>());
    final long[] subscriberTotals = new long[6];
    final List<String> crashes = Collections.synchronizedList(new ArrayList<>());
    private final Set<String> crashed = ConcurrentHashMap.newKeySet();
    long published;
    long publishedBytes;
    int killCycles;
    int rejoinFailures;
    int stalls;
    long fdStart = -1;
    long fdEnd = -1;
    String fdDiff = "";
    HandshakeFuzzer fuzzer;
    volatile long lastKillNs;
    /** The longest a killed subscriber took to be gone (its sockets close only as the kernel tears it down). */
    volatile long slowestKillMs;
    /** How long the last killed subscriber took to be gone. */
    volatile long lastGoneMs;

    private final SoakOptions options;
    private final Path workDir;
    private final List<String> jvmArgs;
    private final int streamBase;
    private final List<Child> subscribers = new ArrayList<>();
    private final Map<String, Long> lastValues = new HashMap<>();
    private final Map<String, Long> lastChangeNs = new HashMap<>();
    private final Map<String, Boolean> stalled = new HashMap<>();
    private final SplittableRandom random = new SplittableRandom();
    private Child publisher;
    private volatile Child cycled;
    private int incarnation;
    private String channel;
    private Thread cycler;
    private volatile boolean cycling;
    private Map<String, Long> fdTargetsAtStart = Map.of();
    /** One line per kill -9: when, which process, how long it took to be gone (logs/PROVIDER-kills.log). */
    private PrintWriter killLog;

    ProviderSoak(final String provider, final SoakOptions options, final Path workDir, final List<String> jvmArgs,
        final int streamBase)
    {
        this.provider = provider;
        this.options = options;
        this.workDir = workDir;
        this.jvmArgs = jvmArgs;
        this.streamBase = streamBase;
    }

    /** Starts the publisher and the subscribers, waits until all have joined, and takes the fd baseline. */
    void start(final String inject) throws IOException, InterruptedException
    {
        final String keys = options.channelKeys(provider);
        final long[] rates = options.rates(provider);
        final List<String> args = new ArrayList<>(List.of(dir(provider + "-publisher").toString(), keys,
            String.valueOf(streamBase), "--subscribers=" + options.subscribers,
            "--rates=" + rates[0] + "," + rates[1] + "," + rates[2] + "," + rates[3]));
        if (!inject.isBlank())
        {
            args.add("--inject=" + inject);
        }
        publisher = Child.start(provider + "-publisher", workDir, dir(provider + "-publisher"), jvmArgs,
            SoakPublisher.class, args);
        final String port = publisher.await("PORT", START_TIMEOUT_MS);
        if (null == port)
        {
            throw new IllegalStateException(provider + " publisher did not start:\n      " + publisher.tail());
        }
        channel = "rdma:endpoint=127.0.0.1:" + port.substring(5).trim() + "|" + keys;
        for (int i = 0; i < options.subscribers; i++)
        {
            subscribers.add(startSubscriber(provider + "-subscriber-" + i));
        }
        if (null == publisher.await("STARTED", START_TIMEOUT_MS))
        {
            throw new IllegalStateException(provider + " publisher never saw its subscribers:\n      " +
                publisher.tail());
        }
        for (final Child subscriber : subscribers)
        {
            awaitJoined(subscriber);
        }
        if (options.killCycles())
        {
            cycled = startSubscriber(provider + "-restarted-" + incarnation);
            awaitJoined(cycled);
        }
        TimeUnit.MILLISECONDS.sleep(500);
        fdTargetsAtStart = fdTargets(publisher.pid());
        fdStart = minFdCount(publisher.pid(), 3, -1);
    }

    int controlPort()
    {
        return Integer.parseInt(channel.substring(channel.indexOf(':', 5) + 1, channel.indexOf('|')));
    }

    void startChurn(final double fuzzRate)
    {
        if (fuzzRate > 0)
        {
            fuzzer = new HandshakeFuzzer(new InetSocketAddress("127.0.0.1", controlPort()), streamBase, fuzzRate);
            fuzzer.start(options.fuzzThreads, provider);
        }
        if (options.killCycles())
        {
            try
            {
                killLog = new PrintWriter(Files.newBufferedWriter(workDir.resolve("logs").resolve(provider +
                    "-kills.log")), true);
            }
            catch (final IOException ex)
            {
                throw new UncheckedIOException(ex);
            }
            cycling = true;
            cycler = Thread.ofPlatform().name(provider + "-cycler").daemon().start(this::cycle);
        }
    }

    /** kill -9 the restartable subscriber after a random life, start its successor, wait until it rejoined. */
    private void cycle()
    {
        try
        {
            while (cycling)
            {
                final long lifeMs = options.killMinMs + random.nextLong(options.killMaxMs - options.killMinMs + 1);
                final long untilNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(lifeMs);
                while (cycling && System.nanoTime() - untilNs < 0)
                {
                    TimeUnit.MILLISECONDS.sleep(50);
                }
                if (!cycling)
                {
                    return;
                }
                final Child victim = cycled;
                if (!victim.process.isAlive())
                {
                    crashed(victim, "exited by itself with " + victim.process.exitValue() + " before its kill");
                }
                addStat(victim);
                final String killedAt = LocalTime.now().toString();
                final long killNs = System.nanoTime();
                final long goneMs = victim.killHard();
                slowestKillMs = Math.max(slowestKillMs, goneMs);
                lastGoneMs = goneMs;
                lastKillNs = killNs;
                killLog.println(killedAt + " kill -9 " + victim.name + " (pid " + victim.pid() + "): gone after " +
                    goneMs + " ms");
                deleteRecursively(victim.dir); // what a supervisor does for a process it killed
                incarnation++;
                cycled = startSubscriber(provider + "-restarted-" + incarnation);
                if (null != cycled.await("JOINED", START_TIMEOUT_MS))
                {
                    killCycles++;
                }
                else
                {
                    rejoinFailures++;
                    failures.add(provider + ": restarted subscriber " + incarnation + " did not rejoin within " +
                        START_TIMEOUT_MS + " ms:\n      " + cycled.tail());
                }
            }
        }
        catch (final InterruptedException | IOException ex)
        {
            failures.add(provider + " cycler: " + ex);
        }
    }

    /** Stops the fuzzing and the kill cycles; the last restarted subscriber stays, joined, to be ended normally. */
    void stopChurn() throws InterruptedException
    {
        if (null != fuzzer)
        {
            fuzzer.stop();
        }
        cycling = false;
        if (null != cycler)
        {
            cycler.join();
            killLog.close();
        }
    }

    /** The fd count at the end, in the same state as at the start: every subscriber joined, no fuzzing. */
    void measureFdEnd() throws InterruptedException
    {
        if (publisher.process.isAlive())
        {
            fdEnd = minFdCount(publisher.pid(), 20, fdStart);
            if (fdEnd > fdStart)
            {
                fdDiff = diff(fdTargetsAtStart, fdTargets(publisher.pid()));
            }
        }
    }

    /** Every stat period: a publisher writer or a long-lived subscriber lane without progress for > timeout. */
    void watchStalls(final long nowNs)
    {
        final String[] fields = publisher.statFields();
        for (final String field : fields)
        {
            final String[] parts = field.split(":");
            watch("publisher source " + parts[0], Long.parseLong(parts[1]), nowNs);
        }
        for (final Child subscriber : subscribers)
        {
            for (final String field : subscriber.statFields())
            {
                final String[] parts = field.split(":");
                watch(subscriber.name + " lane " + parts[0], Long.parseLong(parts[1]), nowNs);
            }
        }
        for (final Child child : allChildren())
        {
            if (!child.process.isAlive() && !child.wasKilled() && !crashed.contains(child.name))
            {
                crashed(child, "exited with " + child.process.exitValue() + " during the soak");
            }
        }
    }

    private void watch(final String key, final long value, final long nowNs)
    {
        final Long last = lastValues.put(key, value);
        if (null == last || last != value)
        {
            lastChangeNs.put(key, nowNs);
            stalled.put(key, false);
            return;
        }
        if (nowNs - lastChangeNs.get(key) > TimeUnit.MILLISECONDS.toNanos(options.stallThresholdMs()) &&
            !stalled.getOrDefault(key, false))
        {
            stalled.put(key, true);
            stalls++;
            final long killNs = lastKillNs;
            failures.add(provider + ": stall: " + key + " made no progress for more than " +
                options.stallThresholdMs() + " ms at " + value + (0 == killNs ? "" : " (the restarted subscriber's " +
                "last kill -9 was gone " + lastGoneMs + " ms after its SIGKILL and " +
                TimeUnit.NANOSECONDS.toMillis(lastChangeNs.get(key) - killNs) + " ms before this stopped)"));
        }
    }

    /** Stops the writers, hands every subscriber the final counts, waits for them to drain, ends everything. */
    void finish() throws InterruptedException
    {
        publisher.send("STOP");
        final String fin = publisher.await("FINAL", START_TIMEOUT_MS);
        if (null == fin)
        {
            failures.add(provider + ": publisher did not stop:\n      " + publisher.tail());
        }
        final List<Child> ending = new ArrayList<>(subscribers);
        if (null != cycled)
        {
            ending.add(cycled);
        }
        final String end = null == fin ? "END" : "END" + fin.substring(5);
        for (final Child subscriber : ending)
        {
            subscriber.send(end);
        }
        for (final Child subscriber : ending)
        {
            if (null == subscriber.await("DONE", START_TIMEOUT_MS))
            {
                failures.add(provider + ": " + subscriber.name + " did not finish:\n      " + subscriber.tail());
            }
            addStat(subscriber);
        }
        publisherTotals(fin);
        publisher.send("EXIT");
        for (final Child child : allChildren())
        {
            if (!child.process.waitFor(60, TimeUnit.SECONDS))
            {
                crashed(child, "did not exit within 60 s after its work was done");
                child.killHard();
            }
            else if (0 != child.process.exitValue() && !crashed.contains(child.name))
            {
                crashed(child, "exited with " + child.process.exitValue());
            }
        }
    }

    private void publisherTotals(final String fin)
    {
        if (null != fin)
        {
            for (final String field : fin.substring(5).trim().split(" "))
            {
                published += Long.parseLong(field.substring(field.indexOf(':') + 1));
            }
        }
        for (final String field : publisher.statFields())
        {
            publishedBytes += Long.parseLong(field.split(":")[2]);
        }
    }

    /** Adds a subscriber's last STAT (lane:received:bytes:lost:duplicated:reordered:corrupt) to the totals. */
    private synchronized void addStat(final Child subscriber)
    {
        for (final String field : subscriber.statFields())
        {
            final String[] parts = field.split(":");
            for (int i = 0; i < subscriberTotals.length; i++)
            {
                subscriberTotals[i] += Long.parseLong(parts[i + 1]);
            }
        }
    }

    /** @return the messages published so far, from the publisher's last report. */
    long publishedSoFar()
    {
        long count = 0;
        for (final String field : publisher.statFields())
        {
            count += Long.parseLong(field.split(":")[1]);
        }
        return count;
    }

    synchronized long anomalies()
    {
        return subscriberTotals[LOST] + subscriberTotals[DUPLICATED] + subscriberTotals[REORDERED] +
            subscriberTotals[CORRUPT];
    }

    long errors()
    {
        long errors = 0;
        for (final Child child : allChildren())
        {
            errors += child.errors.get();
        }
        return errors;
    }

    long unavailableImages()
    {
        long count = 0;
        for (final Child child : subscribers)
        {
            count += child.unavailable.get();
        }
        return count;
    }

    /** Verbus dirs of the processes that ended normally (a killed one's was removed by the cycler). */
    List<Path> verbusDirs()
    {
        final List<Path> dirs = new ArrayList<>();
        for (final Child child : allChildren())
        {
            dirs.add(child.dir);
        }
        return dirs;
    }

    List<Long> pids()
    {
        final List<Long> pids = new ArrayList<>();
        for (final Child child : allChildren())
        {
            pids.add(child.pid());
        }
        return pids;
    }

    private List<Child> allChildren()
    {
        final List<Child> children = new ArrayList<>();
        if (null != publisher)
        {
            children.add(publisher);
        }
        children.addAll(subscribers);
        if (null != cycled)
        {
            children.add(cycled);
        }
        return children;
    }

    private Child startSubscriber(final String name) throws IOException
    {
        return Child.start(name, workDir, dir(name), jvmArgs, SoakSubscriber.class,
            List.of(dir(name).toString(), channel, String.valueOf(streamBase)));
    }

    private void awaitJoined(final Child subscriber) throws InterruptedException
    {
        if (null == subscriber.await("JOINED", START_TIMEOUT_MS))
        {
            throw new IllegalStateException(subscriber.name + " did not join:\n      " + subscriber.tail());
        }
    }

    private void crashed(final Child child, final String why)
    {
        crashed.add(child.name);
        crashes.add(child.name + " (pid " + child.pid() + ") " + why + ":\n      " + child.tail());
    }

    private Path dir(final String name)
    {
        return workDir.resolve("verbus").resolve(name);
    }

    static long fdCount(final long pid)
    {
        try (Stream<Path> fds = Files.list(Path.of("/proc", String.valueOf(pid), "fd")))
        {
            return fds.count();
        }
        catch (final IOException ex)
        {
            return -1;
        }
    }

    /** The smallest of up to {@code samples} counts 250 ms apart, stopping early at or below {@code enough}. */
    private static long minFdCount(final long pid, final int samples, final long enough) throws InterruptedException
    {
        long min = Long.MAX_VALUE;
        for (int i = 0; i < samples && min > enough; i++)
        {
            if (i > 0)
            {
                TimeUnit.MILLISECONDS.sleep(250);
            }
            min = Math.min(min, fdCount(pid));
        }
        return min;
    }

    /** @return how many fds point at each target ("socket:[123]" collapsed to "socket"). */
    private static Map<String, Long> fdTargets(final long pid)
    {
        final Map<String, Long> targets = new TreeMap<>();
        try (Stream<Path> fds = Files.list(Path.of("/proc", String.valueOf(pid), "fd")))
        {
            fds.forEach((fd) ->
            {
                try
                {
                    final String target = Files.readSymbolicLink(fd).toString().replaceAll(":\\[\\d+]", "");
                    targets.merge(target, 1L, Long::sum);
                }
                catch (final IOException ignore)
                {
                    // closed meanwhile
                }
            });
        }
        catch (final IOException ignore)
        {
            // the process is gone
        }
        return targets;
    }

    private static String diff(final Map<String, Long> before, final Map<String, Long> after)
    {
        final StringBuilder text = new StringBuilder();
        after.forEach((target, count) ->
        {
            final long was = before.getOrDefault(target, 0L);
            if (count > was)
            {
                text.append(text.isEmpty() ? "" : ", ").append('+').append(count - was).append(' ').append(target);
            }
        });
        return text.toString();
    }

    static void deleteRecursively(final Path dir)
    {
        if (!Files.exists(dir))
        {
            return;
        }
        try (Stream<Path> paths = Files.walk(dir))
        {
            paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach((path) ->
            {
                try
                {
                    Files.deleteIfExists(path);
                }
                catch (final IOException ignore)
                {
                    // best effort
                }
            });
        }
        catch (final IOException ignore)
        {
            // best effort
        }
    }
}
