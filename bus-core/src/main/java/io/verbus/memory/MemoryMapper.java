package io.verbus.memory;

import io.verbus.common.InterruptImmuneIo;
import io.verbus.common.OwnerOnlyFiles;
import org.agrona.CloseHelper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.FileAttribute;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Maps shared memory for logs and rings: from a hugetlbfs mount with 2 MiB pages when one is mounted and has
 * enough free pages, else from a fallback directory (normally under /dev/shm) with 4 KiB pages and one WARN
 * line per mapper. Every mapping is pre-touched so that no page fault lands on the hot path.
 */
public final class MemoryMapper
{
    /** Size of the huge pages Verbus uses. */
    public static final long HUGE_PAGE_SIZE = 2L * 1024 * 1024;

    /** Size of a normal page. */
    public static final long PAGE_SIZE = 4096;

    /** Where the kernel reports free 2 MiB huge pages. */
    public static final Path FREE_HUGE_PAGES_PATH = Path.of("/sys/kernel/mm/hugepages/hugepages-2048kB/free_hugepages");

    private static final System.Logger LOGGER = System.getLogger(MemoryMapper.class.getName());
    private static final AtomicLong FILE_SEQUENCE = new AtomicLong();
    /** A length for {@link #openAndMap}: map the file as long as it is. */
    private static final long WHOLE_FILE = -1;

    private final Path fallbackDir;
    private final Path hugetlbfsDir;
    private final boolean useHugePages;
    private final AtomicBoolean warned = new AtomicBoolean();

    /**
     * @param fallbackDir  where to map files when huge pages are not used; created if missing.
     * @param hugetlbfsDir a hugetlbfs mount with 2 MiB pages, or null to look for one in /proc/mounts.
     * @param useHugePages false to never use huge pages (no warning is logged then).
     */
    public MemoryMapper(final Path fallbackDir, final Path hugetlbfsDir, final boolean useHugePages)
    {
        this.fallbackDir = fallbackDir;
        this.hugetlbfsDir = null != hugetlbfsDir ? hugetlbfsDir : (useHugePages ? findHugetlbfsMount() : null);
        this.useHugePages = useHugePages;
    }

    /** @return the hugetlbfs mount in use, or null. */
    public Path hugetlbfsDir()
    {
        return hugetlbfsDir;
    }

    /** @return the directory used when huge pages are not. */
    public Path fallbackDir()
    {
        return fallbackDir;
    }

    /**
     * Maps zeroed, pre-touched shared memory of at least {@code length} bytes.
     *
     * @param name     a short name for the file, e.g. {@code "ipc-1001-7"}; made unique by the mapper.
     * @param length   bytes needed; rounded up to the page size used.
     * @param keepFile true to keep the file until {@link MappedRegion#close()} so that another process can map
     *                 it; false to unlink it at once (the memory then lives exactly as long as the mapping).
     * @return the region.
     * @throws IllegalArgumentException when the length is not positive.
     * @throws UncheckedIOException     when the file cannot be created or mapped.
     */
    public MappedRegion map(final String name, final long length, final boolean keepFile)
    {
        if (length <= 0)
        {
            throw new IllegalArgumentException("mapping length must be positive: " + length);
        }

        final String fileName = "verbus-" + ProcessHandle.current().pid() + "-" + FILE_SEQUENCE.incrementAndGet() +
            "-" + name + ".map";

        if (useHugePages)
        {
            String reason = hugePagesUnavailableReason(length);
            if (null == reason)
            {
                try
                {
                    return mapFile(hugetlbfsDir.resolve(fileName), align(length, HUGE_PAGE_SIZE), HUGE_PAGE_SIZE, true,
                        keepFile);
                }
                catch (final NoSpaceException ex)
                {
                    // Another process took the free huge pages between the check and the pre-touch.
                    reason = ex.getMessage();
                }
            }
            if (warned.compareAndSet(false, true))
            {
                LOGGER.log(System.Logger.Level.WARNING,
                    "huge pages not used (" + reason + "): mapping logs from " + fallbackDir +
                    " with 4 KiB pages; to use them: echo 64 > /proc/sys/vm/nr_hugepages && " +
                    "mount -t hugetlbfs -o pagesize=2M none /mnt/huge");
            }
        }

        OwnerOnlyFiles.ensureDirectory(fallbackDir, "Verbus dir");
        return mapFile(fallbackDir.resolve(fileName), align(length, PAGE_SIZE), PAGE_SIZE, false, keepFile);
    }

