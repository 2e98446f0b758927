package io.verbus.fabric.shm;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.soft.SoftRegionTable;
import io.verbus.fabric.soft.SoftSharedReceiveQueue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static io.verbus.fabric.shm.ShmLayout.*;

/**
 * This process's view of another shm device (or of its own, for loopback): its heartbeat, its published
 * region table, and the region files mapped so far. The responder's checks run here, in the initiator:
 * a WRITE, READ or atomic touches a peer region only if the table entry for the rkey is valid, carries
 * exactly that key and the target QP's PD, grants the right, and covers the range.
 */
final class ShmPeer implements AutoCloseable
{
    private static final MemorySegment REFUSED = ShmRegionMappings.REFUSED;

    private final Path directory;
    private final ShmConfinement confinement;
    private final String gidHex;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment control;
    private final MemorySegment regions;
    private final ShmRegionMappings mappings;
    private final long livenessTimeoutNs;
    private final java.util.function.Consumer<String> refusals;
    private int references;
    private boolean closed;
    private long processCheckedNs;
    private boolean processAlive;

    private ShmPeer(
        final ShmConfinement confinement,
        final String gidHex,
        final long livenessTimeoutNs,
        final java.util.function.Consumer<String> refusals)
    {
        this.confinement = confinement;
        this.gidHex = gidHex;
        this.directory = confinement.directory().resolve("dev-" + gidHex);
        this.livenessTimeoutNs = livenessTimeoutNs;
        this.refusals = refusals;
        try
        {
            final Path controlFile = directory.resolve(CONTROL_FILE);
            if (!Files.exists(controlFile, java.nio.file.LinkOption.NOFOLLOW_LINKS))
            {
                throw new IllegalArgumentException("no shm device at " + directory + ": the peer's GID names no " +
                    "device in this shm directory (are both sides using the same " +
                    io.verbus.fabric.FabricContext.SHM_DIR_PROP_NAME + "?)");
            }
            confinement.checkDeviceDirectory(directory);
            control = confinement.mapPeerFile(controlFile, arena, CONTROL_LENGTH);
            if (control.get(ValueLayout.JAVA_INT, CONTROL_MAGIC_OFFSET) != MAGIC ||
                control.get(ValueLayout.JAVA_INT, CONTROL_VERSION_OFFSET) != VERSION)
            {
                throw new IllegalArgumentException("not an shm device of this version: " + controlFile);
            }
            regions = confinement.mapPeerFile(directory.resolve(REGIONS_FILE), arena, REGIONS_LENGTH);
            mappings = new ShmRegionMappings(regions);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
    }

    /**
     * @param confinement where peer files may be, and how they are opened.
     * @param gidHex      the peer's GID in hex (only hex digits: it cannot leave the directory).
     * @param refusals    told once per refused region why (the device's error handler).
     */
    static ShmPeer open(
        final ShmConfinement confinement,
        final String gidHex,
        final long livenessTimeoutNs,
        final java.util.function.Consumer<String> refusals)
    {
        return new ShmPeer(confinement, gidHex, livenessTimeoutNs, refusals);
    }

    Path directory()
    {
        return directory;
    }

    int retain()
    {
        return ++references;
    }

    int release()
    {
        return --references;
    }

    /**
     * Whether the peer can still be counted on, with one timeout in charge: the QP's retry timeout, which the rdma
     * media sets to the channel's {@code timeout}. A heartbeat fresher than the device's liveness timeout is alive;
     * one older than the QP's timeout is dead; in between the peer is either paused (SIGSTOP, a long GC, an
     * overloaded host) or dead, so its process is looked up (at most once per liveness period): a process that is
     * gone is dead at once, one that is merely stopped is given the QP's whole timeout, as hardware would give a
     * silent peer its retries. (The device's own 1 s liveness used to win, dropping a peer paused for a second whatever
     * the channel's timeout.)
     *
     * @param nowNs          System.nanoTime() (CLOCK_MONOTONIC, shared by all processes of the host).
     * @param retryTimeoutNs the QP's retry timeout.
     * @return true while the peer is open and not known dead.
     */
    boolean isAlive(final long nowNs, final long retryTimeoutNs)
    {
        if ((int)CONTROL_STATE.getAcquire(control, (long)CONTROL_STATE_OFFSET) != DEVICE_ALIVE)
        {
            return false;
        }
        final long silentNs = nowNs - (long)CONTROL_HEARTBEAT.getAcquire(control, (long)CONTROL_HEARTBEAT_NS_OFFSET);
        if (silentNs <= livenessTimeoutNs)
        {
            return true;
        }
        if (silentNs > Math.max(retryTimeoutNs, livenessTimeoutNs))
        {
            return false;
        }
        return isProcessAlive(nowNs);
    }

    /**
     * The post path's liveness check without a clock call: true if the peer's device is open and its heartbeat is
     * at most {@code livenessTimeoutNs - 2 * periodNs} older than this device's last heartbeat. This device's last
     * heartbeat trails the real time by at most a period, so the peer is then silent for less than the liveness
     * timeout minus a period: alive. False means "not sure": ask {@link #isAlive(long, long)} with the real time.
     *
     * @param lastOwnBeatNs this device's last heartbeat time.
     * @param periodNs      this device's heartbeat period.
     * @return true if the peer is surely alive.
     */
    boolean isSurelyAlive(final long lastOwnBeatNs, final long periodNs)
    {
        return (int)CONTROL_STATE.getAcquire(control, (long)CONTROL_STATE_OFFSET) == DEVICE_ALIVE &&
            lastOwnBeatNs - (long)CONTROL_HEARTBEAT.getAcquire(control, (long)CONTROL_HEARTBEAT_NS_OFFSET) <=
            livenessTimeoutNs - 2 * periodNs;
    }

    /** Slow path, only while the heartbeat is stale: the peer's process, looked up once per liveness period. */
    private synchronized boolean isProcessAlive(final long nowNs)
    {
        if (nowNs - processCheckedNs >= livenessTimeoutNs || 0 == processCheckedNs)
        {
            processCheckedNs = nowNs;
            final long pid = control.get(ValueLayout.JAVA_LONG, CONTROL_PID_OFFSET);
            processAlive = pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false);
        }
        return processAlive;
    }

