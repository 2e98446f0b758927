package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * What an shm initiator keeps mapped of a peer that reconnects over and over, or registers region after region: each
 * mapping is a kernel memory area, and a process has at most {@code vm.max_map_count} of them. Counted in
 * {@code /proc/self/maps}, the way the kernel counts them.
 */
class ShmPeerMappingTest
{
    private static final int RING_LENGTH = 64 * 1024;
    private static final int RECONNECTS = 200;
    private static final int WRITABLE = AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE;

    private ShmTwoDevices devices;
    private ProtectionDomain responderPd;
    private ProtectionDomain initiatorPd;
    private CompletionQueue initiatorCq;
    private MemorySegment ring;
    private MemorySegment local;
    private MemoryRegion localRegion;
    private final WorkRequestBatch batch = new WorkRequestBatch(1);
    private final WorkCompletion[] completions = WorkCompletion.newArray(4);

    @BeforeEach
    void before() throws IOException
    {
        devices = new ShmTwoDevices("verbus-fabric-mappings-");
        responderPd = devices.responder.allocateProtectionDomain();
        initiatorPd = devices.initiator.allocateProtectionDomain();
        initiatorCq = devices.initiator.createCompletionQueue(64);
        ring = devices.responder.allocateMemory(RING_LENGTH);
        local = devices.initiator.allocateMemory(4096);
        localRegion = initiatorPd.registerMemory(local, AccessFlags.LOCAL_WRITE);
    }

    @AfterEach
    void after() throws IOException
    {
        devices.close();
    }

    @Test
    void shouldUnmapAReconnectingPeersFilesOnceItsRegionAndConnectionAreGone() throws IOException
    {
        final QueuePair[] kept = connect(); // keeps the peer device open throughout, as one live subscriber would
        final MemoryRegion first = responderPd.registerMemory(ring, WRITABLE);
        assertEquals(WorkCompletionStatus.SUCCESS, write(kept[0], first, 64));
        final int mappedAtStart = peerMappings();

        for (int i = 0; i < RECONNECTS; i++)
        {
            // A subscriber that reconnects: a fresh QP pair and a freshly registered ring each time.
            final QueuePair[] pair = connect();
            final MemoryRegion region = responderPd.registerMemory(ring, WRITABLE);
            assertEquals(WorkCompletionStatus.SUCCESS, write(pair[0], region, 64), "reconnect " + i);
            pair[0].close();
            pair[1].close();
            region.deregister();
        }
        assertEquals(WorkCompletionStatus.SUCCESS, write(kept[0], first, 64), "the kept connection still works");

        final int mappedAtEnd = peerMappings();
        assertTrue(mappedAtEnd <= mappedAtStart + 2, "mappings of the peer's files: " + mappedAtStart +
            " at the start, " + mappedAtEnd + " after " + RECONNECTS +
            " reconnects (the old code kept the ring's and the QP's file of each)");
        assertEquals(List.of(), devices.reported);
    }

    @Test
    void shouldUnmapARevokedRegionWhenAConnectionToThePeerCloses()
    {
        final QueuePair[] kept = connect(); // the peer stays open throughout
        final MemoryRegion first = responderPd.registerMemory(ring, WRITABLE);
        assertEquals(WorkCompletionStatus.SUCCESS, write(kept[0], first, 64));
        final int before = ShmRegionMappings.liveMappingsInProcess();

        final QueuePair[] pair = connect();
        final MemoryRegion region = responderPd.registerMemory(ring, WRITABLE);
        assertEquals(WorkCompletionStatus.SUCCESS, write(pair[0], region, 64));
        assertEquals(before + 1, ShmRegionMappings.liveMappingsInProcess());
        region.deregister(); // as a subscriber leaving: its ring goes, then its connection
        pair[1].close();
        pair[0].close();
        assertEquals(before, ShmRegionMappings.liveMappingsInProcess(),
            "the revoked region's mapping went with the connection, with no later mapping to sweep it");
        assertEquals(WorkCompletionStatus.SUCCESS, write(kept[0], first, 64), "the kept connection still works");
    }

