package io.verbus.media.rdma;

import io.verbus.fabric.FaultInjection;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The same protocol over the tcp software NIC: fan-out under reordering, and a dropped fabric connection. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaTcpProviderTest
{
    @TempDir
    Path dir;

    private final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);

    @Test
    void shouldReplicateToTwoSubscribersOverTcpWithReorderedWrites()
    {
        final FaultInjection faults = new FaultInjection().writePlacement(FaultInjection.WritePlacement.REVERSE);
        try (RdmaRig rig = new RdmaRig(dir, "tcp", 256 * 1024, faults))
        {
            rig.addSubscriber(new FaultInjection().writePlacement(FaultInjection.WritePlacement.SHUFFLED),
                RdmaRig.SECRET);
            rig.addSubscriber();
            rig.awaitCondition("admitted", 20_000, () -> rig.sender.subscriberCount() == 2 &&
                rig.subscribers.stream().allMatch(s -> s.image() != null) && rig.log.isConnected());
            assertEquals("tcp", rig.sender.providerName());
            final MessageStream.Checker[] checkers = { new MessageStream.Checker(0), new MessageStream.Checker(0) };
            final long total = 100_000;
            long sequence = 0;
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
            while (Math.min(checkers[0].received, checkers[1].received) < total)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new AssertionError("stuck at " + sequence);
                }
                int work = 0;
                for (int i = 0; i < 256 && sequence < total; i++)
                {
                    final int length = MessageStream.encode(message, sequence);
                    if (rig.appender.offer(message, 0, length) < 0)
                    {
                        break;
                    }
                    sequence++;
                    work++;
                }
                work += rig.dutyCycle();
                for (int i = 0; i < 2; i++)
                {
                    work += rig.subscribers.get(i).image().poll(checkers[i], 4096);
                    assertNull(checkers[i].failure);
                }
                if (0 == work)
                {
                    RdmaRig.sleepMicros(100);
                }
            }
        }
    }

    @Test
    void shouldCloseAtOnceOnAFabricConnectionDropAndReconnect()
    {
        final FaultInjection faults = new FaultInjection();
        try (RdmaRig rig = new RdmaRig(dir, "tcp", 64 * 1024, faults, "heartbeat", "10ms", "timeout", "2s"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            rig.awaitCondition("admitted", 20_000, () -> subscriber.image() != null && rig.log.isConnected());
            final TestImageSink.TestImage first = subscriber.image();

            final long droppedAtNs = System.nanoTime();
            faults.dropConnections();
            rig.awaitCondition("image unavailable after the QP error", 10_000, () -> first.closed);
            final long detectMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - droppedAtNs);
            rig.awaitCondition("reconnected", 20_000,
                () -> subscriber.image() != null && subscriber.image() != first && rig.log.isConnected());
            assertTrue(subscriber.receiver.connectionsMade() >= 2);
            System.out.println("rdma tcp: connection drop detected in " + detectMs + " ms (timeout 2000 ms)");
        }
    }
}
