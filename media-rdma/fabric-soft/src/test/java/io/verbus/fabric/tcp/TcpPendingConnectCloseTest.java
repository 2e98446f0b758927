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
import io.verbus.fabric.WorkRequestBatch;
import org.junit.jupiter.api.Test;

import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A QP closed while its NIC is still dialing (the SYN not yet answered) leaves quietly: the connection is closed, not
 * half-closed and drained. Before, the NIC called {@code shutdownOutput} and then {@code read} on the unconnected
 * channel, and every duty cycle threw {@code NotYetConnectedException} out of its service loop (seen as a run of
 * failed connects in the netns conformance suite).
 */
class TcpPendingConnectCloseTest
{
    @Test
    void shouldCloseAConnectionStillDialingWithoutAnError() throws Exception
    {
        final List<Throwable> errors = new CopyOnWriteArrayList<>();
        final List<Socket> backlogFillers = new ArrayList<>();
        // A listener that never accepts and whose accept queue is full: Linux drops further SYNs, so a connect to it
        // stays pending (the client retransmits) for as long as the test needs.
        try (ServerSocket silent = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
            Fabric fabric = Fabrics.open("tcp", new FabricContext().tcpAddress("127.0.0.1")
                .tcpConnectTimeoutNs(TimeUnit.SECONDS.toNanos(10)).errorHandler(errors::add));
            Device device = fabric.openDevice())
        {
            for (int i = 0; i < 4; i++)
            {
                final Socket filler = new Socket();
                backlogFillers.add(filler);
                try
                {
                    filler.connect(new InetSocketAddress(silent.getInetAddress(), silent.getLocalPort()), 200);
                }
                catch (final java.io.IOException queueFull)
                {
                    break; // the accept queue is full: SYNs are dropped from here on
                }
            }

            final var pd = device.allocateProtectionDomain();
            final CompletionQueue cq = device.createCompletionQueue(16);
            final QueuePair qp = pd.createQueuePair(new QueuePairConfig().completionQueue(cq)
                .maxSendWorkRequests(16).maxReceiveWorkRequests(1));
            final byte[] gid = new byte[16];
            gid[10] = (byte)0xFF;
            gid[11] = (byte)0xFF;
            System.arraycopy(InetAddress.getLoopbackAddress().getAddress(), 0, gid, 12, 4);
            qp.connect(new QueuePairConnectionInfo(77, 0, silent.getLocalPort(), gid, 4096));
            final MemorySegment data = device.allocateMemory(4096);
            final MemoryRegion source = pd.registerMemory(data, 0);
            final WorkRequestBatch batch = new WorkRequestBatch(2);
            batch.clear().add().write(1, data.address(), 64, source.lkey(), 0x1000, 5, SendFlags.SIGNALED);
            assertEquals(PostResult.OK, qp.postSend(batch));
            Thread.sleep(200); // the NIC thread has started dialing

            qp.close();
            Thread.sleep(500); // many NIC duty cycles with the closed QP's connection in its hands
            assertEquals(0, errors.size(), () -> "the NIC thread reported " + errors.size() + " errors, the first " +
                errors.get(0));
        }
        finally
        {
            for (final Socket filler : backlogFillers)
            {
                filler.close();
            }
        }
    }
}