    /**
     * Maps a file another process created and keeps (a standalone driver's log), read-write and shared. Closing the
     * region unmaps it and leaves the file alone: its owner deletes it.
     *
     * @param path of the file.
     * @return the region, as long as the file.
     * @throws UncheckedIOException naming the path when it cannot be opened or mapped.
     */
    public static MappedRegion mapExisting(final Path path)
    {
        final Arena arena = Arena.ofShared();
        try
        {
            // On the thread that adds the publication or sees the image, which may be an interrupted one.
            final ChannelMapping mapping = InterruptImmuneIo.call(() -> openAndMap(path,
                Set.of(StandardOpenOption.READ, StandardOpenOption.WRITE), WHOLE_FILE, arena));
            return new MappedRegion(arena, mapping.segment(), path, false, false, mapping.channel());
        }
        catch (final IOException ex)
        {
            arena.close();
            throw new UncheckedIOException("cannot map the driver's log " + path, ex);
        }
    }

    /**
     * @param length bytes wanted.
     * @return null when huge pages can back a mapping of this length, else why not.
     */
    public String hugePagesUnavailableReason(final long length)
    {
        if (!useHugePages)
        {
            return "huge pages disabled";
        }
        if (null == hugetlbfsDir)
        {
            return "no hugetlbfs mounted";
        }
        final long pagesNeeded = align(length, HUGE_PAGE_SIZE) / HUGE_PAGE_SIZE;
        final long pagesFree = freeHugePages();
        if (pagesFree < pagesNeeded)
        {
            return pagesNeeded + " huge pages of 2 MiB needed, " + pagesFree + " free";
        }
        return null;
    }

    /** @return free 2 MiB huge pages, 0 when the kernel reports none. */
    public static long freeHugePages()
    {
        try
        {
            return Long.parseLong(Files.readString(FREE_HUGE_PAGES_PATH).trim());
        }
        catch (final IOException | NumberFormatException ex)
        {
            return 0;
        }
    }

    /** @return the first hugetlbfs mount with 2 MiB pages listed in /proc/mounts, or null. */
    public static Path findHugetlbfsMount()
    {
        try
        {
            final List<String> lines = Files.readAllLines(Path.of("/proc/mounts"));
            for (final String line : lines)
            {
                final String[] fields = line.split(" ");
                if (fields.length >= 4 && "hugetlbfs".equals(fields[2]) &&
                    (fields[3].contains("pagesize=2M") || !fields[3].contains("pagesize=")) &&
                    Files.isWritable(Path.of(fields[1])))
                {
                    return Path.of(fields[1]);
                }
            }
        }
        catch (final IOException ignore)
        {
            // No /proc: no hugetlbfs either.
        }
        return null;
    }

    /** The directory has no room for a mapping: the message names the path and says "no space left". */
    public static final class NoSpaceException extends UncheckedIOException
    {
        private static final long serialVersionUID = 1L;

        NoSpaceException(final String message)
        {
            super(message, new IOException(message));
        }
    }

    /**
     * @throws NoSpaceException when the file system of {@code dir} reports less usable space than {@code length}.
     */
    public static void checkSpace(final Path dir, final long length, final Path path)
    {
        final long usable;
        try
        {
            usable = Files.getFileStore(dir).getUsableSpace();
        }
        catch (final IOException ex)
        {
            return; // cannot tell: the pre-touch still reports a shortage clearly
        }
        if (usable < length)
        {
            throw new NoSpaceException(noSpaceMessage(path, length, usable));
        }
    }

