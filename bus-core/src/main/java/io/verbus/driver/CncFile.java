package io.verbus.driver;

import org.agrona.IoUtil;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.broadcast.BroadcastBufferDescriptor;
import org.agrona.concurrent.ringbuffer.RingBufferDescriptor;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.MappedByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The command-and-control file {@code <dir>/cnc.dat} of a standalone driver, the rendezvous of the clients that
 * share it: a header, the clients-to-driver command ring (an Agrona {@code ManyToOneRingBuffer}, whose consumer
 * heartbeat is the driver's heartbeat), the driver-to-clients broadcast buffer, the driver's distinct error log, and
 * the dir of the Aeron media driver whose clients serve the {@code aeron:} channels of the driver's clients.
 * Counters stay in {@code counters.dat}, so {@code ./verbus stat} reads a standalone driver as an embedded one.
 * <pre>
 *   0  int  version (written last, with release semantics: non-zero means the file is complete)
 *   4  int  to-driver ring length (capacity + trailer)
 *   8  int  to-clients broadcast length (capacity + trailer)
 *  12  int  error log length
 *  16  long client liveness timeout, ns (clients send keepalives well within it)
 *  24  long pid of the driver
 *  32  long start time, epoch ms
 *  40  int  Aeron dir region length
 * 128  to-driver ring, then to-clients broadcast, then error log, then the Aeron dir (int length, ASCII)
 * </pre>
 */
public final class CncFile implements AutoCloseable
{
    /** Name of the file in the dir. */
    public static final String FILE_NAME = "cnc.dat";

    /** Layout version. */
    public static final int VERSION = 2;

    public static final int VERSION_OFFSET = 0;
    public static final int TO_DRIVER_LENGTH_OFFSET = 4;
    public static final int TO_CLIENTS_LENGTH_OFFSET = 8;
    public static final int ERROR_LOG_LENGTH_OFFSET = 12;
    public static final int CLIENT_LIVENESS_TIMEOUT_OFFSET = 16;
    public static final int PID_OFFSET = 24;
    public static final int START_TIMESTAMP_OFFSET = 32;
    public static final int AERON_DIR_LENGTH_OFFSET = 40;

    /** Header length: two cache lines. */
    public static final int HEADER_LENGTH = 128;

    /** Capacity of the command ring (a power of two). */
    public static final int TO_DRIVER_CAPACITY = 1024 * 1024;

    /** Capacity of the broadcast buffer (a power of two). */
    public static final int TO_CLIENTS_CAPACITY = 1024 * 1024;

    /** Length of the error log. */
    public static final int ERROR_LOG_LENGTH = 1024 * 1024;

    /** Length of the Aeron dir region: a length-prefixed ASCII path. */
    public static final int AERON_DIR_REGION_LENGTH = 4096;

    private final MappedByteBuffer mapped;
    private final Path path;
    private final boolean owner;
    private final UnsafeBuffer header;
    private final UnsafeBuffer toDriverBuffer;
    private final UnsafeBuffer toClientsBuffer;
    private final UnsafeBuffer errorLogBuffer;
    private final UnsafeBuffer aeronDirBuffer;
    private boolean closed;

    private CncFile(final MappedByteBuffer mapped, final Path path, final boolean owner)
    {
        this.mapped = mapped;
        this.path = path;
        this.owner = owner;
        header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
        final int toDriverLength = header.getInt(TO_DRIVER_LENGTH_OFFSET);
        final int toClientsLength = header.getInt(TO_CLIENTS_LENGTH_OFFSET);
        final int errorLogLength = header.getInt(ERROR_LOG_LENGTH_OFFSET);
        final int aeronDirLength = header.getInt(AERON_DIR_LENGTH_OFFSET);
        final long totalLength =
            (long)HEADER_LENGTH + toDriverLength + toClientsLength + errorLogLength + aeronDirLength;
        if (toDriverLength <= 0 || toClientsLength <= 0 || errorLogLength <= 0 || aeronDirLength < Integer.BYTES ||
            totalLength > mapped.capacity())
        {
            throw new IllegalStateException("cnc file " + path + " has inconsistent lengths");
        }
        toDriverBuffer = new UnsafeBuffer(mapped, HEADER_LENGTH, toDriverLength);
        toClientsBuffer = new UnsafeBuffer(mapped, HEADER_LENGTH + toDriverLength, toClientsLength);
        errorLogBuffer = new UnsafeBuffer(mapped, HEADER_LENGTH + toDriverLength + toClientsLength, errorLogLength);
        aeronDirBuffer = new UnsafeBuffer(
            mapped, HEADER_LENGTH + toDriverLength + toClientsLength + errorLogLength, aeronDirLength);
    }

    /**
     * Creates the file for a driver. The caller has already made sure no live driver uses the dir (the counters
     * file refuses it), so a file left by a dead one is replaced.
     *
     * @param dir                     the driver's dir, which exists.
     * @param clientLivenessTimeoutNs after which the driver frees a silent client's resources.
     * @param aeronDir                the Aeron media driver's dir for clients' {@code aeron:} channels.
     * @return the file, mapped read-write.
     */
    public static CncFile create(final Path dir, final long clientLivenessTimeoutNs, final String aeronDir)
    {
        final Path path = dir.resolve(FILE_NAME);
        final int toDriverLength = TO_DRIVER_CAPACITY + RingBufferDescriptor.TRAILER_LENGTH;
        final int toClientsLength = TO_CLIENTS_CAPACITY + BroadcastBufferDescriptor.TRAILER_LENGTH;
        final long length =
            (long)HEADER_LENGTH + toDriverLength + toClientsLength + ERROR_LOG_LENGTH + AERON_DIR_REGION_LENGTH;
        if (aeronDir.length() > AERON_DIR_REGION_LENGTH - Integer.BYTES)
        {
            throw new IllegalArgumentException("Aeron dir longer than " + (AERON_DIR_REGION_LENGTH - Integer.BYTES) +
                " characters: " + aeronDir);
        }
        try
        {
            Files.deleteIfExists(path);
            io.verbus.memory.MemoryMapper.checkSpace(dir, length, path);
            Files.createFile(path, io.verbus.common.OwnerOnlyFiles.fileAttribute());
            final MappedByteBuffer mapped = IoUtil.mapExistingFile(path.toFile(), FILE_NAME, 0, length);
            final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
            header.setMemory(0, HEADER_LENGTH, (byte)0);
            header.putInt(TO_DRIVER_LENGTH_OFFSET, toDriverLength);
            header.putInt(TO_CLIENTS_LENGTH_OFFSET, toClientsLength);
            header.putInt(ERROR_LOG_LENGTH_OFFSET, ERROR_LOG_LENGTH);
            header.putInt(AERON_DIR_LENGTH_OFFSET, AERON_DIR_REGION_LENGTH);
            header.putLong(CLIENT_LIVENESS_TIMEOUT_OFFSET, clientLivenessTimeoutNs);
            header.putLong(PID_OFFSET, ProcessHandle.current().pid());
            header.putLong(START_TIMESTAMP_OFFSET, System.currentTimeMillis());
            final CncFile file = new CncFile(mapped, path, true);
            file.aeronDirBuffer.putStringAscii(0, aeronDir);
            // The file is new and sparse: the ring, broadcast and error log start zeroed, as Agrona expects.
            return file;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create cnc file " + path, ex);
        }
    }

    /** Marks the file complete: clients may attach from now on. */
    public void signalReady()
    {
        header.putIntRelease(VERSION_OFFSET, VERSION);
    }

    /**
     * Maps a driver's file for a client.
     *
     * @param dir the driver's dir.
     * @return the file, mapped read-write (the client writes commands).
     * @throws IllegalStateException naming the path when no complete cnc file is there.
     */
    public static CncFile open(final Path dir)
    {
        final Path path = dir.resolve(FILE_NAME);
        if (!Files.isRegularFile(path))
        {
            throw new IllegalStateException("no standalone Verbus driver at " + dir + " (no " + FILE_NAME +
                "): start one with './verbus driver --dir " + dir + "'");
        }
        final MappedByteBuffer mapped;
        try (FileChannel channel = FileChannel.open(path))
        {
            if (channel.size() < HEADER_LENGTH)
            {
                throw new IllegalStateException("cnc file " + path + " is too short: is the driver starting?");
            }
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot open cnc file " + path, ex);
        }
        mapped = IoUtil.mapExistingFile(path.toFile(), FILE_NAME);
        final UnsafeBuffer header = new UnsafeBuffer(mapped, 0, HEADER_LENGTH);
        final int version = header.getIntAcquire(VERSION_OFFSET);
        if (VERSION != version)
        {
            IoUtil.unmap(mapped);
            throw new IllegalStateException("cnc file " + path + " has version " + version + ", expected " + VERSION +
                " (0: the driver has not finished starting)");
        }
        try
        {
            return new CncFile(mapped, path, false);
        }
        catch (final RuntimeException ex)
        {
            IoUtil.unmap(mapped);
            throw ex;
        }
    }

    /** @return the command ring's memory (capacity + trailer). */
    public UnsafeBuffer toDriverBuffer()
    {
        return toDriverBuffer;
    }

    /** @return the broadcast buffer's memory (capacity + trailer). */
    public UnsafeBuffer toClientsBuffer()
    {
        return toClientsBuffer;
    }

    /** @return the error log's memory. */
    public UnsafeBuffer errorLogBuffer()
    {
        return errorLogBuffer;
    }

    /**
     * @return the dir of the Aeron media driver the driver runs (or attached to) for its clients' {@code aeron:}
     * channels.
     * @throws IllegalStateException when the recorded length does not fit the region.
     */
    public String aeronDirectoryName()
    {
        final int length = aeronDirBuffer.getInt(0);
        if (length <= 0 || length > aeronDirBuffer.capacity() - Integer.BYTES)
        {
            throw new IllegalStateException("cnc file " + path + " holds no valid Aeron dir (length " + length + ")");
        }
        return aeronDirBuffer.getStringAscii(0);
    }

    /** @return false once the driver has closed (it zeroes the version before it deletes the file). */
    public boolean isActive()
    {
        return VERSION == header.getIntAcquire(VERSION_OFFSET);
    }

    /** @return after how long without a keepalive the driver frees a client's resources. */
    public long clientLivenessTimeoutNs()
    {
        return header.getLong(CLIENT_LIVENESS_TIMEOUT_OFFSET);
    }

    /** @return the driver's pid. */
    public long pid()
    {
        return header.getLong(PID_OFFSET);
    }

    /** @return the file's path. */
    public Path path()
    {
        return path;
    }

    /**
     * Unmaps the file; the driver also deletes it. A client must be sure no thread of its own still uses the buffers.
     */
    public synchronized void close()
    {
        if (closed)
        {
            return;
        }
        closed = true;
        if (owner)
        {
            header.putIntRelease(VERSION_OFFSET, 0);
            try
            {
                Files.deleteIfExists(path);
            }
            catch (final IOException ignore)
            {
                // A stale file is replaced by the next driver.
            }
        }
        IoUtil.unmap(mapped);
    }
}
