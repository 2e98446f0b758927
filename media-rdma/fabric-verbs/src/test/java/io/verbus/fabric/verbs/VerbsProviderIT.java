package io.verbus.fabric.verbs;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.LinkLayer;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.QueuePairState;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import io.verbus.tools.VerbsWriteLatency;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.lang.foreign.MemorySegment;
import java.lang.management.ManagementFactory;
import java.net.InetAddress;
import java.util.concurrent.TimeUnit;

import static java.lang.foreign.ValueLayout.JAVA_BYTE;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The verbs provider on a real RDMA device: the Soft-RoCE guest runs this (softroce/run.sh); it needs a
 * device, so surefire does not pick it up on hosts without one. Two QPs on one device, connected to each other.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
// The guest runs the classes in this order: the latency loop warms the JIT on the post/poll path first.
@Order(2)
class VerbsProviderIT
{
    private static final long WAIT_NS = TimeUnit.SECONDS.toNanos(20);

    private VerbsFabric fabric;
    private Device device;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private QueuePair a;
    private QueuePair b;
    private MemorySegment memory;
    private MemoryRegion region;
    private final WorkRequestBatch batch = new WorkRequestBatch(8);
    private final WorkCompletion[] completions = WorkCompletion.newArray(16);

    @BeforeEach
    void connectTwoQueuePairs()
    {
        fabric = VerbsFabric.open();
        device = fabric.openDevice();
        pd = device.allocateProtectionDomain();
        cq = device.createCompletionQueue(256);
        final QueuePairConfig config = new QueuePairConfig().completionQueue(cq).maxSendWorkRequests(32)
            .maxInlineData(64).portNumber(device.attributes().ports().getFirst().portNumber());
        a = pd.createQueuePair(config);
        b = pd.createQueuePair(config);
        a.connect(b.localConnectionInfo());
        b.connect(a.localConnectionInfo());
        memory = device.allocateMemory(64 * 1024);
        region = pd.registerMemory(
            memory, AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ);
    }

    @AfterEach
    void close()
    {
        if (null != fabric)
        {
            fabric.close();
        }
    }

    @Test
    void shouldChooseAnActivePortAndTheRoceV2GidOfTheConfiguredAddress() throws Exception
    {
        final PortSelector.PortChoice choice = fabric.portChoice();
        assertEquals(IbvConstants.IBV_PORT_ACTIVE, choice.port().state());
        final String configured = System.getProperty(VerbsConfiguration.ADDRESS_PROP_NAME, "");
        if (choice.isInfiniBand())
        {
            assertTrue(choice.port().lid() != 0, choice.explanation());
        }
        else
        {
            assertEquals(LinkLayer.ETHERNET, device.attributes().ports().getFirst().linkLayer());
            assertTrue(choice.explanation().contains("RoCE v2"), choice.explanation());
            if (!configured.isEmpty())
            {
                assertArrayEquals(PortSelector.gidOf(InetAddress.getByName(configured)), choice.gid());
            }
        }
        assertEquals(QueuePairState.RTS, a.state());
        assertEquals(QueuePairState.RTS, b.state());
    }

    @Test
    void shouldReadTheInlineCapacityFromTheCreatedQueuePair()
    {
        assertTrue(a.maxInlineData() >= 64, "granted " + a.maxInlineData());
        assertTrue(device.attributes().maxInlineData() >= a.maxInlineData(),
            "device probe " + device.attributes().maxInlineData() + " < QP " + a.maxInlineData());
    }

    @Test
    void shouldWriteInlineAndFromRegisteredMemoryByteForByte()
    {
        final MemorySegment source = memory.asSlice(0, 4096);
        for (int i = 0; i < 4096; i++)
        {
            source.set(JAVA_BYTE, i, (byte)(i * 31 + 7));
        }
        final MemorySegment inlineNative = memory.asSlice(8192, 64);
        for (int i = 0; i < 64; i++)
        {
            inlineNative.set(JAVA_BYTE, i, (byte)(255 - i));
        }
        batch.clear();
        batch.add().write(1, source.address(), 4096, region.lkey(), region.address() + 16384, region.rkey(), 0);
        batch.add().write(2, inlineNative.address(), 64, 0, region.address() + 32768, region.rkey(),
            SendFlags.INLINE | SendFlags.SIGNALED);
        assertEquals(PostResult.OK, a.postSend(batch));
        assertEquals(2, batch.postedCount());

        final WorkCompletion completion = awaitCompletion();
        assertEquals(WorkCompletionStatus.SUCCESS, completion.status(), completion.toString());
        assertEquals(2, completion.wrId(), "one completion for the chain: the signaled WR's");
        assertArrayEquals(source.toArray(JAVA_BYTE), memory.asSlice(16384, 4096).toArray(JAVA_BYTE));
        assertArrayEquals(inlineNative.toArray(JAVA_BYTE), memory.asSlice(32768, 64).toArray(JAVA_BYTE));
    }

