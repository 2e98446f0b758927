package io.verbus.fabric.shm;

import io.verbus.common.HugePages;
import io.verbus.common.InterruptImmuneIo;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.List;

/**
 * File plumbing of the shm provider: mapping shared files, finding the file behind a registered segment,
 * finding a hugetlbfs mount with room.
 */
final class ShmFiles
{
    /** A file and the offset in it where a segment starts. */
    record Backing(Path path, long fileOffset)
    {
    }

    /**
     * A shared file mapping of this process as /proc/self/maps shows it, for one address range in it.
     *
     * @param pathName   the file's path as /proc/self/fd links show it too: with " (deleted)" once unlinked.
     * @param inode      the file's inode.
     * @param fileOffset where in the file the range starts.
     */
    record SharedFileMapping(String pathName, long inode, long fileOffset)
    {
    }

    private ShmFiles()
    {
    }

    /**
     * Create (or open) a file of at least {@code length} bytes and map all of it shared.
     *
     * @param preTouch true to touch every page now (see {@link #preTouch}); false for a file used sparsely.
     * @throws FabricException naming the path, saying "no space left" when the file system is full.
     */
    static MemorySegment createAndMap(final Path path, final long length, final Arena arena, final boolean preTouch)
    {
        final MemorySegment segment;
        try
        {
            // On the thread that opens the device or registers memory, which may be an interrupted application
            // thread; opening an existing file again is harmless, so an interrupt meanwhile just runs it again.
            segment = InterruptImmuneIo.call(() ->
            {
                // rw-------: the peers that map it run as the same user, and a ring file holds every message.
                try (FileChannel channel = FileChannel.open(path,
                    java.util.Set.of(StandardOpenOption.CREATE, StandardOpenOption.READ, StandardOpenOption.WRITE),
                    io.verbus.common.OwnerOnlyFiles.fileAttribute()))
                {
                    if (preTouch)
                    {
                        checkSpace(path, length - channel.size());
                    }
                    if (channel.size() < length)
                    {
                        channel.truncate(length);
                        if (channel.size() < length)
                        {
                            // truncate() only shrinks; grow by writing the last byte (hugetlbfs needs
                            // ftruncate-sized files).
                            channel.write(java.nio.ByteBuffer.wrap(new byte[1]), length - 1);
                        }
                    }
                    return channel.map(FileChannel.MapMode.READ_WRITE, 0, length, arena);
                }
            });
        }
        catch (final IOException ex)
        {
            if (String.valueOf(ex.getMessage()).contains("No space left"))
            {
                final FabricException noSpace = noSpace(path, length, -1);
                noSpace.initCause(ex);
                throw noSpace;
            }
            throw new FabricException("cannot create and map " + path + " (" + length + " bytes): " + ex, ex);
        }
        if (preTouch)
        {
            preTouch(segment, path);
        }
        return segment;
    }

    /**
     * Touch every page of a fresh shared mapping so the kernel allocates it now. On a full file system the kernel
     * answers a touch with SIGBUS, which the JVM raises as an {@link InternalError} naming nothing; that becomes a
     * {@link FabricException} naming the file, which control threads survive and retry.
     */
    static void preTouch(final MemorySegment segment, final Path path)
    {
        try
        {
            for (long offset = 0; offset < segment.byteSize(); offset += 4096)
            {
                segment.set(java.lang.foreign.ValueLayout.JAVA_BYTE, offset, (byte)0);
            }
        }
        catch (final InternalError ex)
        {
            throw noSpace(path, segment.byteSize(), -1);
        }
    }

    /**
     * @throws FabricException when the file system of {@code path} has less usable space than {@code length}.
     */
    static void checkSpace(final Path path, final long length)
    {
        if (length <= 0)
        {
            return;
        }
        try
        {
            final long usable = Files.getFileStore(path.getParent()).getUsableSpace();
            if (usable < length)
            {
                throw noSpace(path, length, usable);
            }
        }
        catch (final IOException ignore)
        {
            // cannot tell: the pre-touch reports a shortage clearly
        }
    }

    static FabricException noSpace(final Path path, final long length, final long usable)
    {
        return new FabricException("cannot map " + length + " bytes at " + path + ": no space left on the device (" +
            (usable >= 0 ? usable + " bytes usable" : "the file system is full") +
            "); free some space in the shm fabric directory or point " + FabricContext.SHM_DIR_PROP_NAME +
            " elsewhere");
    }

