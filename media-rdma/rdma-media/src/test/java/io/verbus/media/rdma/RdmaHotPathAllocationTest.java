package io.verbus.media.rdma;

import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import org.agrona.ExpandableArrayBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** After warm-up, the sender's and receiver's duty cycles (post, poll CQ, status, limits) allocate nothing. */
class RdmaHotPathAllocationTest
{
    @TempDir
    Path dir;

    @Test
    @Timeout(value = 120, unit = TimeUnit.SECONDS)
    void shouldAllocateNothingOnTheDataPathAfterWarmUp()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        try (RdmaRig rig = new RdmaRig(dir, "shm", 1024 * 1024, null, "heartbeat", "1ms"))
        {
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            rig.awaitCondition("admitted", 20_000, () -> subscriber.image() != null && rig.log.isConnected());
            final RdmaSender sender = rig.sender;
            final RdmaReceiver receiver = subscriber.receiver;
            final TestImageSink.TestImage image = subscriber.image();
            final MessageStream.Checker checker = new MessageStream.Checker(0);
            final ExpandableArrayBuffer message = new ExpandableArrayBuffer(2048);
            final long[] sequence = { 0 };

            final Runnable cycle = () ->
            {
                for (int i = 0; i < 16; i++)
                {
                    final int length = MessageStream.encode(message, sequence[0]);
                    if (rig.appender.offer(message, 0, length) > 0)
                    {
                        sequence[0]++;
                    }
                }
                sender.doWork();
                receiver.doWork();
                image.poll(checker, 64);
            };

            for (int i = 0; i < 60_000; i++)
            {
                cycle.run();
            }
            final long threadId = Thread.currentThread().threadId();
            final long before = threads.getThreadAllocatedBytes(threadId);
            for (int i = 0; i < 30_000; i++)
            {
                cycle.run();
            }
            final long allocated = threads.getThreadAllocatedBytes(threadId) - before;
            assertNull(checker.failure);
            assertTrue(checker.received > 30_000, "messages flowed: " + checker.received);
            assertEquals(0, allocated, "bytes allocated on the data path");
        }
    }
}
