package io.verbus.log;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.aeron.protocol.DataHeaderFlyweight;
import io.verbus.ChannelUri;
import io.verbus.memory.MappedRegion;
import io.verbus.memory.MemoryMapper;
import org.agrona.concurrent.UnsafeBuffer;

import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;

import static io.aeron.logbuffer.LogBufferDescriptor.PARTITION_COUNT;

/**
 * The memory of one log laid out as Aeron lays it out: three term partitions of {@code termLength} bytes, then the
 * metadata section (tail counters, active term count, initial term id, MTU, term length, page size, default frame
 * header) whose offsets are {@link LogBufferDescriptor}'s. The memory is one {@link MemorySegment} so that a media
 * can register it with a NIC; the terms and metadata are {@link UnsafeBuffer} views over it.
 */
public final class LogBuffers implements AutoCloseable
{
    private final MemorySegment segment;
    private final MappedRegion region;
    private final int termLength;
    private final UnsafeBuffer[] termBuffers = new UnsafeBuffer[PARTITION_COUNT];
    private final UnsafeBuffer metaDataBuffer;

    private LogBuffers(final MemorySegment segment, final MappedRegion region, final int termLength)
    {
        this.segment = segment;
        this.region = region;
        this.termLength = termLength;
        final long address = segment.address();
        for (int i = 0; i < PARTITION_COUNT; i++)
        {
            termBuffers[i] = new UnsafeBuffer(address + (long)i * termLength, termLength);
        }
        metaDataBuffer = new UnsafeBuffer(
            address + (long)PARTITION_COUNT * termLength, LogBufferDescriptor.LOG_META_DATA_LENGTH);
    }

    /**
     * @param termLength of each partition.
     * @param pageSize   of the memory, 4 KiB or 2 MiB.
     * @return bytes a log of this term length needs.
     */
    public static long logLength(final int termLength, final int pageSize)
    {
        return LogBufferDescriptor.computeLogLength(termLength, pageSize);
    }

    /**
     * Maps new, zeroed, pre-touched memory for a log.
     *
     * @param mapper     that chooses huge pages or /dev/shm.
     * @param name       short name for the backing file.
     * @param termLength a power of two from 64 KiB to 1 GiB.
     * @param keepFile   keep the file for other processes to map (see {@link MemoryMapper#map}).
     * @return the log buffers, owning the mapping.
     * @throws IllegalArgumentException when the term length is invalid.
     */
    public static LogBuffers map(
        final MemoryMapper mapper, final String name, final int termLength, final boolean keepFile)
    {
        ChannelUri.checkTermLength(termLength, "log " + name);
        final MappedRegion region = mapper.map(
            name, logLength(termLength, (int)MemoryMapper.PAGE_SIZE), keepFile);
        final LogBuffers logBuffers = new LogBuffers(region.segment(), region, termLength);
        LogBufferDescriptor.pageSize(
            logBuffers.metaDataBuffer,
            (int)(region.isHugePages() ? MemoryMapper.HUGE_PAGE_SIZE : MemoryMapper.PAGE_SIZE));
        return logBuffers;
    }

    /**
     * Maps a log that a standalone driver created and initialised, for a client process. Closing it unmaps the
     * memory; the driver deletes the file.
     *
     * @param path       of the log file in the driver's dir (or its hugetlbfs mount).
     * @param termLength the log's term length, as the driver said.
     * @return the log buffers, owning the mapping.
     * @throws IllegalStateException when the file is too small for the term length or its metadata disagrees.
     */
    public static LogBuffers mapExisting(final java.nio.file.Path path, final int termLength)
    {
        ChannelUri.checkTermLength(termLength, "log " + path);
        final MappedRegion region = MemoryMapper.mapExisting(path);
        final long needed = (long)PARTITION_COUNT * termLength + LogBufferDescriptor.LOG_META_DATA_LENGTH;
        if (region.length() < needed)
        {
            region.close();
            throw new IllegalStateException("log " + path + " has " + region.length() + " bytes, " + needed +
                " needed for term length " + termLength);
        }
        final LogBuffers logBuffers = new LogBuffers(region.segment(), region, termLength);
        if (LogBufferDescriptor.termLength(logBuffers.metaDataBuffer) != termLength)
        {
            region.close();
            throw new IllegalStateException("log " + path + " has term length " +
                LogBufferDescriptor.termLength(logBuffers.metaDataBuffer) + ", the driver said " + termLength);
        }
        return logBuffers;
    }