    /**
     * Check a remote access against the published table.
     *
     * @return the offset in the region's file where {@code address} lives, or -1 to refuse the access.
     */
    long resolve(final int rkey, final long address, final long length, final int access, final int pdId)
    {
        final int index = rkey & 0xFFFF;
        if (index >= SoftRegionTable.MAX_REGIONS)
        {
            return -1;
        }
        final long base = (long)index * ENTRY_LENGTH;
        if ((int)ENTRY_STATE.getAcquire(regions, base + ENTRY_STATE_OFFSET) != ENTRY_VALID ||
            regions.get(ValueLayout.JAVA_INT, base + ENTRY_KEY_OFFSET) != rkey ||
            regions.get(ValueLayout.JAVA_INT, base + ENTRY_PD_OFFSET) != pdId ||
            (regions.get(ValueLayout.JAVA_INT, base + ENTRY_ACCESS_OFFSET) & access) != access)
        {
            return -1;
        }
        final long regionAddress = regions.get(ValueLayout.JAVA_LONG, base + ENTRY_ADDRESS_OFFSET);
        final long regionLength = regions.get(ValueLayout.JAVA_LONG, base + ENTRY_LENGTH_OFFSET);
        if (address < regionAddress || length < 0 || address - regionAddress > regionLength - length)
        {
            return -1;
        }
        return regions.get(ValueLayout.JAVA_LONG, base + ENTRY_FILE_OFFSET_OFFSET) + (address - regionAddress);
    }

    static final int ENTRY_VALUE_ACCESS = 0;
    static final int ENTRY_VALUE_ADDRESS = 1;
    static final int ENTRY_VALUE_LENGTH = 2;
    static final int ENTRY_VALUE_FILE_OFFSET = 3;
    static final int ENTRY_VALUES = 4;

