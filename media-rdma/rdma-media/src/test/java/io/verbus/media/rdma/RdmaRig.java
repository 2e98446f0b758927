package io.verbus.media.rdma;

import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FaultInjection;
import io.verbus.media.PublicationLog;

import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * One publication and any number of subscriptions on an {@code rdma:} channel, all driven from the test thread
 * (sender duty cycle, receiver duty cycles, image polls) so that a test is deterministic apart from the
 * providers' and control threads' timing, and never spins: every wait sleeps and is bounded by time.
 */
final class RdmaRig implements AutoCloseable
{
    static final byte[] SECRET = "rdma-rig-secret-of-enough-length".getBytes(StandardCharsets.US_ASCII);
    static final int STREAM_ID = 1001;

    final MediaTestSupport support;
    final Path dir;
    final String provider;
    final PublicationLog log;
    final TestLogAppender appender;
    final RdmaSender sender;
    final FabricContext publisherFabric;
    final List<Subscriber> subscribers = new ArrayList<>();
    final Map<String, String> extraParams;
    /** The shm directory subscribers added from now on use (the same files seen through another mount), or null. */
    Path subscriberShmDirectory;

    /** A subscription: its receiver, its sink and its own fabric (so it can be killed alone). */
    static final class Subscriber
    {
        final RdmaReceiver receiver;
        final TestImageSink sink;
        final FabricContext fabric;
        boolean closed;

        Subscriber(final RdmaReceiver receiver, final TestImageSink sink, final FabricContext fabric)
        {
            this.receiver = receiver;
            this.sink = sink;
            this.fabric = fabric;
        }

        TestImageSink.TestImage image()
        {
            return sink.single();
        }
    }

    RdmaRig(final Path dir, final String provider, final int termLength, final FaultInjection faults,
        final String... keyValues)
    {
        this(dir, provider, termLength, false, faults, keyValues);
    }

    /**
     * @param logInFabricDirectory true to keep the publication's log file, in the shm fabric directory, where the
     *                             shm provider can let peers map it (for a READ grant); false to unlink it once
     *                             mapped, as an embedded driver does.
     */
    RdmaRig(final Path dir, final String provider, final int termLength, final boolean logInFabricDirectory,
        final FaultInjection faults, final String... keyValues)
    {
        this.dir = dir;
        this.provider = provider;
        this.support = new MediaTestSupport(dir);
        this.extraParams = new HashMap<>();
        for (int i = 0; i < keyValues.length; i += 2)
        {
            extraParams.put(keyValues[i], keyValues[i + 1]);
        }
        log = logInFabricDirectory ?
            support.newPublicationLog(7, STREAM_ID, termLength,
            new io.verbus.memory.MemoryMapper(dir.resolve("fabric"), null, false), true) :
            support.newPublicationLog(7, STREAM_ID, termLength);
        appender = new TestLogAppender(log);
        publisherFabric = fabricContext(faults);
        sender = new RdmaSender(
            new RdmaChannelContext(support.context, params("127.0.0.1:0"), publisherFabric, SECRET), log);
    }

    FabricContext fabricContext(final FaultInjection faults)
    {
        final FabricContext context = new FabricContext().shmDirectory(dir.resolve("fabric"));
        context.hugetlbfsDirectory("none");
        if (null != faults)
        {
            context.faultInjection(faults);
        }
        return context;
    }

    RdmaChannelParams params(final String endpoint, final String... overrides)
    {
        final Map<String, String> map = new HashMap<>(extraParams);
        map.put("endpoint", endpoint);
        map.put("provider", provider);
        for (int i = 0; i < overrides.length; i += 2)
        {
            map.put(overrides[i], overrides[i + 1]);
        }
        return RdmaChannelParams.parse(map);
    }

    /** A subscription shares the rig's liveness settings but not the publication's flow-control keys. */
    RdmaChannelParams subscriptionParams(final String... overrides)
    {
        final Map<String, String> map = new HashMap<>(extraParams);
        map.remove("fc");
        map.remove("gtag");
        map.remove("window");
        map.put("provider", provider);
        for (int i = 0; i < overrides.length; i += 2)
        {
            map.put(overrides[i], overrides[i + 1]);
        }
        return RdmaChannelParams.parse(map);
    }

    String endpoint()
    {
        return "127.0.0.1:" + sender.controlPort();
    }

    Subscriber addSubscriber(final FaultInjection faults, final byte[] secret, final String... overrides)
    {
        final TestImageSink sink = new TestImageSink();
        final FabricContext fabric = fabricContext(null == faults ? new FaultInjection() : faults);
        if (null != subscriberShmDirectory)
        {
            fabric.shmDirectory(subscriberShmDirectory);
        }
        final String[] all = new String[overrides.length + 2];
        all[0] = "endpoint";
        all[1] = endpoint();
        System.arraycopy(overrides, 0, all, 2, overrides.length);
        final RdmaReceiver receiver = new RdmaReceiver(
            new RdmaChannelContext(support.context, subscriptionParams(all), fabric, secret), STREAM_ID, sink);
        final Subscriber subscriber = new Subscriber(receiver, sink, fabric);
        subscribers.add(subscriber);
        return subscriber;
    }

    Subscriber addSubscriber(final String... overrides)
    {
        return addSubscriber(null, SECRET, overrides);
    }

    void closeSubscriber(final Subscriber subscriber)
    {
        if (!subscriber.closed)
        {
            subscriber.closed = true;
            subscriber.receiver.close();
        }
        subscribers.remove(subscriber);
    }

    /** One duty cycle of everything. */
    int dutyCycle()
    {
        int work = sender.doWork();
        for (final Subscriber subscriber : subscribers)
        {
            if (!subscriber.closed)
            {
                work += subscriber.receiver.doWork();
            }
        }
        return work;
    }

    /** Run duty cycles until the condition holds, sleeping when idle; fail after the timeout. */
    void awaitCondition(final String what, final long timeoutMs, final BooleanSupplier condition)
    {
        final long deadlineNs = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (!condition.getAsBoolean())
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new AssertionError("timed out after " + timeoutMs + " ms waiting for " + what);
            }
            if (0 == dutyCycle())
            {
                sleepMicros(200);
            }
        }
    }

    static void sleepMicros(final long micros)
    {
        java.util.concurrent.locks.LockSupport.parkNanos(TimeUnit.MICROSECONDS.toNanos(micros));
    }

    public void close()
    {
        for (final Subscriber subscriber : new ArrayList<>(subscribers))
        {
            closeSubscriber(subscriber);
        }
        sender.close();
        log.logBuffers().close();
    }
}