    /**
     * Views memory that someone else owns (e.g. a ring registered by a media) as a log; close does not unmap it.
     *
     * @param segment    at least {@link #logLength(int, int)} bytes.
     * @param termLength a power of two from 64 KiB to 1 GiB.
     * @return the view.
     * @throws IllegalArgumentException when the term length is invalid or the segment too small.
     */
    public static LogBuffers wrap(final MemorySegment segment, final int termLength)
    {
        ChannelUri.checkTermLength(termLength, "wrapped log");
        final long needed = (long)PARTITION_COUNT * termLength + LogBufferDescriptor.LOG_META_DATA_LENGTH;
        if (segment.byteSize() < needed)
        {
            throw new IllegalArgumentException(
                "segment of " + segment.byteSize() + " bytes is too small for a log of term length " + termLength +
                " (" + needed + " bytes needed)");
        }
        return new LogBuffers(segment, null, termLength);
    }

    /**
     * Writes the metadata of a new publication log: ids, MTU, term length, the default frame header and the first
     * term's tail. Call once, before any appender or reader uses the log.
     */
    public void initialise(
        final int sessionId, final int streamId, final int initialTermId, final int mtuLength, final byte logType)
    {
        LogBufferDescriptor.initialTermId(metaDataBuffer, initialTermId);
        LogBufferDescriptor.mtuLength(metaDataBuffer, mtuLength);
        LogBufferDescriptor.termLength(metaDataBuffer, termLength);
        if (0 == LogBufferDescriptor.pageSize(metaDataBuffer))
        {
            LogBufferDescriptor.pageSize(metaDataBuffer, (int)MemoryMapper.PAGE_SIZE);
        }
        LogBufferDescriptor.type(metaDataBuffer, logType);
        LogBufferDescriptor.storeDefaultFrameHeader(
            metaDataBuffer, DataHeaderFlyweight.createDefaultHeader(sessionId, streamId, initialTermId));
        LogBufferDescriptor.initialiseTailWithTermId(metaDataBuffer, 0, initialTermId);
        for (int i = 1; i < PARTITION_COUNT; i++)
        {
            // Aeron's convention: a partition not yet used holds the term id it had one rotation ago.
            LogBufferDescriptor.initialiseTailWithTermId(metaDataBuffer, i, initialTermId + i - PARTITION_COUNT);
        }
        LogBufferDescriptor.endOfStreamPosition(metaDataBuffer, Long.MAX_VALUE);
        LogBufferDescriptor.activeTermCountOrdered(metaDataBuffer, 0);
    }

    /** @return the three term partitions. */
    public UnsafeBuffer[] termBuffers()
    {
        return termBuffers;
    }

    /** @return the metadata section. */
    public UnsafeBuffer metaDataBuffer()
    {
        return metaDataBuffer;
    }

    /** @return all the log's memory: terms then metadata. */
    public MemorySegment segment()
    {
        return segment;
    }

    /** @return the mapping that owns the memory, or null for a wrapped view. */
    public MappedRegion region()
    {
        return region;
    }

    /** @return the open file behind the log (unlinked but readable), or null for a wrapped view. */
    public FileChannel fileChannel()
    {
        return null == region ? null : region.fileChannel();
    }

    /** @return the length of each term partition. */
    public int termLength()
    {
        return termLength;
    }

    /**
     * Retires the memory, if this object owns it, without unmapping it: see {@link MappedRegion#quarantine()}. For
     * {@code Verbus.close()}, after which the application may still hold a {@code BufferClaim} into the log.
     */
    public void quarantine()
    {
        if (null != region)
        {
            region.quarantine();
        }
    }

    /**
     * Retires a log after its linger: quarantined while the process has quarantines left
     * ({@link io.verbus.common.QuarantinedMemory#reserveRuntimeQuarantine()}), so a claim still held writes into
     * private memory; else unmapped, as Aeron does.
     */
    public void retire()
    {
        if (null != region && io.verbus.common.QuarantinedMemory.reserveRuntimeQuarantine())
        {
            region.quarantine();
        }
        close();
    }

    /** Unmaps the memory if this object owns it. No thread may read the buffers afterwards. */
    public void close()
    {
        if (null != region)
        {
            region.close();
        }
    }
}
