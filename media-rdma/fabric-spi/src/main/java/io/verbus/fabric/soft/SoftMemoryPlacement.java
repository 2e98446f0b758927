package io.verbus.fabric.soft;

import io.verbus.fabric.FaultInjection;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

/**
 * How a soft device places the bytes of one WRITE (or READ response) into memory: one bulk copy, or, under
 * {@link FaultInjection.WritePlacement}, back to front or in shuffled 8-byte chunks, which RDMA permits
 * because it promises no order within one WRITE. Every placement starts with a release fence so that the
 * bytes of an earlier WRITE are visible before any byte of this one: the ordering between WRITEs that
 * protocols rely on.
 */
public final class SoftMemoryPlacement
{
    private static final int CHUNK_BYTES = 8;

    private SoftMemoryPlacement()
    {
    }

    /**
     * Copy {@code length} bytes.
     */
    public static void place(
        final MemorySegment source,
        final long sourceOffset,
        final MemorySegment target,
        final long targetOffset,
        final long length,
        final FaultInjection.WritePlacement placement)
    {
        VarHandle.releaseFence();
        switch (placement)
        {
            case IN_ORDER -> MemorySegment.copy(source, sourceOffset, target, targetOffset, length);
            case REVERSE -> reverse(source, sourceOffset, target, targetOffset, length);
            case SHUFFLED -> shuffled(source, sourceOffset, target, targetOffset, length);
            default -> throw new IllegalStateException("unknown placement " + placement);
        }
    }

    /**
     * Busy-wait {@code ns} (the cross-WRITE fault's hold, so an observer has time to see the later WRITE alone).
     */
    public static void hold(final long ns)
    {
        final long deadlineNs = System.nanoTime() + ns;
        while (System.nanoTime() - deadlineNs < 0)
        {
            Thread.onSpinWait();
        }
    }

    private static void reverse(
        final MemorySegment source, final long sourceOffset, final MemorySegment target, final long targetOffset,
        final long length)
    {
        for (long i = length - 1; i >= 0; i--)
        {
            target.set(ValueLayout.JAVA_BYTE, targetOffset + i, source.get(ValueLayout.JAVA_BYTE, sourceOffset + i));
        }
    }

    private static void shuffled(
        final MemorySegment source, final long sourceOffset, final MemorySegment target, final long targetOffset,
        final long length)
    {
        final long chunks = (length + CHUNK_BYTES - 1) / CHUNK_BYTES;
        if (chunks == 0)
        {
            return;
        }
        // Visit chunk (i * step + start) mod chunks: a permutation when gcd(step, chunks) == 1.
        long step = (chunks / 2) | 1;
        while (gcd(step, chunks) != 1)
        {
            step += 2;
        }
        final long start = chunks / 3;
        for (long i = 0; i < chunks; i++)
        {
            final long chunk = (i * step + start) % chunks;
            final long offset = chunk * CHUNK_BYTES;
            final long bytes = Math.min(CHUNK_BYTES, length - offset);
            MemorySegment.copy(source, sourceOffset + offset, target, targetOffset + offset, bytes);
        }
    }

    private static long gcd(final long a, final long b)
    {
        long x = a;
        long y = b;
        while (y != 0)
        {
            final long t = x % y;
            x = y;
            y = t;
        }
        return x;
    }
}
