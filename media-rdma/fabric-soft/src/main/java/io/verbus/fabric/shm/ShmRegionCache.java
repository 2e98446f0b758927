package io.verbus.fabric.shm;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;

import static io.verbus.fabric.shm.ShmLayout.ENTRY_LENGTH;
import static io.verbus.fabric.shm.ShmLayout.ENTRY_VALID;

/**
 * The responder regions one QP has resolved recently, so that a steady stream of WRITEs into the same ring and
 * position block does not re-read and re-check the peer's whole table entry per WR.
 * <p>
 * An entry keeps a private copy of what {@link ShmPeer#resolve} and {@link ShmPeer#target} accepted: the key, the
 * rights, the region's address range, its offset in the file and the mapping. A hit re-reads one word of the
 * peer's table, the entry's {@code key | state} (adjacent ints, one acquire load), and must find the same key still
 * valid: a deregistered region (state revoked or freed) or a reused index (new generation in the key) misses and
 * takes the full check, so revocation is seen on the next WR as before. The range and the file offset come from the
 * private copy, never from the table again, so a peer that rewrites its entry under a valid key cannot move a WRITE:
 * every target is still checked against the length of the mapping this process made.
 * <p>
 * Owned by the thread that runs the QP's send queue.
 */
final class ShmRegionCache
{
    private static final VarHandle KEY_AND_STATE = ValueLayout.JAVA_LONG.varHandle();
    private static final int ENTRIES = 2;

    private final int[] keys = new int[ENTRIES];
    private final int[] accessRights = new int[ENTRIES];
    private final long[] regionAddresses = new long[ENTRIES];
    private final long[] regionLengths = new long[ENTRIES];
    private final long[] fileOffsets = new long[ENTRIES];
    private final MemorySegment[] segments = new MemorySegment[ENTRIES];
    private final long[] entryValues = new long[ShmPeer.ENTRY_VALUES];
    private int nextVictim;

    /** The mapping the last successful {@link #resolve} found. */
    private MemorySegment segment;

    /**
     * @return the offset in the region file where {@code [address, address + length)} lives, with {@link #segment()}
     * its mapping, or -1 to refuse the access (a remote access error).
     */
    long resolve(
        final ShmPeer peer, final MemorySegment regionTable, final int rkey, final long address, final int length,
        final int access, final int pdId)
    {
        final long expectedKeyAndState = (long)ENTRY_VALID << 32 | (rkey & 0xFFFF_FFFFL);
        for (int i = 0; i < ENTRIES; i++)
        {
            final MemorySegment cached = segments[i];
            if (null != cached && keys[i] == rkey && (accessRights[i] & access) == access)
            {
                final long entryOffset = (long)(rkey & 0xFFFF) * ENTRY_LENGTH;
                if ((long)KEY_AND_STATE.getAcquire(regionTable, entryOffset) != expectedKeyAndState)
                {
                    segments[i] = null; // revoked or reused: forget it and take the full check
                    break;
                }
                final long regionAddress = regionAddresses[i];
                if (address < regionAddress || length < 0 || address - regionAddress > regionLengths[i] - length)
                {
                    return -1;
                }
                final long fileOffset = fileOffsets[i] + (address - regionAddress);
                if (fileOffset < 0 || fileOffset > cached.byteSize() - length)
                {
                    return -1;
                }
                segment = cached;
                return fileOffset;
            }
        }
        final long fileOffset = peer.resolve(rkey, address, length, access, pdId);
        final MemorySegment mapped = fileOffset < 0 ? null : peer.target(rkey, fileOffset, length, access);
        if (null == mapped)
        {
            return -1;
        }
        remember(peer, rkey, access, pdId, mapped);
        segment = mapped;
        return fileOffset;
    }

    /** @return the mapping of the region the last successful {@link #resolve} found. */
    MemorySegment segment()
    {
        return segment;
    }

    /** Forget every entry (the QP connects to another peer, or closes). */
    void clear()
    {
        java.util.Arrays.fill(segments, null);
        segment = null;
    }

    private void remember(
        final ShmPeer peer, final int rkey, final int access, final int pdId, final MemorySegment mapped)
    {
        if (!peer.readEntry(rkey, access, pdId, entryValues))
        {
            return; // changed between the two reads: serve this WR, cache nothing
        }
        int i = nextVictim;
        for (int j = 0; j < ENTRIES; j++)
        {
            if (null == segments[j])
            {
                i = j;
                break;
            }
        }
        nextVictim = (i + 1) % ENTRIES;
        keys[i] = rkey;
        // A read-only mapping (a peer's unlinked file) never serves more than READ, whatever the entry says.
        accessRights[i] = (int)entryValues[ShmPeer.ENTRY_VALUE_ACCESS] &
            (mapped.isReadOnly() ? io.verbus.fabric.AccessFlags.REMOTE_READ : -1);
        regionAddresses[i] = entryValues[ShmPeer.ENTRY_VALUE_ADDRESS];
        regionLengths[i] = entryValues[ShmPeer.ENTRY_VALUE_LENGTH];
        fileOffsets[i] = entryValues[ShmPeer.ENTRY_VALUE_FILE_OFFSET];
        segments[i] = mapped;
    }
}
