package io.verbus.media.rdma;

import io.aeron.FragmentAssembler;
import io.verbus.ExclusivePublication;
import io.verbus.MediaDriver;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rdma media behind bus-core's standalone driver ({@code io.verbus.MediaDriver}, {@code Verbus.connect}), over the
 * {@code shm} provider, in one JVM: a client's {@code rdma:} publication is sent by the driver's sender, and two
 * clients' subscriptions to it are served by one driver-side rdma subscription bridged into a log they share.
 */
class RdmaStandaloneDriverTest
{
    @TempDir
    Path dir;

    @Test
    void shouldServeClientsRdmaPublicationAndSubscriptionsWithTheDriversMedia()
    {
        final String driverDir = dir.resolve("driver").toString();
        try (MediaDriver driver = MediaDriver.launch(new Verbus.Context().dir(driverDir)
                .threadingMode(ThreadingMode.SHARED).idleStrategy("sleeping"));
            Verbus publisher = Verbus.connect(new Verbus.Context().dir(driverDir));
            Verbus clientA = Verbus.connect(new Verbus.Context().dir(driverDir));
            Verbus clientB = Verbus.connect(new Verbus.Context().dir(driverDir)))
        {
            final ExclusivePublication pub = publisher.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k", 4001);
            final int port = RdmaVerbusTest.controlPort(publisher.countersReader());
            assertTrue(port > 0, "the driver's rdma publication shows its control port in the shared counters");
            final String channel = "rdma:endpoint=127.0.0.1:" + port + "|provider=shm";
            final Subscription subA = clientA.addSubscription(channel, 4001);
            final Subscription subB = clientB.addSubscription(channel, 4001);
            final long connectDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (!(pub.isConnected() && 1 == subA.imageCount() && 1 == subB.imageCount()))
            {
                assertTrue(System.nanoTime() < connectDeadline, "not connected: " + pub.isConnected() + " " +
                    subA.imageCount() + " " + subB.imageCount());
                RdmaRig.sleepMicros(1000);
            }
            // The clients read the driver's copy of the image, but it names the publisher as the rdma image does.
            assertEquals("rdma:127.0.0.1:" + port, subA.imageAtIndex(0).sourceIdentity());
            assertEquals("rdma:127.0.0.1:" + port, subB.imageAtIndex(0).sourceIdentity());

            final int messages = 10_000;
            final long[][] next = { { 0 }, { 0 } };
            final String[] error = new String[1];
            final FragmentAssembler[] assemblers = new FragmentAssembler[2];
            for (int i = 0; i < 2; i++)
            {
                final long[] expected = next[i];
                assemblers[i] = new FragmentAssembler((buffer, offset, length, header) ->
                {
                    final long sequence = buffer.getLong(offset);
                    if (sequence != expected[0] || length != length(sequence))
                    {
                        error[0] = "sequence " + sequence + " length " + length + ", expected " + expected[0];
                    }
                    for (int b = 8; b < length && null == error[0]; b++)
                    {
                        if (buffer.getByte(offset + b) != (byte)(sequence + b))
                        {
                            error[0] = "sequence " + sequence + ": byte " + b + " corrupt";
                        }
                    }
                    expected[0]++;
                });
            }
            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(4096));
            final long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            for (long sequence = 0; sequence < messages; sequence++)
            {
                final int length = length(sequence);
                message.putLong(0, sequence);
                for (int b = 8; b < length; b++)
                {
                    message.putByte(b, (byte)(sequence + b));
                }
                while (pub.offer(message, 0, length) < 0)
                {
                    subA.poll(assemblers[0], 100);
                    subB.poll(assemblers[1], 100);
                    assertTrue(System.nanoTime() < deadline, "stuck at " + sequence);
                }
            }
            while (next[0][0] < messages || next[1][0] < messages)
            {
                subA.poll(assemblers[0], 100);
                subB.poll(assemblers[1], 100);
                assertTrue(System.nanoTime() < deadline, "received " + next[0][0] + " and " + next[1][0]);
            }
            assertNull(error[0]);
            assertTrue(driver.clientCount() >= 3);
        }
    }

    private static int length(final long sequence)
    {
        return 0 == sequence % 500 && sequence > 0 ? 3000 : 8 + (int)(sequence % 300);
    }
}
