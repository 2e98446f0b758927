package io.verbus.bench;

import io.aeron.logbuffer.FragmentHandler;
import io.verbus.EventIdleStrategy;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.bench.contender.TempDirectory;
import io.verbus.media.rdma.RdmaCounters;
import org.HdrHistogram.Histogram;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

/**
 * What {@code rdma:...|idle=event} costs and saves: one publisher thread offers timestamped messages at a fixed rate
 * on an exclusive {@code commit=imm} publication (direct mode), one subscriber thread runs the plain user loop
 * {@code while (running) idle.idle(sub.poll(handler, 10))} with either {@link EventIdleStrategy} (subscription with
 * {@code idle=event}) or a busy spin (same channel without it, so the data path is identical), and this reports per
 * rate and mode: publish-to-handler latency (p50, p99, p99.9, max), the subscriber thread's CPU seconds per minute
 * (ThreadMXBean), the whole process's (every thread: publisher, both Verbus instances' driver agents), and wake-ups
 * per second (the {@code rdma wake-ups} counter).
 * <p>
 * Each end has its own Verbus (as two processes would), driver agents SHARED on one thread with the backoff idle
 * strategy: a blocked subscriber needs the receiver agent for credits and heartbeats. The publisher parks between
 * messages when the gap is long and spins when it is short (at 100k msg/s it spins: count its CPU in the process
 * figure, not the subscriber's). A benchmark, not a test: numbers from a loaded machine mean little.
 * <pre>
 * ./verbus event-bench [--provider shm|tcp|verbs] [--rates 10,100000] [--modes event,busy-spin]
 *     [--seconds 60] [--warmup-seconds 5] [--spin-polls 100]
 * </pre>
 */