    /**
     * Copy a valid table entry for {@code rkey} (its rights, address, length and file offset) into {@code values},
     * for a cache that checks accesses against its own copy.
     *
     * @return false if the entry is not valid for that key, PD and access (nothing copied that can be trusted).
     */
    boolean readEntry(final int rkey, final int access, final int pdId, final long[] values)
    {
        final int index = rkey & 0xFFFF;
        if (index >= SoftRegionTable.MAX_REGIONS)
        {
            return false;
        }
        final long base = (long)index * ENTRY_LENGTH;
        if ((int)ENTRY_STATE.getAcquire(regions, base + ENTRY_STATE_OFFSET) != ENTRY_VALID ||
            regions.get(ValueLayout.JAVA_INT, base + ENTRY_KEY_OFFSET) != rkey ||
            regions.get(ValueLayout.JAVA_INT, base + ENTRY_PD_OFFSET) != pdId)
        {
            return false;
        }
        values[ENTRY_VALUE_ACCESS] = regions.get(ValueLayout.JAVA_INT, base + ENTRY_ACCESS_OFFSET);
        values[ENTRY_VALUE_ADDRESS] = regions.get(ValueLayout.JAVA_LONG, base + ENTRY_ADDRESS_OFFSET);
        values[ENTRY_VALUE_LENGTH] = regions.get(ValueLayout.JAVA_LONG, base + ENTRY_LENGTH_OFFSET);
        values[ENTRY_VALUE_FILE_OFFSET] = regions.get(ValueLayout.JAVA_LONG, base + ENTRY_FILE_OFFSET_OFFSET);
        return (values[ENTRY_VALUE_ACCESS] & access) == access && values[ENTRY_VALUE_LENGTH] >= 0 &&
            values[ENTRY_VALUE_FILE_OFFSET] >= 0;
    }

    /** @return the peer's published region table, mapped (read by {@link ShmRegionCache} for revocations). */
    MemorySegment regionTable()
    {
        return regions;
    }

    /**
     * The mapping of the file behind a region that {@link #resolve} accepted, if it really holds
     * {@code [fileOffset, fileOffset + length)}; the first use of an rkey maps the file (slow path), later uses find
     * it in an array.
     * <p>
     * Nothing the peer wrote into its table is trusted: the file must be confined to the fabric directory (or a
     * hugetlbfs mount), be a regular file that is no symbolic link, belong to this user, not be writable by group or
     * others, and be at least as long as the region announced; the table's offset and length are checked against
     * the actual mapping on every access, as the peer may rewrite them at any time. A region that fails is refused
     * (the WR fails with REM_ACCESS_ERR, so the connection ends) and reported once; its key is never retried. A
     * region the peer shares through its own descriptor ({@code /proc/<its pid>/fd/<n>}: a file with no name peers
     * may map) is mapped read-only and serves READs only, whatever the table claims.
     *
     * @param access the right the WR needs: a read-only mapping serves {@link AccessFlags#REMOTE_READ} alone.
     * @return the mapping, or null to refuse the access.
     */
    MemorySegment target(final int rkey, final long fileOffset, final long length, final int access)
    {
        final MemorySegment mapped = mappings.find(rkey);
        final MemorySegment segment = null != mapped ? mapped : mapSlowly(rkey, rkey & 0xFFFF);
        if (REFUSED == segment || fileOffset < 0 || length < 0 || fileOffset > segment.byteSize() - length ||
            (segment.isReadOnly() && AccessFlags.REMOTE_READ != access))
        {
            return null;
        }
        return segment;
    }

    private synchronized MemorySegment mapSlowly(final int rkey, final int index)
    {
        final MemorySegment existing = mappings.find(rkey);
        if (null != existing)
        {
            return existing;
        }
        final Arena mappingArena = mappings.arenaFor(rkey);
        if (null == mappingArena)
        {
            // The process maps as many peer regions as it may: refused, but not remembered, so that this key maps
            // once others are gone. Said once per stretch of refusals, not per WR.
            if (mappings.firstRefusalSinceLastMapping())
            {
                refusals.accept("shm peer " + directory + ": region key " + rkey + " refused: the most this process " +
                    "maps is " + ShmRegionMappings.MAX_MAPPINGS_PER_PEER + " regions of one peer and " +
                    ShmRegionMappings.MAX_MAPPINGS_PER_PROCESS + " of all (vm.max_map_count must leave room for the " +
                    "JVM); it maps " + mappings.size() + " of this peer's and " +
                    ShmRegionMappings.liveMappingsInProcess() + " in all");
            }
            return REFUSED;
        }
        MemorySegment segment;
        try
        {
            final long base = (long)index * ENTRY_LENGTH;
            final int pathLength = regions.get(ValueLayout.JAVA_INT, base + ENTRY_PATH_LENGTH_OFFSET);
            if (pathLength <= 0 || pathLength > ENTRY_MAX_PATH_BYTES)
            {
                throw new FabricException("corrupt region table entry " + index + " in " + directory);
            }
            final byte[] pathBytes = new byte[pathLength];
            MemorySegment.copy(regions, ValueLayout.JAVA_BYTE, base + ENTRY_PATH_OFFSET, pathBytes, 0, pathLength);
            final long fileOffset = regions.get(ValueLayout.JAVA_LONG, base + ENTRY_FILE_OFFSET_OFFSET);
            final long regionLength = regions.get(ValueLayout.JAVA_LONG, base + ENTRY_LENGTH_OFFSET);
            if (fileOffset < 0 || regionLength < 0 || fileOffset > Long.MAX_VALUE - regionLength)
            {
                throw new FabricException("region table entry " + index + " in " + directory +
                    " announces offset " + fileOffset + " and length " + regionLength);
            }
            final String pathText = new String(pathBytes, StandardCharsets.UTF_8);
            final long descriptorPid = ShmDescriptors.descriptorPathPid(pathText);
            if (descriptorPid >= 0)
            {
                // An unlinked file the peer shares for READ through its own descriptor: never another process's.
                final long peerPid = control.get(ValueLayout.JAVA_LONG, CONTROL_PID_OFFSET);
                if (descriptorPid != peerPid)
                {
                    throw new FabricException("region file " + pathText + " is a descriptor of process " +
                        descriptorPid + ", not of the peer's process " + peerPid);
                }
                segment = confinement.mapPeerDescriptor(Path.of(pathText), mappingArena, fileOffset + regionLength);
            }
            else
            {
                final Path path = confinement.confineRegionFile(pathText, gidHex);
                segment = confinement.mapPeerFile(path, mappingArena, fileOffset + regionLength);
            }
        }
        catch (final RuntimeException ex)
        {
            segment = REFUSED;
            refusals.accept("shm peer " + directory + ": region key " + rkey + " refused: " + ex.getMessage());
        }
        mappings.record(rkey, segment, mappingArena);
        return segment;
    }