    @Test
    void shouldRefuseAnInlineWriteLongerThanTheGrantedCapacity()
    {
        batch.clear().add().write(1, memory.address(), a.maxInlineData() + 1, 0, region.address() + 4096,
            region.rkey(), SendFlags.INLINE | SendFlags.SIGNALED);
        assertEquals(PostResult.INLINE_TOO_LONG, a.postSend(batch));
        assertEquals(0, batch.postedCount());
    }

    @Test
    void shouldReportSendQueueFullUntilACompletionCoveringTheSlotsIsPolled()
    {
        final int depth = a.maxSendWorkRequests();
        for (int i = 0; i < depth; i++)
        {
            final int flags = SendFlags.INLINE | (i == depth - 1 ? SendFlags.SIGNALED : 0);
            batch.clear().add().write(i, memory.address(), 8, 0, region.address() + 4096, region.rkey(), flags);
            assertEquals(PostResult.OK, a.postSend(batch), "WR " + i + " of " + depth);
        }
        batch.clear().add().write(depth, memory.address(), 8, 0, region.address() + 4096, region.rkey(),
            SendFlags.INLINE | SendFlags.SIGNALED);
        assertEquals(PostResult.SEND_QUEUE_FULL, a.postSend(batch));
        assertEquals(0, batch.postedCount());

        final WorkCompletion completion = awaitCompletion();
        assertTrue(completion.isSuccess(), completion.toString());
        assertEquals(depth - 1, completion.wrId());
        assertEquals(PostResult.OK, a.postSend(batch));
        assertTrue(awaitCompletion().isSuccess());
    }

    @Test
    void shouldReachAZeroAllocationSteadyStateWhenPostingAndPolling()
    {
        final com.sun.management.ThreadMXBean threads =
            (com.sun.management.ThreadMXBean)ManagementFactory.getThreadMXBean();
        final VerbsWriteLatency.Pinger pinger = new VerbsWriteLatency.Pinger(a, b, cq, region.rkey(),
            region.address(), region.address() + 1024, memory.asSlice(2048, 64), memory.asSlice(3072, 64), memory, 64);
        for (int i = 0; i < 3_000; i++)
        {
            pinger.roundTrip();
        }
        // Under an emulated CPU the JIT may still be compiling after the warm-up (a deoptimisation or a late
        // compile allocates once); steady state means some whole window of 1,000 round trips allocates nothing.
        final long[] windows = new long[5];
        boolean zero = false;
        for (int window = 0; window < windows.length && !zero; window++)
        {
            final long before = threads.getCurrentThreadAllocatedBytes();
            for (int i = 0; i < 1_000; i++)
            {
                pinger.roundTrip();
            }
            windows[window] = threads.getCurrentThreadAllocatedBytes() - before;
            zero = windows[window] == 0;
        }
        pinger.drain();
        assertTrue(zero, "bytes allocated per window of 2,000 posts + polls: " + java.util.Arrays.toString(windows));
    }

    @Test
    void shouldFailWithRemoteAccessErrorOnABadRkeyAndFlushLaterPosts()
    {
        batch.clear().add().write(7, memory.address(), 8, 0, region.address() + 4096, region.rkey() + 1,
            SendFlags.INLINE | SendFlags.SIGNALED);
        assertEquals(PostResult.OK, a.postSend(batch));
        final WorkCompletion failed = awaitCompletion();
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, failed.status(), failed.toString());
        assertEquals(7, failed.wrId());
        assertEquals(QueuePairState.ERR, a.state());

        batch.clear().add().write(8, memory.address(), 8, 0, region.address() + 4096, region.rkey(),
            SendFlags.INLINE | SendFlags.SIGNALED);
        assertEquals(PostResult.OK, a.postSend(batch));
        final WorkCompletion flushed = awaitCompletion();
        assertEquals(WorkCompletionStatus.WR_FLUSH_ERR, flushed.status(), flushed.toString());
        assertEquals(8, flushed.wrId());

        // The async event fd is non-blocking: draining returns at once whatever rxe reported.
        final long start = System.nanoTime();
        final int events = ((VerbsDevice)device).pollAsyncEvents(null);
        assertTrue(events >= 0);
        assertTrue(System.nanoTime() - start < TimeUnit.SECONDS.toNanos(5));
    }

    @Test
    void shouldSayWhetherTheDevicePlacesWriteDataInOrder()
    {
        // rxe promises no order within a WRITE; hardware may. Either way the call must answer, not fail.
        final boolean inOrder = ((VerbsQueuePair)a).isWriteDataPlacedInOrder();
        if ("rxe0".equals(device.attributes().name()))
        {
            assertFalse(inOrder);
        }
    }

    private WorkCompletion awaitCompletion()
    {
        final long deadline = System.nanoTime() + WAIT_NS;
        while (System.nanoTime() < deadline)
        {
            if (cq.poll(completions, 1) == 1)
            {
                return completions[0];
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within 20 s");
    }
}
