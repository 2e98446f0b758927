package io.verbus.memory;

import io.verbus.common.QuarantinedMemory;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A pre-touched shared memory mapping owned by one {@link Arena}: closing it unmaps the memory and removes the
 * backing file if it was kept. Callers must make sure no thread reads the memory after close.
 */
public final class MappedRegion implements AutoCloseable
{
    private final Arena arena;
    private final MemorySegment segment;
    private final Path path;
    private final boolean hugePages;
    private final boolean fileKept;
    private final FileChannel fileChannel;
    private boolean closed;

    MappedRegion(
        final Arena arena,
        final MemorySegment segment,
        final Path path,
        final boolean hugePages,
        final boolean fileKept,
        final FileChannel fileChannel)
    {
        this.fileChannel = fileChannel;
        this.arena = arena;
        this.segment = segment;
        this.path = path;
        this.hugePages = hugePages;
        this.fileKept = fileKept;
    }

    /** @return the mapped memory; its address is stable until close. */
    public MemorySegment segment()
    {
        return segment;
    }

    /** @return the mapped length in bytes (a multiple of the page size used). */
    public long length()
    {
        return segment.byteSize();
    }

    /** @return the file that backs (or backed, if already unlinked) the mapping. */
    public Path path()
    {
        return path;
    }

    /** @return true when the mapping is backed by 2 MiB hugetlbfs pages. */
    public boolean isHugePages()
    {
        return hugePages;
    }

    /** @return true when the backing file still exists, so another process may map it. */
    public boolean isFileKept()
    {
        return fileKept;
    }

    /**
     * @return the open file behind the mapping (valid even after the file was unlinked), for reading the memory as a
     * file, e.g. with {@code transferTo}; closed with the region.
     */
    public FileChannel fileChannel()
    {
        return fileChannel;
    }

    /** @return true once closed. */
    public boolean isClosed()
    {
        return closed;
    }

    /** Unmaps the memory and deletes a kept file. Idempotent. */
    public synchronized void close()
    {
        if (!closed)
        {
            closed = true;
            arena.close();
            try
            {
                fileChannel.close();
            }
            catch (final IOException ignore)
            {
                // Closing a file we only read from cannot lose data.
            }
            if (fileKept)
            {
                try
                {
                    Files.deleteIfExists(path);
                }
                catch (final IOException ignore)
                {
                    // The mapping is gone; a stale file in the Verbus dir costs nothing but disk until the next start.
                }
            }
        }
    }

    /**
     * Retires the mapping without unmapping it (see {@link QuarantinedMemory}): its memory is returned to the system,
     * a kept file is deleted, and a stale reference into it reads zeros instead of faulting. The address range stays
     * reserved for the life of the process. Idempotent; does nothing after {@link #close()}.
     */
    public synchronized void quarantine()
    {
        if (!closed)
        {
            closed = true;
            // The arena is deliberately never closed: closing it would unmap the range again. A shared arena has no
            // cleaner, so dropping it leaves the (now anonymous) mapping in place. If the kernel refused the
            // replacement, the shared mapping itself stays: leaking its memory until exit beats a crash.
            QuarantinedMemory.replace(segment);
            try
            {
                fileChannel.close(); // the file itself is no longer mapped: let its file system go (umount)
            }
            catch (final IOException ignore)
            {
                // Closing a file we only read from cannot lose data.
            }
            if (fileKept)
            {
                try
                {
                    Files.deleteIfExists(path);
                }
                catch (final IOException ignore)
                {
                    // As for close: a stale file is swept at the next start.
                }
            }
        }
    }

    public String toString()
    {
        return "MappedRegion{path=" + path + ", length=" + length() + ", hugePages=" + hugePages + '}';
    }
}