    private static String noSpaceMessage(final Path path, final long length, final long usable)
    {
        return "cannot map " + length + " bytes at " + path + ": no space left on the device (" +
            (usable >= 0 ? usable + " bytes usable" : "it filled up while the memory was touched") +
            "); free some space or point Verbus.Context.dir (verbus.dir) at a larger file system";
    }

    /**
     * Touches every page of a fresh shared mapping so that the kernel allocates it now, not on the hot path. On a
     * file system that has run out of room the kernel answers a touch with SIGBUS, which the JVM turns into an
     * {@link InternalError} with no path in it; that becomes a {@link NoSpaceException} naming the file.
     */
    public static void preTouch(final MemorySegment segment, final long touchStride, final Path path)
    {
        try
        {
            for (long offset = 0; offset < segment.byteSize(); offset += touchStride)
            {
                segment.set(ValueLayout.JAVA_BYTE, offset, (byte)0);
            }
        }
        catch (final InternalError ex)
        {
            throw new NoSpaceException(noSpaceMessage(path, segment.byteSize(), -1));
        }
    }

    private static MappedRegion mapFile(
        final Path path, final long length, final long touchStride, final boolean hugePages, final boolean keepFile)
    {
        if (!hugePages)
        {
            checkSpace(path.getParent(), length, path);
        }
        final Arena arena = Arena.ofShared();
        ChannelMapping mapping = null;
        try
        {
            // rw-------: a log holds every message of its stream. The channel stays open with the mapping:
            // Image.rawPoll hands it to handlers that copy the log as a file. Created on the thread that adds the
            // publication, which may be an interrupted one; once, as the file it creates is new.
            mapping = InterruptImmuneIo.callOnce(() -> openAndMap(path,
                Set.of(StandardOpenOption.CREATE_NEW, StandardOpenOption.READ, StandardOpenOption.WRITE), length, arena,
                OwnerOnlyFiles.fileAttribute()));
            if (!keepFile)
            {
                Files.delete(path);
            }

            // Touch every page so the kernel allocates it now rather than on the first publish.
            preTouch(mapping.segment(), touchStride, path);

            return new MappedRegion(arena, mapping.segment(), path, hugePages, keepFile, mapping.channel());
        }
        catch (final IOException | RuntimeException ex)
        {
            arena.close();
            if (null != mapping)
            {
                CloseHelper.quietClose(mapping.channel()); // the mapping failure is what to report
            }
            try
            {
                Files.deleteIfExists(path);
            }
            catch (final IOException ignore)
            {
                // Reporting the mapping failure matters more than a leftover file.
            }
            if (ex instanceof IOException ioEx)
            {
                throw new UncheckedIOException("cannot map " + length + " bytes at " + path, ioEx);
            }
            throw (RuntimeException)ex;
        }
    }

    /** A file's channel and its mapping, opened together: the channel stays open with the mapping. */
    private record ChannelMapping(FileChannel channel, MemorySegment segment)
    {
    }

    /**
     * Open {@code path} and map {@code length} bytes of it ({@link #WHOLE_FILE}: its size) into {@code arena}; a
     * failure to map closes the channel before it escapes.
     */
    private static ChannelMapping openAndMap(
        final Path path,
        final Set<StandardOpenOption> options,
        final long length,
        final Arena arena,
        final FileAttribute<?>... attributes)
        throws IOException
    {
        final FileChannel channel = FileChannel.open(path, options, attributes);
        try
        {
            return new ChannelMapping(channel,
                channel.map(FileChannel.MapMode.READ_WRITE, 0, WHOLE_FILE == length ? channel.size() : length, arena));
        }
        catch (final IOException | RuntimeException ex)
        {
            CloseHelper.quietClose(channel); // the mapping failure is what to report
            throw ex;
        }
    }

    private static long align(final long value, final long alignment)
    {
        return (value + alignment - 1) & -alignment;
    }
}
