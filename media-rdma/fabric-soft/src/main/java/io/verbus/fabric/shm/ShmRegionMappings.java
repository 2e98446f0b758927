package io.verbus.fabric.shm;

import io.verbus.fabric.soft.SoftRegionTable;
import org.agrona.collections.IntArrayList;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.util.concurrent.atomic.AtomicInteger;

import static io.verbus.fabric.shm.ShmLayout.ENTRY_KEY_OFFSET;
import static io.verbus.fabric.shm.ShmLayout.ENTRY_LENGTH;
import static io.verbus.fabric.shm.ShmLayout.ENTRY_STATE_OFFSET;
import static io.verbus.fabric.shm.ShmLayout.ENTRY_VALID;

/**
 * The region files of one peer device that this process has mapped: one mapping per rkey in use, each in an arena
 * of its own so that it can be unmapped alone.
 * <p>
 * Why they are unmapped before the peer goes: every mapping is a kernel memory area, and a process has at most
 * {@code vm.max_map_count} of them (65,530 by default), heap growth and thread stacks included. A peer that keeps one
 * connection open and reconnects others over and over registers a fresh region each time; kept until the peer's last
 * connection closed, its mappings grew without bound toward the limit, after which this process could map nothing.
 * So each new mapping first unmaps every mapping of this peer whose region the peer no longer publishes under its key
 * (deregistered, or its table slot reused), and past {@link #MAX_MAPPINGS_PER_PEER} live mappings of that peer or
 * {@link #MAX_MAPPINGS_PER_PROCESS} over all peers a new region is refused (the WR fails with a remote access error,
 * which ends that connection) without being remembered as refused, so that it maps once there is room again. The
 * same sweep runs when a connection to the peer closes (its regions at the peer have usually gone with it), and once
 * a second from the heartbeat thread over every peer ({@link ShmDevice#REVOKED_REGION_SWEEP_PERIOD_NS}), so a region
 * revoked while nothing else happens is unmapped within about a second; not at the limit from a poster's thread,
 * which would take every peer's lock there.
 * <p>
 * A WR of another thread still copying into a mapping being unmapped fails (the JDK stops a closing shared arena's
 * accesses with an exception, which the QP turns into a remote access error): that region is gone at the peer, so a
 * WR that targets it fails on hardware too.
 * <p>
 * Lookups ({@link #find}) take no lock; mapping and unmapping are serialized by the owning {@link ShmPeer}.
 */
final class ShmRegionMappings
{
    /** Live region mappings over all shm peers of this process: a sixth or so of the kernel's default limit. */
    static final int MAX_MAPPINGS_PER_PROCESS = 10_000;
    /** Live region mappings of one peer device, so that one peer cannot take all of the process's. */
    static final int MAX_MAPPINGS_PER_PEER = 4_096;

    /** A region whose file was refused: later uses of its key are refused at once, without another attempt. */
    static final MemorySegment REFUSED = MemorySegment.NULL;

    private static final AtomicInteger LIVE_MAPPINGS = new AtomicInteger();
    private static final VarHandle ENTRY_STATE = ValueLayout.JAVA_INT.varHandle();
    /** An rkey whose table index no region has ({@code 0xFFFF} is past the table's end). */
    private static final int NO_KEY = 0xFFFF;

    private record Mapping(int key, MemorySegment segment, Arena arena)
    {
    }

    private final Mapping[] mappings = new Mapping[SoftRegionTable.MAX_REGIONS];
    private final IntArrayList mappedIndexes = new IntArrayList();
    private final MemorySegment regionTable;
    private boolean refusedAtLimit;

    /**
     * @param regionTable the peer's published region table, which says which keys are still registered.
     */
    ShmRegionMappings(final MemorySegment regionTable)
    {
        this.regionTable = regionTable;
    }

    /**
     * @return the mapping (or {@link #REFUSED}) made for {@code rkey}, or null if none was made for it.
     */
    MemorySegment find(final int rkey)
    {
        final Mapping mapping = mappings[rkey & 0xFFFF];
        return null != mapping && mapping.key == rkey ? mapping.segment : null;
    }

    /**
     * Make room for a new mapping of {@code rkey}: unmap the ones whose regions are gone, then check the limit.
     *
     * @return a fresh arena to map the region's file in, or null past {@link #MAX_MAPPINGS_PER_PROCESS} or
     * {@link #MAX_MAPPINGS_PER_PEER}.
     */
    Arena arenaFor(final int rkey)
    {
        unmapRevoked(rkey);
        if (LIVE_MAPPINGS.get() >= MAX_MAPPINGS_PER_PROCESS || mappedIndexes.size() >= MAX_MAPPINGS_PER_PEER)
        {
            return null;
        }
        return Arena.ofShared();
    }

    /** @return true for the first refusal at the limit since this peer last mapped a region (to report it once). */
    boolean firstRefusalSinceLastMapping()
    {
        final boolean first = !refusedAtLimit;
        refusedAtLimit = true;
        return first;
    }

    /**
     * Record what {@link #arenaFor} led to: the region's file mapped in {@code arena}, or refused (the arena closed
     * here; a refused key is not tried again). Whatever was mapped in the key's slot before, {@link #arenaFor}
     * unmapped.
     */
    void record(final int rkey, final MemorySegment segment, final Arena arena)
    {
        final int index = rkey & 0xFFFF;
        if (REFUSED == segment)
        {
            arena.close();
            mappings[index] = new Mapping(rkey, REFUSED, null);
            return;
        }
        LIVE_MAPPINGS.incrementAndGet();
        refusedAtLimit = false;
        mappedIndexes.addInt(index);
        mappings[index] = new Mapping(rkey, segment, arena);
    }

    /** @return region mappings this peer holds now. */
    int size()
    {
        return mappedIndexes.size();
    }

    /** @return region mappings over all peers of this process now. */
    static int liveMappingsInProcess()
    {
        return LIVE_MAPPINGS.get();
    }

    /** Unmap everything (the peer's last connection closed). */
    void close()
    {
        while (!mappedIndexes.isEmpty())
        {
            unmap(mappedIndexes.getInt(mappedIndexes.size() - 1));
        }
    }

    /** Unmap every mapping whose rkey the peer's table no longer holds valid (deregistered, or its slot reused). */
    void unmapRevoked()
    {
        unmapRevoked(NO_KEY);
    }

    private void unmapRevoked(final int rkey)
    {
        for (int i = mappedIndexes.size() - 1; i >= 0; i--)
        {
            final int index = mappedIndexes.getInt(i);
            final Mapping mapping = mappings[index];
            final long base = (long)index * ENTRY_LENGTH;
            if ((rkey & 0xFFFF) == index ||
                (int)ENTRY_STATE.getAcquire(regionTable, base + ENTRY_STATE_OFFSET) != ENTRY_VALID ||
                regionTable.get(ValueLayout.JAVA_INT, base + ENTRY_KEY_OFFSET) != mapping.key)
            {
                unmap(index);
            }
        }
    }

    /**
     * Forget the index whatever its slot holds now, so {@link #close()} always ends: a slot that a refusal or a fault
     * left without a live mapping while its index was still listed made close() spin for good (seen once a peer had
     * truncated its region table under this mapping).
     */
    private void unmap(final int index)
    {
        final Mapping mapping = mappings[index];
        mappedIndexes.removeInt(index);
        if (null == mapping || null == mapping.arena)
        {
            return;
        }
        mappings[index] = null;
        LIVE_MAPPINGS.decrementAndGet();
        mapping.arena.close();
    }
}
