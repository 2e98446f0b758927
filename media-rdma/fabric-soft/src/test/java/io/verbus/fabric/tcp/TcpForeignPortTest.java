package io.verbus.fabric.tcp;

import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairConnectionInfo;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A QP pointed at a port where no Verbus NIC listens (any TCP service) sends it its hello and nothing
 * else: no request frame, no data, because a dialer transmits only once the responder NIC answered the hello. The
 * WR then fails once the connect timeout passes.
 */
class TcpForeignPortTest
{
    @Test
    void shouldSendNothingButTheHelloToAPortThatIsNoVerbusNic() throws Exception
    {
        try (ServerSocket victim = new ServerSocket(0, 8, InetAddress.getLoopbackAddress());
            Fabric fabric = Fabrics.open("tcp", new FabricContext().tcpAddress("127.0.0.1")
                .tcpConnectTimeoutNs(TimeUnit.MILLISECONDS.toNanos(500)));
            Device device = fabric.openDevice())
        {
            final CompletableFuture<Integer> received = CompletableFuture.supplyAsync(() -> drain(victim));
            final var pd = device.allocateProtectionDomain();
            final CompletionQueue cq = device.createCompletionQueue(16);
            final QueuePair qp = pd.createQueuePair(new QueuePairConfig().completionQueue(cq)
                .maxSendWorkRequests(16).maxReceiveWorkRequests(1));
            final byte[] gid = new byte[16];
            gid[10] = (byte)0xFF;
            gid[11] = (byte)0xFF;
            System.arraycopy(InetAddress.getLoopbackAddress().getAddress(), 0, gid, 12, 4);
            qp.connect(new QueuePairConnectionInfo(77, 0, victim.getLocalPort(), gid, 4096));

            final MemorySegment data = device.allocateMemory(4096);
            data.fill((byte)0x42);
            final MemoryRegion source = pd.registerMemory(data, 0);
            final WorkRequestBatch batch = new WorkRequestBatch(2);
            batch.clear().add().write(1, data.address(), 4096, source.lkey(), 0x1000, 5, SendFlags.SIGNALED);
            assertEquals(PostResult.OK, qp.postSend(batch));

            final WorkCompletion[] completions = WorkCompletion.newArray(1);
            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (0 == cq.poll(completions, 1))
            {
                if (System.nanoTime() > deadlineNs)
                {
                    fail("the WR never failed");
                }
                LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
            }
            assertNotEquals(WorkCompletionStatus.SUCCESS, completions[0].status());
            qp.close();
            final int bytes = received.get(10, TimeUnit.SECONDS);
            assertTrue(bytes <= TcpWire.HELLO_LENGTH, "the foreign port got " + bytes + " bytes: only the hello");
        }
    }

    /** Accepts one connection and counts what arrives until it closes or is quiet for two seconds. */
    private static int drain(final ServerSocket server)
    {
        try (Socket socket = server.accept())
        {
            socket.setSoTimeout(2000);
            final InputStream in = socket.getInputStream();
            final byte[] buffer = new byte[65536];
            int total = 0;
            try
            {
                int read;
                while ((read = in.read(buffer)) >= 0)
                {
                    total += read;
                }
            }
            catch (final SocketTimeoutException quiet)
            {
                // nothing more came
            }
            return total;
        }
        catch (final Exception ex)
        {
            return -1;
        }
    }
}
