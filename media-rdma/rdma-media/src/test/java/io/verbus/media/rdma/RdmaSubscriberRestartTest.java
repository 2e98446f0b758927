package io.verbus.media.rdma;

import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.soft.SoftDevice;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A subscriber killed and restarted 50 times mid-stream while the publisher keeps publishing: every incarnation
 * receives an intact stream from where it joined, and the publisher ends with exactly what it started with: no
 * QP, no region (checked in the provider's tables), no file descriptor and no mapping left behind.
 */
@Tag("slow") // soak, cross-process or fuzz: left out of ./verbus test --quick
class RdmaSubscriberRestartTest
{
    private static final int RESTARTS = 50;

    @TempDir
    Path dir;

    @Test
    @Timeout(value = 180, unit = TimeUnit.SECONDS)
    void shouldSurviveFiftySubscriberRestartsWithoutLeaking() throws IOException
    {
        try (RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "10ms", "timeout", "250ms"))
        {
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final long[] sequence = { 0 };
            final SoftDevice publisherDevice = (SoftDevice)rig.sender.endpoint().device();
            long baselineFds = -1;
            long baselineMaps = -1;
            long delivered = 0;

            for (int restart = 0; restart < RESTARTS; restart++)
            {
                final FaultInjection faults = new FaultInjection();
                final RdmaRig.Subscriber subscriber = rig.addSubscriber(faults, RdmaRig.SECRET);
                rig.awaitCondition("incarnation " + restart + " admitted", 20_000,
                    () -> subscriber.image() != null && rig.sender.subscriberCount() == 1 && rig.log.isConnected());
                final SubscriberConnection admitted = rig.sender.lastAdmittedConnection();
                final TestImageSink.TestImage image = subscriber.image();
                final MessageStream.Checker checker = new MessageStream.Checker(-1);

                // Mid-stream: keep publishing while this incarnation reads at least a few hundred messages.
                final long target = 300;
                rig.awaitCondition("incarnation " + restart + " receives", 20_000, () ->
                {
                    for (int i = 0; i < 32; i++)
                    {
                        final int length = MessageStream.encode(message, sequence[0]);
                        if (rig.appender.offer(message, 0, length) > 0)
                        {
                            sequence[0]++;
                        }
                    }
                    rig.dutyCycle();
                    image.poll(checker, 256);
                    return checker.received >= target;
                });
                assertNull(checker.failure, "incarnation " + restart);
                assertNull(image.error);
                delivered += checker.received;

                if (0 == (restart & 1))
                {
                    // Killed hard: the device goes silent and the receiver stops working; the socket stays open,
                    // so the publisher must find out from the fabric (QP error) or the heartbeat timeout.
                    faults.kill();
                    subscriber.closed = true;
                    rig.awaitCondition("publisher drops killed incarnation " + restart, 20_000,
                        () -> rig.sender.subscriberCount() == 0);
                    subscriber.closed = false;
                    rig.closeSubscriber(subscriber);
                }
                else
                {
                    rig.closeSubscriber(subscriber);
                    rig.awaitCondition("publisher drops closed incarnation " + restart, 20_000,
                        () -> rig.sender.subscriberCount() == 0);
                }
                rig.awaitCondition("publisher released incarnation " + restart, 20_000,
                    () -> rig.sender.queuePairCount() == 0 && rig.sender.registeredRegionCount() == 0 &&
                        rig.sender.protectionDomainCount() == 0);
                assertFalse(admitted.statusRegion.isRegistered());
                assertNull(publisherDevice.regionTable().lookup(admitted.statusRegion.lkey()),
                    "the provider no longer knows the status slot's key");
                assertNull(publisherDevice.queuePair(admitted.qp.qpNumber()), "the provider destroyed the QP");
                assertEquals(0, subscriber.receiver.registeredRegionCount());
                assertEquals(0, subscriber.receiver.queuePairCount());
                assertEquals(0, subscriber.receiver.protectionDomainCount());

                if (0 == restart)
                {
                    baselineFds = openFileDescriptors();
                    baselineMaps = mappings();
                }
            }

            final long fds = openFileDescriptors();
            final long maps = mappings();
            assertTrue(fds <= baselineFds + 4, "file descriptors leaked: " + baselineFds + " -> " + fds);
            assertTrue(maps <= baselineMaps + 8, "mappings leaked: " + baselineMaps + " -> " + maps);
            assertTrue(delivered >= RESTARTS * 300L);
            System.out.printf("rdma restarts: %d incarnations, %,d messages checked, fds %d -> %d, maps %d -> %d%n",
                RESTARTS, delivered, baselineFds, fds, baselineMaps, maps);
        }
    }

    static long openFileDescriptors() throws IOException
    {
        try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd")))
        {
            return fds.count();
        }
    }

    static long mappings() throws IOException
    {
        try (Stream<String> lines = Files.lines(Path.of("/proc/self/maps")))
        {
            return lines.count();
        }
    }
}
