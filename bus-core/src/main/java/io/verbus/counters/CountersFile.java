package io.verbus.counters;

import org.agrona.concurrent.AtomicBuffer;
import org.agrona.concurrent.SystemEpochClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.CountersReader;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;

/**
 * The shared-memory counters file {@code <dir>/counters.dat}: a small header, then Agrona's counters metadata and
 * values buffers. The driver writes it with a {@link CountersManager}; {@code ./verbus stat} maps it read-only
 * from another process with a {@link CountersReader}.
 * <pre>
 *   0  int  version (written last, with release semantics: non-zero means the header is complete)
 *   4  int  metadata buffer length
 *   8  int  values buffer length
 *  16  long pid of the driver
 *  24  long start time, epoch ms
 * 128  metadata buffer, then values buffer
 * </pre>
 */
public final class CountersFile implements AutoCloseable
{
    /** Name of the file in the Verbus dir. */
    public static final String FILE_NAME = "counters.dat";

    /** Layout version. */
    public static final int VERSION = 1;

    public static final int VERSION_OFFSET = 0;
    public static final int METADATA_LENGTH_OFFSET = 4;
    public static final int VALUES_LENGTH_OFFSET = 8;
    public static final int PID_OFFSET = 16;
    public static final int START_TIMESTAMP_OFFSET = 24;

    /** Header length: two cache lines, so the buffers after it start aligned. */
    public static final int HEADER_LENGTH = 128;

    /** How long a freed counter id stays unused so that a reader does not confuse it with its successor. */
    public static final long FREE_TO_REUSE_TIMEOUT_MS = 1000;

    private final Arena arena;
    private final MemorySegment segment;
    private final Path path;
    private final boolean owner;
    private final UnsafeBuffer headerBuffer;
    private final UnsafeBuffer metaDataBuffer;
    private final UnsafeBuffer valuesBuffer;
    private final CountersManager countersManager;
    private final CountersReader countersReader;

    private CountersFile(
        final Arena arena, final Path path, final boolean owner, final MemorySegment segment, final int metaDataLength,
        final int valuesLength)
    {
        this.arena = arena;
        this.segment = segment;
        this.path = path;
        this.owner = owner;
        final long address = segment.address();
        headerBuffer = new UnsafeBuffer(address, HEADER_LENGTH);
        metaDataBuffer = new UnsafeBuffer(address + HEADER_LENGTH, metaDataLength);
        valuesBuffer = new UnsafeBuffer(address + HEADER_LENGTH + metaDataLength, valuesLength);
        if (owner)
        {
            countersManager = new CountersManager(
                metaDataBuffer, valuesBuffer, StandardCharsets.US_ASCII, SystemEpochClock.INSTANCE,
                FREE_TO_REUSE_TIMEOUT_MS);
            countersReader = countersManager;
        }
        else
        {
            countersManager = null;
            countersReader = new CountersReader(metaDataBuffer, valuesBuffer, StandardCharsets.US_ASCII);
        }
    }

    /**
     * Creates the counters file for a driver, refusing a dir that a live driver still uses.
     *
     * @param dir         the Verbus dir, created if missing.
     * @param maxCounters how many counters the file holds.
     * @return the file, mapped read-write.
     * @throws IllegalStateException when another live process (or this one) uses the dir.
     */
    public static CountersFile create(final Path dir, final int maxCounters)
    {
        final Path path = dir.resolve(FILE_NAME);
        try
        {
            io.verbus.common.OwnerOnlyFiles.ensureDirectory(dir, "Verbus dir");
            if (Files.exists(path))
            {
                final long pid = readPid(path);
                if (pid > 0 && ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
                {
                    throw new IllegalStateException(
                        "Verbus dir " + dir + " is in use by a running Verbus (pid " + pid + "): use another dir " +
                        "(to share a standalone driver's dir, attach with Verbus.connect)");
                }
                Files.delete(path);
            }

            final int metaDataLength = maxCounters * CountersReader.METADATA_LENGTH;
            final int valuesLength = maxCounters * CountersReader.COUNTER_LENGTH;
            final long fileLength = (long)HEADER_LENGTH + metaDataLength + valuesLength;
            io.verbus.memory.MemoryMapper.checkSpace(dir, fileLength, path);
            final Arena arena = Arena.ofShared();
            final MemorySegment segment;
            try (FileChannel channel = FileChannel.open(path,
                java.util.Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE),
                io.verbus.common.OwnerOnlyFiles.fileAttribute()))
            {
                segment = channel.map(FileChannel.MapMode.READ_WRITE, 0, fileLength, arena);
            }
            try
            {
                // Now, not when a counter is allocated later: a full dir must fail here, naming the path.
                io.verbus.memory.MemoryMapper.preTouch(segment, io.verbus.memory.MemoryMapper.PAGE_SIZE, path);
            }
            catch (final RuntimeException ex)
            {
                arena.close();
                Files.deleteIfExists(path);
                throw ex;
            }

            final CountersFile file = new CountersFile(arena, path, true, segment, metaDataLength, valuesLength);
            file.headerBuffer.putInt(METADATA_LENGTH_OFFSET, metaDataLength);
            file.headerBuffer.putInt(VALUES_LENGTH_OFFSET, valuesLength);
            file.headerBuffer.putLong(PID_OFFSET, ProcessHandle.current().pid());
            file.headerBuffer.putLong(START_TIMESTAMP_OFFSET, System.currentTimeMillis());
            file.headerBuffer.putIntRelease(VERSION_OFFSET, VERSION);
            return file;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create counters file " + path, ex);
        }
    }