    /**
     * Map the peer's QP file.
     *
     * @param into the connecting QP's arena for the peer's files: they are unmapped when that QP closes, not when the
     *             peer's last connection does (a peer reconnecting over and over would add one mapping each time).
     * @throws IllegalArgumentException if the peer has no such QP or its file is not a sound QP file.
     */
    ShmRemoteQueuePair openQueuePair(final int qpNumber, final Arena into)
    {
        final Path file = directory.resolve(QP_FILE_PREFIX + qpNumber);
        if (!Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS))
        {
            throw new IllegalArgumentException("shm device at " + directory + " has no QP " + qpNumber);
        }
        return new ShmRemoteQueuePair(confinement.mapPeerFile(file, into, QP_RECV_LENGTHS_OFFSET), file);
    }

    /**
     * Map the claim header of the peer's SRQ {@code srq-<number>}, checked against the depth it announces.
     *
     * @param into the connecting QP's arena for the peer's files (see {@link #openQueuePair}).
     */
    MemorySegment openSharedReceiveQueue(final int number, final Arena into)
    {
        final Path file = directory.resolve(SRQ_FILE_PREFIX + number);
        if (!Files.exists(file, java.nio.file.LinkOption.NOFOLLOW_LINKS))
        {
            throw new IllegalArgumentException("shm device at " + directory + " has no SRQ " + number);
        }
        final MemorySegment header =
            confinement.mapPeerFile(file, into, SoftSharedReceiveQueue.RING_OFFSET);
        final int depth = header.get(ValueLayout.JAVA_INT, SoftSharedReceiveQueue.DEPTH_OFFSET);
        if (depth < 1 || depth > ShmRemoteQueuePair.MAX_RQ_DEPTH ||
            header.byteSize() < SoftSharedReceiveQueue.headerLength(depth))
        {
            throw new IllegalArgumentException("shm peer SRQ file " + file + " announces " + depth +
                " receives, which its " + header.byteSize() + " bytes cannot hold");
        }
        return header;
    }

    /**
     * Unmap the region files whose rkeys the peer's table no longer holds valid (one of its connections closed, or the
     * device's periodic sweep). Nothing once closed: the heartbeat thread's sweep may come after the close.
     */
    synchronized void unmapRevokedRegions()
    {
        if (!closed)
        {
            mappings.unmapRevoked();
        }
    }

    /** @return region files of this peer mapped now (for tests). */
    synchronized int regionMappings()
    {
        return mappings.size();
    }

    @Override
    public synchronized void close()
    {
        closed = true;
        mappings.close();
        arena.close();
    }

    private static final java.lang.invoke.VarHandle CONTROL_HEARTBEAT = ValueLayout.JAVA_LONG.varHandle();
    private static final java.lang.invoke.VarHandle CONTROL_STATE = ValueLayout.JAVA_INT.varHandle();
    private static final java.lang.invoke.VarHandle ENTRY_STATE = ValueLayout.JAVA_INT.varHandle();
}
