package io.verbus.fabric.shm;

import io.verbus.common.HugePages;
import io.verbus.common.OwnerOnlyFiles;
import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.DeviceAttributes;
import io.verbus.fabric.DeviceMemory;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.LinkLayer;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PortAttributes;
import io.verbus.fabric.PortState;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.soft.SoftDevice;
import io.verbus.fabric.soft.SoftMemoryRegion;
import io.verbus.fabric.soft.SoftProtectionDomain;
import io.verbus.fabric.soft.SoftQueuePair;
import io.verbus.fabric.soft.SoftRegionTable;
import io.verbus.fabric.soft.SoftSharedReceiveQueue;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.VarHandle;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.SecureRandom;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.verbus.fabric.shm.ShmLayout.*;

/**
 * An shm device: a directory {@code <shm dir>/dev-<gid hex>} holding a control file (pid, heartbeat), a
 * region table that peers check rkeys against, and one file per QP. The process's {@link ShmHeartbeat} thread
 * refreshes the heartbeat every quarter of the liveness timeout.
 */
public final class ShmDevice extends SoftDevice
{
    /** Largest SEND payload: the size of a receive slot in the responder's QP file. */
    public static final int SEND_SLOT_CAPACITY = 64 * 1024;
    private final AtomicInteger sharedReceiveQueueNumbers = new AtomicInteger();
    /** Inline capacity offered. */
    public static final int MAX_INLINE_DATA = 256;
    /** Largest payload of one WR, unless {@link io.verbus.fabric.FaultInjection#maxMessageLength} caps it. */
    public static final long MAX_MESSAGE_LENGTH = 1L << 30;
    /** How often the heartbeat thread unmaps the region files that peers revoked (see sweepRevokedRegions). */
    static final long REVOKED_REGION_SWEEP_PERIOD_NS = TimeUnit.SECONDS.toNanos(1);

    private static final VarHandle INT = ValueLayout.JAVA_INT.varHandle();
    private static final VarHandle LONG = ValueLayout.JAVA_LONG.varHandle();
    private static final AtomicInteger ALLOCATIONS = new AtomicInteger();

    private record Allocation(long address, long length, Path path)
    {
    }

    private final byte[] gid;
    private final Path directory;
    private final Arena arena = Arena.ofShared();
    private final MemorySegment control;
    private final MemorySegment regions;
    private final Map<String, ShmPeer> peers = new HashMap<>();
    /** The peers, for the heartbeat thread's sweep without this device's lock; replaced whenever {@link #peers} is. */
    private volatile ShmPeer[] peerSnapshot = new ShmPeer[0];
    private long lastRevokedSweepNs;
    private final List<Allocation> allocations = new CopyOnWriteArrayList<>();
    private final DeviceMemory memory = new DeviceMemory();
    private final long livenessTimeoutNs;
    private final long heartbeatPeriodNs;
    private final ShmConfinement confinement;
    private volatile long lastBeatNs;
    /** Heartbeat thread only: the failure of this device's beat was reported. */
    private boolean beatFailed;