    @Test
    void shouldUnmapARevokedRegionWhileEveryConnectionStaysOpenAndNothingNewIsMapped()
    {
        final QueuePair[] kept = connect(); // the peer and this connection stay open throughout
        final MemoryRegion first = responderPd.registerMemory(ring, WRITABLE);
        assertEquals(WorkCompletionStatus.SUCCESS, write(kept[0], first, 64));
        final MemoryRegion second = responderPd.registerMemory(ring, WRITABLE);
        assertEquals(WorkCompletionStatus.SUCCESS, write(kept[0], second, 64));
        final int before = ShmRegionMappings.liveMappingsInProcess();

        second.deregister(); // the peer revokes it; nothing here maps another region or closes a connection
        final long deadlineNs = System.nanoTime() + 5 * ShmDevice.REVOKED_REGION_SWEEP_PERIOD_NS;
        while (ShmRegionMappings.liveMappingsInProcess() != before - 1 && System.nanoTime() < deadlineNs)
        {
            Thread.onSpinWait();
        }
        assertEquals(before - 1, ShmRegionMappings.liveMappingsInProcess(),
            "the revoked region's mapping, with every connection open and no new mapping to sweep it");
        assertEquals(WorkCompletionStatus.SUCCESS, write(kept[0], first, 64), "the live region still works");
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, write(connect()[0], second, 64),
            "the revoked one is refused");
    }

    @Test
    void shouldRefuseRegionsPastThePeersShareAndMapAgainOnceThePeerDeregistersSome()
    {
        final QueuePair[] pair = connect();
        final int before = ShmRegionMappings.liveMappingsInProcess();
        final List<MemoryRegion> regions = new ArrayList<>();
        for (int i = 0; i < ShmRegionMappings.MAX_MAPPINGS_PER_PEER; i++)
        {
            final MemoryRegion region = responderPd.registerMemory(ring, WRITABLE);
            regions.add(region);
            assertEquals(WorkCompletionStatus.SUCCESS, write(pair[0], region, 8), "region " + i);
        }
        assertEquals(before + ShmRegionMappings.MAX_MAPPINGS_PER_PEER, ShmRegionMappings.liveMappingsInProcess());

        final MemoryRegion oneTooMany = responderPd.registerMemory(ring, WRITABLE);
        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, write(pair[0], oneTooMany, 8), "past the peer's share");
        assertEquals(1, devices.reported.size(), "the refusal is reported once: " + devices.reported);
        assertTrue(devices.reported.get(0).getMessage().contains("regions of one peer"), devices.reported.toString());

        for (int i = 0; i < regions.size() / 2; i++)
        {
            regions.get(i).deregister();
        }
        final QueuePair[] again = connect(); // the first QP met a remote access error and stays in error
        assertEquals(WorkCompletionStatus.SUCCESS, write(again[0], oneTooMany, 8),
            "the mappings of the deregistered half were dropped to make room, and the refused key was not remembered");
        assertEquals(1, devices.reported.size(), devices.reported.toString());
        assertEquals(before + regions.size() - regions.size() / 2 + 1, ShmRegionMappings.liveMappingsInProcess());
    }

    @Test
    void shouldRefuseRegionsPastTheProcessLimitOverAllPeers()
    {
        final int peers = ShmRegionMappings.MAX_MAPPINGS_PER_PROCESS / ShmRegionMappings.MAX_MAPPINGS_PER_PEER + 1;
        final int before = ShmRegionMappings.liveMappingsInProcess();
        final List<Device> others = new ArrayList<>();
        final List<QueuePair> initiatorQps = new ArrayList<>();
        try
        {
            for (int p = 0; p < peers; p++)
            {
                final Device peer = devices.fabric.openDevice();
                others.add(peer);
                final ProtectionDomain pd = peer.allocateProtectionDomain();
                final MemorySegment memory = peer.allocateMemory(4096);
                final QueuePair[] pair = connect(pd, peer);
                initiatorQps.add(pair[0]);
                for (int i = 0; i < ShmRegionMappings.MAX_MAPPINGS_PER_PEER; i++)
                {
                    final MemoryRegion region = pd.registerMemory(memory, WRITABLE);
                    final WorkCompletionStatus status = write(pair[0], region, 8);
                    if (WorkCompletionStatus.SUCCESS != status)
                    {
                        assertEquals(WorkCompletionStatus.REM_ACCESS_ERR, status);
                        assertEquals(ShmRegionMappings.MAX_MAPPINGS_PER_PROCESS,
                            ShmRegionMappings.liveMappingsInProcess(), "refused at the process's limit");
                        assertEquals(peers - 1, p, "refused at the last peer");
                        assertTrue(devices.reported.get(0).getMessage().contains("10000 of all"),
                            devices.reported.toString());
                        return;
                    }
                }
            }
            fail("no refusal after " + ShmRegionMappings.liveMappingsInProcess() + " mappings");
        }
        finally
        {
            initiatorQps.forEach(QueuePair::close); // the last connection to each peer unmaps its regions
            others.forEach(Device::close);
            assertEquals(0, ShmRegionMappings.liveMappingsInProcess() - before, "mappings left after the test");
        }
    }

    private QueuePair[] connect()
    {
        return connect(responderPd, devices.responder);
    }

    private QueuePair[] connect(final ProtectionDomain targetPd, final Device target)
    {
        final QueuePair responderQp = targetPd.createQueuePair(new QueuePairConfig()
            .completionQueue(target.createCompletionQueue(16)).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
        final QueuePair initiatorQp = initiatorPd.createQueuePair(new QueuePairConfig()
            .completionQueue(initiatorCq).maxSendWorkRequests(16).maxReceiveWorkRequests(1));
        initiatorQp.connect(responderQp.localConnectionInfo());
        responderQp.connect(initiatorQp.localConnectionInfo());
        return new QueuePair[]{ initiatorQp, responderQp };
    }

    private WorkCompletionStatus write(final QueuePair qp, final MemoryRegion target, final int length)
    {
        batch.clear().add().write(7, local.address(), length, localRegion.lkey(), target.address(), target.rkey(),
            SendFlags.SIGNALED);
        return ShmTwoDevices.postAndAwait(qp, batch, initiatorCq, completions);
    }

    /** @return memory areas of this process backed by files of the responder device (its own and the initiator's). */
    private int peerMappings() throws IOException
    {
        final String directory = ((ShmDevice)devices.responder).directory().toString();
        return (int)Files.readAllLines(Path.of("/proc/self/maps")).stream()
            .filter(line -> line.contains(directory)).count();
    }
}