    /**
     * Map an existing file whole, shared.
     */
    static MemorySegment mapExisting(final Path path, final Arena arena)
    {
        try
        {
            return InterruptImmuneIo.call(() ->
            {
                try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ, StandardOpenOption.WRITE))
                {
                    return channel.map(FileChannel.MapMode.READ_WRITE, 0, channel.size(), arena);
                }
            });
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot map " + path + ": " + ex, ex);
        }
    }

    /**
     * Find the shared file mapping that holds {@code [address, address + length)} in this process, from
     * /proc/self/maps. Registration is rare, so reading the maps file is fine here.
     *
     * @return the backing file, or null if the range is not inside one shared file mapping of a linked file.
     */
    static Backing findBacking(final long address, final long length)
    {
        final SharedFileMapping mapping = findSharedFileMapping(address, length);
        if (null == mapping || mapping.pathName().endsWith("(deleted)"))
        {
            return null;
        }
        return new Backing(Path.of(mapping.pathName()), mapping.fileOffset());
    }

    /**
     * @return the shared file mapping that holds {@code [address, address + length)}, from /proc/self/maps, or null
     * when the range is not inside one shared mapping of a file.
     */
    static SharedFileMapping findSharedFileMapping(final long address, final long length)
    {
        final List<String> lines;
        try
        {
            lines = Files.readAllLines(Path.of("/proc/self/maps"));
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot read /proc/self/maps to find the file behind a region: " + ex, ex);
        }
        for (final String line : lines)
        {
            // start-end perms offset dev inode path (a path may contain spaces: it is the rest of the line)
            final String[] fields = line.trim().split("\\s+", 6);
            if (fields.length < 6)
            {
                continue;
            }
            final int dash = fields[0].indexOf('-');
            final long start = Long.parseUnsignedLong(fields[0].substring(0, dash), 16);
            final long end = Long.parseUnsignedLong(fields[0].substring(dash + 1), 16);
            if (address >= start && address + length <= end)
            {
                final boolean shared = fields[1].length() >= 4 && fields[1].charAt(3) == 's';
                if (!shared || !fields[5].startsWith("/"))
                {
                    return null;
                }
                return new SharedFileMapping(
                    fields[5], Long.parseLong(fields[4]), Long.parseUnsignedLong(fields[2], 16) + (address - start));
            }
        }
        return null;
    }

    /**
     * @param configured "" to search /proc/mounts, "none" for never, else a directory.
     * @param length     bytes wanted.
     * @return a hugetlbfs directory with enough free huge pages for {@code length}, or null.
     */
    static Path hugetlbfsWithRoom(final String configured, final long length)
    {
        if ("none".equals(configured))
        {
            return null;
        }
        try
        {
            Path mount = configured.isEmpty() ? null : Path.of(configured);
            if (null == mount)
            {
                for (final String line : Files.readAllLines(Path.of("/proc/mounts")))
                {
                    final String[] fields = line.split(" ");
                    if (fields.length > 2 && "hugetlbfs".equals(fields[2]))
                    {
                        mount = Path.of(fields[1]);
                        break;
                    }
                }
            }
            if (null == mount || !Files.isDirectory(mount) || !Files.isWritable(mount))
            {
                return null;
            }
            final long pageBytes = HugePages.defaultPageBytes();
            return HugePages.freePages() * pageBytes >= roundUp(length, pageBytes) ? mount : null;
        }
        catch (final IOException | RuntimeException ex)
        {
            return null;
        }
    }

    static long roundUp(final long value, final long multiple)
    {
        return (value + multiple - 1) / multiple * multiple;
    }

    /**
     * Delete a directory and what is in it; best effort. Another shm device of this process (two Verbus instances
     * in one JVM) may be deleting the same tree at the same time, so an entry that vanishes during the walk is
     * skipped, as is one that cannot be deleted (a peer may still hold it open).
     */
    static void deleteRecursively(final Path directory)
    {
        try
        {
            Files.walkFileTree(directory, new SimpleFileVisitor<>()
            {
                public FileVisitResult visitFile(final Path file, final BasicFileAttributes attributes)
                {
                    deleteQuietly(file);
                    return FileVisitResult.CONTINUE;
                }

                public FileVisitResult visitFileFailed(final Path file, final IOException ex)
                {
                    // gone since its directory was listed (NoSuchFileException), or unreadable: nothing to do
                    return FileVisitResult.CONTINUE;
                }

                public FileVisitResult postVisitDirectory(final Path dir, final IOException ex)
                {
                    deleteQuietly(dir);
                    return FileVisitResult.CONTINUE;
                }
            });
        }
        catch (final IOException ignore)
        {
            // best effort; the visitor swallows per-entry failures, so this is the walk itself failing
        }
    }

    private static void deleteQuietly(final Path path)
    {
        try
        {
            Files.deleteIfExists(path);
        }
        catch (final IOException ignore)
        {
            // best effort: a peer may still hold it open, or another walker left a file in it for a moment
        }
    }
}