    private ShmDevice(final String name, final byte[] gid, final FabricContext context)
    {
        super(attributes(name, gid, context.faultInjection().maxMessageLength()), context);
        this.gid = gid;
        this.livenessTimeoutNs = context.shmLivenessTimeoutNs();
        this.heartbeatPeriodNs = Math.max(TimeUnit.MILLISECONDS.toNanos(1), livenessTimeoutNs / 4);
        this.directory = context.shmDirectory().resolve("dev-" + HexFormat.of().formatHex(gid));
        try
        {
            // rwx------ for the fabric directory and the device's: ring files hold every message.
            OwnerOnlyFiles.ensureDirectory(context.shmDirectory(), "shm fabric directory");
            OwnerOnlyFiles.ensureDirectory(directory, "shm device directory");
            ShmStaleDevices.sweep(context.shmDirectory(), livenessTimeoutNs);
            confinement = new ShmConfinement(context.shmDirectory());
        }
        catch (final java.io.UncheckedIOException | IllegalStateException ex)
        {
            throw new FabricException("cannot create shm device directory " + directory + ": " + ex.getMessage(), ex);
        }
        try
        {
            // The region table stays sparse (entries are written as regions are registered); the control file is
            // touched now, so a full file system fails here with a clear error.
            regions = ShmFiles.createAndMap(directory.resolve(REGIONS_FILE), REGIONS_LENGTH, arena, false);
            control = ShmFiles.createAndMap(directory.resolve(CONTROL_FILE), CONTROL_LENGTH, arena, true);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            ShmFiles.deleteRecursively(directory);
            throw ex;
        }
        control.set(ValueLayout.JAVA_LONG, CONTROL_PID_OFFSET, ProcessHandle.current().pid());
        control.set(ValueLayout.JAVA_INT, CONTROL_VERSION_OFFSET, VERSION);
        lastBeatNs = System.nanoTime();
        LONG.setRelease(control, (long)CONTROL_HEARTBEAT_NS_OFFSET, lastBeatNs);
        INT.setRelease(control, (long)CONTROL_STATE_OFFSET, DEVICE_ALIVE);
        // The magic goes last: a peer that sees it sees a complete control file.
        INT.setRelease(control, (long)CONTROL_MAGIC_OFFSET, MAGIC);

        ShmHeartbeat.register(this);
    }

    static ShmDevice open(final String name, final FabricContext context)
    {
        final byte[] gid = new byte[PortAttributes.GID_LENGTH];
        new SecureRandom().nextBytes(gid);
        return new ShmDevice(name, gid, context);
    }

    private static DeviceAttributes attributes(final String name, final byte[] gid, final long cappedMessageLength)
    {
        return new DeviceAttributes(
            name,
            ShmFabricProvider.NAME,
            4096,
            16384,
            1 << 20,
            MAX_INLINE_DATA,
            0 == cappedMessageLength ? MAX_MESSAGE_LENGTH : cappedMessageLength,
            1L << 40,
            true,
            List.of(new PortAttributes(1, PortState.ACTIVE, LinkLayer.SHARED_MEMORY, 0, gid, 0, 4096)));
    }

    /**
     * The heartbeat thread: refresh this device's heartbeat, unless it is closed or killed (fault injection).
     *
     * @param nowNs System.nanoTime() of this round of beats.
     */
    void beat(final long nowNs)
    {
        if (!isClosed() && !faultInjection().isKilled())
        {
            lastBeatNs = nowNs;
            LONG.setRelease(control, (long)CONTROL_HEARTBEAT_NS_OFFSET, nowNs);
            if (nowNs - lastRevokedSweepNs >= REVOKED_REGION_SWEEP_PERIOD_NS)
            {
                lastRevokedSweepNs = nowNs;
                sweepRevokedRegions();
            }
        }
    }

    /** The heartbeat thread could not beat for this device (its control file faulted): report it, once. */
    void onBeatFailed(final Throwable ex)
    {
        if (!beatFailed)
        {
            beatFailed = true;
            context.errorHandler().onError(new FabricException("shm: device " + directory + " can no longer write " +
                "its heartbeat (was its control file truncated?): its peers will find it dead", ex));
        }
    }

    /**
     * Unmap every peer's region files that the peer has revoked. New mappings and closing connections sweep too, but
     * a peer that revokes regions and then neither maps another nor closes a connection would otherwise leave them
     * mapped (kernel memory areas, counted against this process's share) for as long as it stays connected.
     */
    private void sweepRevokedRegions()
    {
        for (final ShmPeer peer : peerSnapshot)
        {
            unmapRevokedRegionsOf(peer);
        }
    }

    /**
     * A clock for the post path that costs a field read instead of a clock call: the time of this device's last
     * heartbeat, behind the real time by at most a heartbeat period while the heartbeat thread gets a CPU.
     *
     * @return System.nanoTime() at this device's last heartbeat.
     */
    long lastBeatNs()
    {
        return lastBeatNs;
    }

