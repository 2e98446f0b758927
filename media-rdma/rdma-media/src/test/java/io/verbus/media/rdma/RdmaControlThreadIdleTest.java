package io.verbus.media.rdma;

import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An established {@code rdma:} connection's control threads (the endpoint's accept thread, the publication's
 * connection thread, the subscription's thread) sleep in the kernel until something happens: on a host whose cores
 * are given to spinning threads, each wake-up takes a core from one of them (at a 1 s poll each cost about 0.2 ms of
 * CPU a second: a timeout is an exception with its stack trace). Their CPU time must not move while the
 * connection idles, and closing still ends them at once.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
@ExtendWith(RdmaTestProperties.class)
class RdmaControlThreadIdleTest
{
    private static final long IDLE_MS = 3_500;
    /** What a thread blocked in the kernel for the whole idle time may show: nothing, within the clock's grain. */
    private static final long MAX_IDLE_CPU_NS = TimeUnit.MICROSECONDS.toNanos(20);

    @TempDir
    Path dir;

    @Test
    void controlThreadsUseNoCpuWhileAConnectionIdlesAndEndWithTheirChannels() throws InterruptedException
    {
        final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        assertTrue(threads.isThreadCpuTimeSupported(), "per-thread CPU time is needed by this test");
        threads.setThreadCpuTimeEnabled(true);
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED).idleStrategy("sleeping")))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", 6101);
            final int port = RdmaVerbusTest.controlPort(verbus.countersReader());
            final Subscription subscription =
                verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 6101);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!(publication.isConnected() && 1 == subscription.imageCount()))
            {
                assertTrue(System.nanoTime() < deadlineNs, "rdma connection not established");
                Thread.sleep(10);
            }
            Thread.sleep(500); // the handshake's last steps and the first housekeeping settle

            final Map<Thread, Long> before = controlThreadCpu(threads, port);
            assertEquals(3, before.size(), "accept, connection and subscription threads: " + before.keySet());
            Thread.sleep(IDLE_MS);
            final Map<Thread, Long> after = controlThreadCpu(threads, port);
            for (final Map.Entry<Thread, Long> entry : before.entrySet())
            {
                final Long cpuNs = after.get(entry.getKey());
                assertTrue(null != cpuNs, entry.getKey().getName() + " ended while its connection was up");
                final long usedNs = cpuNs - entry.getValue();
                assertTrue(usedNs <= MAX_IDLE_CPU_NS, entry.getKey().getName() + " used " + usedNs +
                    " ns of CPU in " + IDLE_MS + " ms of an idle connection: it wakes up on a timer");
            }

            subscription.close();
            publication.close();
            final long closeDeadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            for (final Thread thread : before.keySet())
            {
                // The endpoint's connection threads are pooled and only return to the pool; the others end.
                if (!thread.getName().startsWith("verbus-rdma-connection-"))
                {
                    thread.join(Math.max(1, TimeUnit.NANOSECONDS.toMillis(closeDeadlineNs - System.nanoTime())));
                    assertTrue(!thread.isAlive(), thread.getName() + " still runs after its channel closed");
                }
            }
        }
    }

    private static Map<Thread, Long> controlThreadCpu(final ThreadMXBean threads, final int port)
    {
        final Map<Thread, Long> cpu = new HashMap<>();
        for (final Thread thread : Thread.getAllStackTraces().keySet())
        {
            final String name = thread.getName();
            if (name.equals("verbus-rdma-sub-6101") || name.equals("verbus-rdma-endpoint-" + port) ||
                name.startsWith("verbus-rdma-connection-" + port + "-"))
            {
                cpu.put(thread, threads.getThreadCpuTime(thread.threadId()));
            }
        }
        return cpu;
    }
}