    /**
     * Maps an existing counters file read-only, for a reader in another process.
     *
     * @param dir the Verbus dir.
     * @return the file.
     * @throws IllegalStateException naming the path when there is no valid counters file.
     */
    public static CountersFile openReadOnly(final Path dir)
    {
        return open(dir, false);
    }

    /**
     * Maps a standalone driver's counters file read-write, for a client process: the driver allocates and frees the
     * counters; the client writes only the positions the driver gave it (its images' subscriber positions). Closing
     * it unmaps the file and never deletes it.
     *
     * @param dir the driver's dir.
     * @return the file.
     * @throws IllegalStateException naming the path when there is no valid counters file.
     */
    public static CountersFile openShared(final Path dir)
    {
        return open(dir, true);
    }

    private static CountersFile open(final Path dir, final boolean writable)
    {
        final Path path = dir.resolve(FILE_NAME);
        if (!Files.isRegularFile(path))
        {
            throw new IllegalStateException("no counters file at " + path + ": is a Verbus running with this dir?");
        }
        final Arena arena = Arena.ofShared();
        final java.util.Set<StandardOpenOption> options = writable ?
            java.util.Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE) :
            java.util.Set.of(StandardOpenOption.READ);
        try (FileChannel channel = FileChannel.open(path, options))
        {
            final long size = channel.size();
            if (size < HEADER_LENGTH)
            {
                throw new IllegalStateException("counters file " + path + " is too short (" + size + " bytes)");
            }
            final MemorySegment segment = channel.map(
                writable ? FileChannel.MapMode.READ_WRITE : FileChannel.MapMode.READ_ONLY, 0, size, arena);
            final UnsafeBuffer header = new UnsafeBuffer(segment.address(), HEADER_LENGTH);
            final int version = header.getIntAcquire(VERSION_OFFSET);
            if (VERSION != version)
            {
                throw new IllegalStateException(
                    "counters file " + path + " has version " + version + ", expected " + VERSION);
            }
            final int metaDataLength = header.getInt(METADATA_LENGTH_OFFSET);
            final int valuesLength = header.getInt(VALUES_LENGTH_OFFSET);
            if (metaDataLength <= 0 || valuesLength <= 0 || HEADER_LENGTH + (long)metaDataLength + valuesLength > size)
            {
                throw new IllegalStateException("counters file " + path + " has inconsistent lengths");
            }
            return new CountersFile(arena, path, false, segment, metaDataLength, valuesLength);
        }
        catch (final IOException ex)
        {
            arena.close();
            throw new UncheckedIOException("cannot map counters file " + path, ex);
        }
        catch (final RuntimeException ex)
        {
            arena.close();
            throw ex;
        }
    }

    private static long readPid(final Path path)
    {
        try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ))
        {
            final java.nio.ByteBuffer buffer = java.nio.ByteBuffer.allocate(HEADER_LENGTH)
                .order(java.nio.ByteOrder.nativeOrder());
            channel.read(buffer, 0);
            return buffer.getLong(PID_OFFSET);
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
    }

    /** @return the manager, for the driver (null for a read-only file). */
    public CountersManager countersManager()
    {
        return countersManager;
    }

    /** @return a reader over the counters. */
    public CountersReader countersReader()
    {
        return countersReader;
    }

    /** @return the values buffer, where positions live. */
    public AtomicBuffer valuesBuffer()
    {
        return valuesBuffer;
    }

    /** @return the pid of the driver that wrote the file. */
    public long pid()
    {
        return headerBuffer.getLong(PID_OFFSET);
    }

    /** @return when the driver started, epoch ms. */
    public long startTimestampMs()
    {
        return headerBuffer.getLong(START_TIMESTAMP_OFFSET);
    }

    /** @return the file's path. */
    public Path path()
    {
        return path;
    }

    /**
     * For the driver at {@code Verbus.close()}: deletes the file and retires its memory without unmapping it
     * ({@link io.verbus.common.QuarantinedMemory}), so that a {@link CountersReader} or position the application
     * still holds reads zeros instead of faulting the JVM. The address range stays reserved.
     */
    public void quarantine()
    {
        if (!owner)
        {
            // A client of a standalone driver: its images may still hold positions here; the file is the driver's.
            io.verbus.common.QuarantinedMemory.replace(segment);
            return;
        }
        if (!io.verbus.common.QuarantinedMemory.replace(segment))
        {
            // Leave the shared mapping in place (the arena is never closed): a leak until exit beats a crash.
            headerBuffer.putIntRelease(VERSION_OFFSET, 0);
        }
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ignore)
        {
            // A stale file is detected by its dead pid on the next start.
        }
    }

    /** Unmaps the file; the driver also deletes it, so that a stale file never looks live. */
    public void close()
    {
        arena.close();
        if (owner)
        {
            try
            {
                Files.deleteIfExists(path);
            }
            catch (final IOException ignore)
            {
                // A stale file is detected by its dead pid on the next start.
            }
        }
    }
}