    /**
     * @return how often this device's heartbeat is refreshed.
     */
    long heartbeatPeriodNs()
    {
        return heartbeatPeriodNs;
    }

    /**
     * @return where this device's files live.
     */
    public Path directory()
    {
        return directory;
    }

    long livenessTimeoutNs()
    {
        return livenessTimeoutNs;
    }

    Arena arena()
    {
        return arena;
    }

    @Override
    public MemorySegment allocateMemory(final long length)
    {
        requireOpen();
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be > 0: " + length);
        }
        final String fileName = "mem-" + ProcessHandle.current().pid() + "-" + ALLOCATIONS.incrementAndGet();
        final Path hugetlbfs = ShmFiles.hugetlbfsWithRoom(context.hugetlbfsDirectory(), length);
        // An arena of its own: closing the device quarantines this mapping (DeviceMemory) rather than unmapping it
        // under a Header the application kept from a poll of a ring in it.
        final Arena mappingArena = Arena.ofShared();
        MemorySegment segment = null;
        Path path = null;
        if (null != hugetlbfs)
        {
            path = hugetlbfs.resolve(ShmConfinement.hugetlbfsFilePrefix(HexFormat.of().formatHex(gid)) + fileName);
            try
            {
                segment = ShmFiles.createAndMap(
                    path, ShmFiles.roundUp(length, HugePages.defaultPageBytes()), mappingArena, true);
            }
            catch (final FabricException ex)
            {
                deleteQuietly(path);
                segment = null;
            }
        }
        if (null == segment)
        {
            path = directory.resolve(fileName);
            try
            {
                segment = ShmFiles.createAndMap(path, ShmFiles.roundUp(length, 4096), mappingArena, true);
            }
            catch (final FabricException ex)
            {
                mappingArena.close();
                deleteQuietly(path);
                throw ex;
            }
        }
        memory.add(segment, mappingArena);
        allocations.add(new Allocation(segment.address(), segment.byteSize(), path));
        return segment.asSlice(0, length);
    }

    @Override
    protected MemoryRegion registerMemory(
        final SoftProtectionDomain pd, final MemorySegment segment, final int accessFlags)
    {
        requireOpen();
        final int remoteRights = AccessFlags.REMOTE_WRITE | AccessFlags.REMOTE_READ | AccessFlags.REMOTE_ATOMIC;
        if ((accessFlags & remoteRights) == 0)
        {
            return super.registerMemory(pd, segment, accessFlags);
        }
        final ShmFiles.Backing backing = backingOf(segment);
        final String confinementRefusal = null == backing ? null : confinementRefusal(backing);
        // READ alone may also be granted on a file peers cannot map by name (unlinked once mapped, or outside the
        // fabric directory: a driver's log), through a descriptor kept for this registration; write and atomic
        // rights never (a peer maps such a file read-only).
        final boolean readOnly = (accessFlags & remoteRights) == AccessFlags.REMOTE_READ;
        final ShmDescriptors.Shared shared = (null == backing || null != confinementRefusal) && readOnly ?
            ShmDescriptors.shareHeldOpen(segment.address(), segment.byteSize()) : null;
        if (null == shared && null == backing)
        {
            throw new IllegalArgumentException("the shm provider can only give remote access (" +
                AccessFlags.toString(accessFlags) + ") to a shared file mapping that peer processes can map: " +
                "allocate it with Device.allocateMemory or map a file in the shm fabric directory or hugetlbfs (READ " +
                "alone: or any shared file mapping whose file this process holds open); the segment at 0x" +
                Long.toHexString(segment.address()) + " is none of these");
        }
        if (null == shared && null != confinementRefusal)
        {
            throw new IllegalArgumentException("the shm provider gives remote access (" +
                AccessFlags.toString(accessFlags) + ") only to files in the shm fabric directory or on hugetlbfs " +
                "(READ alone: or to a file this process holds open): " + confinementRefusal);
        }
        final Path regionPath = null != shared ? shared.path() : backing.path();
        final long fileOffset = null != shared ? shared.fileOffset() : backing.fileOffset();
        try
        {
            return publishRegion(pd, segment, accessFlags, regionPath, fileOffset, null == shared ? -1 : shared.fd());
        }
        catch (final RuntimeException ex)
        {
            if (null != shared)
            {
                ShmDescriptors.close(shared.fd());
            }
            throw ex;
        }
    }

    /** @return why peers would refuse the file behind a region (see {@link ShmConfinement}), or null. */
    private String confinementRefusal(final ShmFiles.Backing backing)
    {
        try
        {
            confinement.confineRegionFile(backing.path().toString(), HexFormat.of().formatHex(gid));
            return null;
        }
        catch (final FabricException ex)
        {
            return ex.getMessage();
        }
    }

    /**
     * Enters a region in the published table.
     *
     * @param sharedFd a descriptor kept for this region alone (closed when it is deregistered), or -1.
     */
    private MemoryRegion publishRegion(final SoftProtectionDomain pd, final MemorySegment segment,
        final int accessFlags, final Path regionPath, final long fileOffset, final int sharedFd)
    {
        final byte[] path = regionPath.toString().getBytes(StandardCharsets.UTF_8);
        if (path.length > ENTRY_MAX_PATH_BYTES)
        {
            throw new IllegalArgumentException("path of the file behind the region is longer than " +
                ENTRY_MAX_PATH_BYTES + " bytes: " + regionPath);
        }

        final SoftRegionTable table = regionTable();
        final int key = table.reserveKey();
        final long base = (long)(key & 0xFFFF) * ENTRY_LENGTH;
        try
        {
            // The table file is sparse: the first entry written in a page allocates it, and on a full file system
            // that write faults (SIGBUS, an InternalError here). That must be one failed registration, not a dead
            // control thread.
            INT.setRelease(regions, base + ENTRY_STATE_OFFSET, ENTRY_FREE);
            regions.set(ValueLayout.JAVA_INT, base + ENTRY_KEY_OFFSET, key);
            regions.set(ValueLayout.JAVA_INT, base + ENTRY_PD_OFFSET, pd.id());
            regions.set(ValueLayout.JAVA_INT, base + ENTRY_ACCESS_OFFSET, accessFlags);
            regions.set(ValueLayout.JAVA_LONG, base + ENTRY_ADDRESS_OFFSET, segment.address());
            regions.set(ValueLayout.JAVA_LONG, base + ENTRY_LENGTH_OFFSET, segment.byteSize());
            regions.set(ValueLayout.JAVA_LONG, base + ENTRY_FILE_OFFSET_OFFSET, fileOffset);
            regions.set(ValueLayout.JAVA_INT, base + ENTRY_PATH_LENGTH_OFFSET, path.length);
            MemorySegment.copy(path, 0, regions, ValueLayout.JAVA_BYTE, base + ENTRY_PATH_OFFSET, path.length);
        }
        catch (final InternalError ex)
        {
            table.unreserve(key);
            throw ShmFiles.noSpace(directory.resolve(REGIONS_FILE), ENTRY_LENGTH, -1);
        }
        final SoftMemoryRegion region = new SoftMemoryRegion(table, segment, key, accessFlags, pd.id())
        {
            @Override
            public void deregister()
            {
                if (isRegistered())
                {
                    // Revoke in the published table first: from here on peers get REM_ACCESS_ERR.
                    if (!isClosed())
                    {
                        INT.setRelease(regions, base + ENTRY_STATE_OFFSET, ENTRY_REVOKED);
                    }
                    super.deregister();
                    if (sharedFd >= 0)
                    {
                        // Revoked first, so no peer maps the file anew; a peer's existing mapping keeps its pages.
                        ShmDescriptors.close(sharedFd);
                    }
                }
            }
        };
        INT.setRelease(regions, base + ENTRY_STATE_OFFSET, ENTRY_VALID);
        table.publish(region);
        return region;
    }

    private ShmFiles.Backing backingOf(final MemorySegment segment)
    {
        final long address = segment.address();
        for (final Allocation allocation : allocations)
        {
            if (address >= allocation.address && address + segment.byteSize() <= allocation.address + allocation.length)
            {
                return new ShmFiles.Backing(allocation.path, address - allocation.address);
            }
        }
        return ShmFiles.findBacking(address, segment.byteSize());
    }

    @Override
    protected SoftQueuePair newQueuePair(final SoftProtectionDomain pd, final QueuePairConfig config, final int qpn)
    {
        return new ShmQueuePair(this, pd, config, qpn);
    }

    /**
     * The SRQ's claim header is a file {@code srq-<n>} in the device directory: an initiating peer process claims
     * this side's receives in it (a compare-and-set on the mapped file) before it deposits a SEND or WRITE_WITH_IMM.
     */
    @Override
    protected SoftSharedReceiveQueue newSharedReceiveQueue(final SoftProtectionDomain pd, final int depth)
    {
        final int number = sharedReceiveQueueNumbers.incrementAndGet();
        final Path path = directory().resolve(SRQ_FILE_PREFIX + number);
        final Arena srqArena = Arena.ofShared();
        final MemorySegment header;
        try
        {
            header = ShmFiles.createAndMap(path, ShmFiles.roundUp(SoftSharedReceiveQueue.headerLength(depth), 4096),
                srqArena, true);
        }
        catch (final RuntimeException ex)
        {
            srqArena.close();
            throw ex;
        }
        final SoftSharedReceiveQueue[] holder = new SoftSharedReceiveQueue[1];
        holder[0] = new ShmSharedReceiveQueue(pd, depth, header, number, () ->
        {
            onSharedReceiveQueueClosed(holder[0]);
            srqArena.close();
            try
            {
                java.nio.file.Files.deleteIfExists(path);
            }
            catch (final java.io.IOException ignore)
            {
                // best effort: the device directory goes with the device
            }
        });
        return holder[0];
    }

    synchronized ShmPeer acquirePeer(final byte[] peerGid)
    {
        final String hex = HexFormat.of().formatHex(peerGid);
        ShmPeer peer = peers.get(hex);
        if (null == peer)
        {
            peer = ShmPeer.open(confinement, hex, livenessTimeoutNs,
                (reason) -> context.errorHandler().onError(new FabricException(reason)));
            peers.put(hex, peer);
            peerSnapshot = peers.values().toArray(new ShmPeer[0]);
        }
        peer.retain();
        return peer;
    }

    /**
     * One peer's sweep, reported rather than thrown: it runs on the heartbeat thread of every device in the process,
     * which must go on beating, and in a QP's close, which must go on closing, whatever the peer's table does (one
     * truncated under our mapping faults the read: InternalError).
     */
    private void unmapRevokedRegionsOf(final ShmPeer peer)
    {
        try
        {
            peer.unmapRevokedRegions();
        }
        catch (final RuntimeException | InternalError ex)
        {
            context.errorHandler().onError(
                new FabricException("shm: sweeping a peer's revoked region mappings failed", ex));
        }
    }

    synchronized void releasePeer(final ShmPeer peer)
    {
        if (peer.release() == 0)
        {
            peers.values().remove(peer);
            peerSnapshot = peers.values().toArray(new ShmPeer[0]);
            peer.close();
        }
        else
        {
            unmapRevokedRegionsOf(peer); // a connection ended: its regions at the peer have usually gone with it
        }
    }

    @Override
    protected void onClose()
    {
        INT.setRelease(control, (long)CONTROL_STATE_OFFSET, DEVICE_CLOSED);
        ShmHeartbeat.unregister(this); // no beat touches the control file once this returns: it is unmapped below
        synchronized (this)
        {
            for (final ShmPeer peer : peers.values())
            {
                peer.close();
            }
            peers.clear();
            peerSnapshot = new ShmPeer[0];
        }
        arena.close();
        memory.retireAll();
        for (final Allocation allocation : allocations)
        {
            deleteQuietly(allocation.path);
        }
        ShmFiles.deleteRecursively(directory);
    }

    private static void deleteQuietly(final Path path)
    {
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ignore)
        {
            // best effort
        }
    }
}
