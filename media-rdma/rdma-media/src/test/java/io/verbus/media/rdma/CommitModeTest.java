package io.verbus.media.rdma;

import io.verbus.fabric.DeviceAttributes;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FaultInjection;
import io.verbus.fabric.WorkRequest;
import io.verbus.fabric.WorkRequestOpcode;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What {@code commit=auto} chooses on which device, how both ends agree, and the immediate's encoding of a position.
 */
class CommitModeTest
{
    private static DeviceAttributes device(final String name, final String provider)
    {
        return new DeviceAttributes(name, provider, 64, 1024, 4096, 256, 1 << 30, 1L << 40, true, List.of());
    }

    @Test
    void shouldChooseImmOnSoftRoceAndCounterOnOrderedDevices()
    {
        final CommitMode.Choice rxe = CommitMode.auto(device("rxe0", "verbs"), null);
        assertEquals(CommitMode.IMM, rxe.mode());
        assertTrue(rxe.reason().contains("Soft-RoCE"), rxe.reason());
        assertEquals(CommitMode.COUNTER, CommitMode.auto(device("mlx5_0", "verbs"), null).mode());
        assertEquals(CommitMode.COUNTER, CommitMode.auto(device("shm0", "shm"), new FabricContext()).mode());
        assertEquals(CommitMode.COUNTER, CommitMode.auto(device("tcp0", "tcp"), new FabricContext()).mode());
    }

    @Test
    void shouldChooseImmOnDevicesListedAsUnorderedAndUnderTheCrossWriteFault()
    {
        final String previous = System.setProperty(CommitMode.UNORDERED_DEVICES_PROP_NAME, "mlx5_4, bnxt");
        try
        {
            assertEquals(CommitMode.IMM, CommitMode.auto(device("mlx5_4", "verbs"), null).mode());
            assertEquals(CommitMode.IMM, CommitMode.auto(device("bnxt_re0", "verbs"), null).mode());
            assertEquals(CommitMode.COUNTER, CommitMode.auto(device("mlx5_0", "verbs"), null).mode());
        }
        finally
        {
            if (null == previous)
            {
                System.clearProperty(CommitMode.UNORDERED_DEVICES_PROP_NAME);
            }
            else
            {
                System.setProperty(CommitMode.UNORDERED_DEVICES_PROP_NAME, previous);
            }
        }
        final FabricContext faulty = new FabricContext()
            .faultInjection(new FaultInjection().crossWritePlacement(0.1, 1, 0));
        assertEquals(CommitMode.IMM, CommitMode.auto(device("shm0", "shm"), faulty).mode());
    }

    @Test
    void shouldLetAnExplicitModeWinOverAutoAndRefuseTwoDifferentExplicitModes()
    {
        final CommitMode.Choice localCounter = new CommitMode.Choice(CommitMode.COUNTER, "local");
        final CommitMode.Choice localImm = new CommitMode.Choice(CommitMode.IMM, "local");
        assertEquals(CommitMode.IMM, CommitMode.agree(CommitMode.AUTO, CommitMode.IMM.code(), localCounter).mode());
        assertEquals(CommitMode.COUNTER,
            CommitMode.agree(CommitMode.AUTO, CommitMode.COUNTER.code(), localImm).mode());
        assertEquals(CommitMode.IMM, CommitMode.agree(CommitMode.IMM, CommitMode.AUTO.code(), localCounter).mode());
        assertEquals(CommitMode.COUNTER,
            CommitMode.agree(CommitMode.COUNTER, CommitMode.AUTO.code() | CommitMode.AUTO_PREFERS_IMM_FLAG,
            localImm).mode());
        // auto on both ends: imm when either device asks for it
        assertEquals(CommitMode.IMM, CommitMode.agree(CommitMode.AUTO, CommitMode.AUTO.code(), localImm).mode());
        assertEquals(CommitMode.IMM, CommitMode.agree(CommitMode.AUTO,
            CommitMode.AUTO.code() | CommitMode.AUTO_PREFERS_IMM_FLAG, localCounter).mode());
        assertEquals(CommitMode.COUNTER,
            CommitMode.agree(CommitMode.AUTO, CommitMode.AUTO.code(), localCounter).mode());

        final IllegalStateException mismatch = assertThrows(IllegalStateException.class,
            () -> CommitMode.agree(CommitMode.COUNTER, CommitMode.IMM.code(), localCounter));
        assertEquals("the publisher commits with commit=imm but this subscription requires commit=counter: both " +
            "ends must use the same commit mode (or one of them commit=auto)", mismatch.getMessage());
    }

    @Test
    void shouldCarryThePositionInTheImmediateAcrossThe32BitWrap()
    {
        final long[] bases = { 0, 4096, (1L << 37) - 64, 5L << 37, Long.MAX_VALUE / 2 & ~31L };
        for (final long base : bases)
        {
            for (final long ahead : new long[]{ 0, 32, 65536, 1L << 30, (2L << 30) - 32 })
            {
                final long position = base + ahead;
                assertEquals(position, ImmediateCommit.positionOf(ImmediateCommit.immediateOf(position), base),
                    "base " + base + " ahead " + ahead);
            }
        }
        // a position behind the base comes back far ahead, so the image's range check refuses it
        assertTrue(ImmediateCommit.positionOf(ImmediateCommit.immediateOf(4064), 4096) - 4096 > (1L << 36));
    }

    @Test
    void shouldKeepWithinTheSubscribersReceiveCreditsAndMarkOnlyNewPositions()
    {
        final ImmediateCommit commit = new ImmediateCommit(2);
        final WorkRequest wr = new WorkRequest();
        wr.write(1, 0, 24, 0, 0, 0, 0);
        assertTrue(commit.markIfNew(wr, 0));
        assertEquals(WorkRequestOpcode.RDMA_WRITE_WITH_IMM, wr.opcode());
        commit.onPosted(0); // the first immediate, at the join position
        assertTrue(commit.hasCredit(0));
        wr.write(2, 0, 24, 0, 0, 0, 0);
        assertTrue(commit.markIfNew(wr, 64));
        commit.onPosted(64);
        assertTrue(commit.hasCredit(0));
        commit.onPosted(128);
        assertFalse(commit.hasCredit(0), "two immediates beyond what the subscriber consumed");
        assertEquals(1, commit.creditStalls);
        assertTrue(commit.hasCredit(64), "the subscriber consumed to 64: it reaped that immediate");
        final WorkRequest heartbeat = new WorkRequest();
        heartbeat.write(3, 0, 24, 0, 0, 0, 0);
        assertFalse(commit.markIfNew(heartbeat, 128), "a heartbeat at the same position takes no RECV");
        assertEquals(WorkRequestOpcode.RDMA_WRITE, heartbeat.opcode());
    }
}