public final class EventIdleBench
{
    private static final int STREAM_ID = 4101;
    private static final int MESSAGE_LENGTH = 32;
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);
    private static final long OFFER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    /** Longer gaps than this are parked (less a margin spun); shorter ones spun. */
    private static final long PARK_THRESHOLD_NS = TimeUnit.MICROSECONDS.toNanos(200);
    private static final long SPIN_MARGIN_NS = TimeUnit.MICROSECONDS.toNanos(100);

    private EventIdleBench()
    {
    }

    /** One measured case. */
    record Result(
        String mode,
        long rate,
        long sent,
        long received,
        Histogram latencyNs,
        double subscriberCpuSecondsPerMinute,
        double processCpuSecondsPerMinute,
        double wakeUpsPerSecond)
    {
    }

    public static void main(final String[] args) throws Exception
    {
        String provider = "shm";
        long[] rates = { 10, 100_000 };
        String[] modes = { "event", "busy-spin" };
        long seconds = 60;
        long warmupSeconds = 5;
        int spinPolls = EventIdleStrategy.DEFAULT_SPIN_POLLS;
        for (int i = 0; i < args.length; i++)
        {
            final String value = i + 1 < args.length ? args[i + 1] : null;
            switch (args[i])
            {
                case "--provider" -> provider = required(args[i], value);
                case "--rates" -> rates = java.util.Arrays.stream(required(args[i], value).split(","))
                    .mapToLong(r -> positive("--rates", r)).toArray();
                case "--modes" -> modes = required(args[i], value).split(",");
                case "--seconds" -> seconds = positive(args[i], value);
                case "--warmup-seconds" -> warmupSeconds = positive(args[i], value);
                case "--spin-polls" -> spinPolls = (int)Math.min(Integer.MAX_VALUE, positive(args[i], value));
                case "--help", "-h" ->
                {
                    System.out.println("usage: ./verbus event-bench [--provider shm|tcp|verbs] [--rates 10,100000] " +
                        "[--modes event,busy-spin] [--seconds 60] [--warmup-seconds 5] [--spin-polls 100]");
                    return;
                }
                default -> throw new IllegalArgumentException("unknown flag '" + args[i] + "' (--help)");
            }
            i++;
        }
        for (final String mode : modes)
        {
            if (!"event".equals(mode) && !"busy-spin".equals(mode))
            {
                throw new IllegalArgumentException("--modes: each one of event|busy-spin, got '" + mode + "'");
            }
        }

        final PrintStream out = System.out;
        final MachineInfo machine = MachineInfo.current();
        out.printf(Locale.ROOT, "event-idle bench: provider=%s, commit=imm, %d-byte messages, %d s per case after " +
            "%d s warm-up; %d CPUs, %s, %s%n", provider, MESSAGE_LENGTH, seconds, warmupSeconds, machine.cpus(),
            machine.cpuModel(), machine.jdk());
        out.println("load average at start: " + MachineInfo.currentLoadAverage());
        out.printf(Locale.ROOT, "%-10s %9s %9s %9s %9s %9s %9s %10s %13s %13s %10s%n", "mode", "rate/s", "sent",
            "received", "p50 us", "p99 us", "p99.9 us", "max us", "sub CPU s/min", "proc CPU s/min", "wakeups/s");
        final List<Result> results = new ArrayList<>();
        for (final long rate : rates)
        {
            for (final String mode : modes)
            {
                final Result result = run(provider, mode, rate, spinPolls, warmupSeconds, seconds);
                results.add(result);
                final Histogram h = result.latencyNs();
                out.printf(Locale.ROOT, "%-10s %9d %9d %9d %9.1f %9.1f %9.1f %10.1f %13.2f %13.2f %10.1f%n",
                    result.mode(), result.rate(), result.sent(), result.received(), us(h, 50), us(h, 99),
                    us(h, 99.9), h.getMaxValue() / 1000.0, result.subscriberCpuSecondsPerMinute(),
                    result.processCpuSecondsPerMinute(), result.wakeUpsPerSecond());
            }
        }
        out.println("load average at end: " + MachineInfo.currentLoadAverage());
    }

    private static double us(final Histogram histogram, final double percentile)
    {
        return histogram.getValueAtPercentile(percentile) / 1000.0;
    }

    static Result run(
        final String provider,
        final String mode,
        final long rate,
        final int spinPolls,
        final long warmupSeconds,
        final long seconds) throws IOException, InterruptedException
    {
        final boolean event = "event".equals(mode);
        final List<AutoCloseable> resources = new ArrayList<>();
        try
        {
            final Verbus publisherSide = launch(resources, "verbus-event-bench-a-");
            final Verbus subscriberSide = launch(resources, "verbus-event-bench-b-");
            final int port = freePort();
            final String channel = "rdma:endpoint=127.0.0.1:" + port + "|provider=" + provider +
                "|term-length=4m|commit=imm";
            final ExclusivePublication publication = publisherSide.addExclusivePublication(channel, STREAM_ID);
            resources.add(publication);
            final Subscription subscription =
                subscriberSide.addSubscription(channel + (event ? "|idle=event" : ""), STREAM_ID);
            resources.add(subscription);
            awaitConnected(publication, subscription);

            final Subscriber subscriber = new Subscriber(subscription,
                event ? new EventIdleStrategy(subscription, spinPolls, EventIdleStrategy.DEFAULT_MAX_WAIT_NS) :
                new BusySpinIdleStrategy());
            final Thread thread = new Thread(subscriber, "event-bench-subscriber");
            thread.setDaemon(true);
            thread.start();

            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(MESSAGE_LENGTH));
            final long intervalNs = Math.max(1, TimeUnit.SECONDS.toNanos(1) / rate);
            publish(publication, message, intervalNs, System.nanoTime() + TimeUnit.SECONDS.toNanos(warmupSeconds));

            final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
            final com.sun.management.OperatingSystemMXBean os =
                (com.sun.management.OperatingSystemMXBean)ManagementFactory.getOperatingSystemMXBean();
            final CountersReader counters = subscriberSide.countersReader();
            final long wakeUpsBefore = sum(counters, RdmaCounters.WAKE_UPS_TYPE_ID);
            subscriber.startRecording();
            final long threadCpuBefore = threads.getThreadCpuTime(thread.threadId());
            final long processCpuBefore = os.getProcessCpuTime();
            final long startNs = System.nanoTime();
            final long sent = publish(publication, message, intervalNs, startNs + TimeUnit.SECONDS.toNanos(seconds));
            final long elapsedNs = System.nanoTime() - startNs;
            final long threadCpuNs = threads.getThreadCpuTime(thread.threadId()) - threadCpuBefore;
            final long processCpuNs = os.getProcessCpuTime() - processCpuBefore;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(50)); // the last messages land
            final long received = subscriber.stopRecording();
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(20)); // counters go out on the agent's cadence
            final long wakeUps = sum(counters, RdmaCounters.WAKE_UPS_TYPE_ID) - wakeUpsBefore;
            subscriber.running = false;
            thread.join(TimeUnit.SECONDS.toMillis(2));
            if (null != subscriber.failure)
            {
                throw new IllegalStateException(mode + " at " + rate + "/s: " + subscriber.failure);
            }
            final double perMinute = TimeUnit.MINUTES.toNanos(1) / (double)elapsedNs;
            return new Result(mode, rate, sent, received, subscriber.latencyNs,
                threadCpuNs / 1e9 * perMinute, processCpuNs / 1e9 * perMinute,
                wakeUps / (elapsedNs / 1e9));
        }
        finally
        {
            for (int i = resources.size() - 1; i >= 0; i--)
            {
                CloseHelper.quietClose(resources.get(i));
            }
        }
    }

    /**
     * Offers a timestamped message every {@code intervalNs} until {@code endNs}; a publisher held up catches up by at
     * most 100 messages, then drops the schedule it missed.
     */
    private static long publish(
        final ExclusivePublication publication, final UnsafeBuffer message, final long intervalNs, final long endNs)
    {
        long sent = 0;
        long nextNs = System.nanoTime();
        while (true)
        {
            long nowNs = System.nanoTime();
            final long waitNs = nextNs - nowNs;
            if (waitNs > PARK_THRESHOLD_NS)
            {
                LockSupport.parkNanos(waitNs - SPIN_MARGIN_NS);
            }
            while ((nowNs = System.nanoTime()) < nextNs)
            {
                Thread.onSpinWait();
            }
            if (nowNs >= endNs)
            {
                return sent;
            }
            message.putLong(0, nowNs);
            final long deadlineNs = nowNs + OFFER_TIMEOUT_NS;
            long result;
            while ((result = publication.offer(message, 0, MESSAGE_LENGTH)) < 0)
            {
                if (Publication.CLOSED == result || System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException("offer failed for 5 s: code " + result);
                }
                publication.flush();
                Thread.onSpinWait();
            }
            sent++;
            nextNs = Math.max(nextNs + intervalNs, nowNs - 100 * intervalNs);
        }
    }

    /** The subscriber thread: the plain user loop, recording publish-to-handler latency while asked to. */
    private static final class Subscriber implements Runnable
    {
        final Histogram latencyNs = new Histogram(TimeUnit.SECONDS.toNanos(10), 3);
        private final Subscription subscription;
        private final IdleStrategy idle;
        private final FragmentHandler handler;
        volatile boolean running = true;
        volatile String failure;
        private volatile boolean recording;
        private volatile long received;

        Subscriber(final Subscription subscription, final IdleStrategy idle)
        {
            this.subscription = subscription;
            this.idle = idle;
            this.handler = (buffer, offset, length, header) ->
            {
                if (recording)
                {
                    latencyNs.recordValue(Math.min(latencyNs.getHighestTrackableValue(),
                        Math.max(0, System.nanoTime() - buffer.getLong(offset))));
                    received++;
                }
            };
        }

        void startRecording()
        {
            recording = true;
        }

        long stopRecording()
        {
            recording = false;
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1)); // a handler call in progress finishes
            return received;
        }

        public void run()
        {
            try
            {
                while (running)
                {
                    idle.idle(subscription.poll(handler, 10));
                }
            }
            catch (final RuntimeException ex)
            {
                failure = ex.toString();
            }
        }
    }

    private static Verbus launch(final List<AutoCloseable> resources, final String prefix) throws IOException
    {
        final TempDirectory dir = TempDirectory.create(prefix);
        resources.add(dir);
        final Verbus verbus = Verbus.launch(new Verbus.Context()
            .dir(dir.path().toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("backoff"));
        resources.add(verbus);
        return verbus;
    }

    private static void awaitConnected(final Publication publication, final Subscription subscription)
    {
        final long deadlineNs = System.nanoTime() + CONNECT_TIMEOUT_NS;
        while (!publication.isConnected() || !subscription.isConnected())
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("publication and subscription did not connect within 30 s");
            }
            LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
        }
    }

    private static long sum(final CountersReader counters, final int type)
    {
        final long[] sum = { 0 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (type == typeId)
            {
                sum[0] += counters.getCounterValue(counterId);
            }
        });
        return sum[0];
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket())
        {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        }
    }

    private static String required(final String flag, final String value)
    {
        if (null == value || value.isBlank())
        {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return value.trim();
    }

    private static long positive(final String flag, final String value)
    {
        try
        {
            final long parsed = Long.parseLong(required(flag, value));
            if (parsed <= 0)
            {
                throw new IllegalArgumentException(flag + " must be > 0, got " + value);
            }
            return parsed;
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(flag + " must be a positive number, got '" + value + "'", ex);
        }
    }
}
