package io.verbus.fabric.shm;

import io.verbus.common.InterruptImmuneIo;
import io.verbus.fabric.FabricException;

import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.channels.FileChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.nio.file.attribute.PosixFileAttributes;
import java.nio.file.attribute.PosixFilePermission;

/**
 * Where the shm provider lets a peer's files be and how it opens them. A peer publishes paths, offsets and lengths
 * in shared memory it can rewrite at any time, and the initiating process then writes message data into whatever
 * those name. So nothing read from shared memory is followed as it stands: a region file must lie inside this
 * fabric directory (after resolving every symbolic link) or on a hugetlbfs mount under the name its device gives
 * such files, must itself be no symbolic link (it is opened with {@code O_NOFOLLOW}), must be a regular file that
 * belongs to this user and that group and others cannot write, and must be at least as long as announced.
 */
final class ShmConfinement
{
    private static final String HUGETLBFS_TYPE = "hugetlbfs";

    private final Path directory;
    private final Path realDirectory;
    private final int processUid;

    /**
     * @param directory the shm fabric directory; it exists (the device created it).
     */
    ShmConfinement(final Path directory)
    {
        this.directory = directory;
        try
        {
            this.realDirectory = directory.toRealPath();
            this.processUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot resolve the shm fabric directory " + directory + ": " + ex, ex);
        }
    }

    Path directory()
    {
        return directory;
    }

    /**
     * @return the file name prefix a device with this GID gives its ring files on hugetlbfs.
     */
    static String hugetlbfsFilePrefix(final String gidHex)
    {
        return "verbus-" + gidHex + "-";
    }

    /**
     * @throws FabricException unless {@code deviceDirectory} is a real directory (no symbolic link) of this user.
     */
    void checkDeviceDirectory(final Path deviceDirectory)
    {
        try
        {
            final PosixFileAttributes attributes =
                Files.readAttributes(deviceDirectory, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isDirectory())
            {
                throw new FabricException("shm peer device " + deviceDirectory + " is not a directory (a symbolic " +
                    "link?): refused");
            }
            checkOwner(deviceDirectory);
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot inspect shm peer device " + deviceDirectory + ": " + ex, ex);
        }
    }

    /**
     * Confines a path read from a region table.
     *
     * @param pathText as the table holds it.
     * @param gidHex   the GID of the device whose table it is.
     * @return the real path to open.
     * @throws FabricException naming why the path is refused.
     */
    Path confineRegionFile(final String pathText, final String gidHex)
    {
        final Path path = Path.of(pathText);
        if (!path.isAbsolute() || !path.normalize().equals(path))
        {
            throw new FabricException("region file path '" + pathText + "' is not an absolute, normal path");
        }
        try
        {
            if (Files.isSymbolicLink(path))
            {
                throw new FabricException("region file " + path + " is a symbolic link");
            }
            final Path real = path.toRealPath();
            if (real.startsWith(realDirectory) && !real.equals(realDirectory))
            {
                return real;
            }
            if (HUGETLBFS_TYPE.equals(Files.getFileStore(real).type()) &&
                real.getFileName().toString().startsWith(hugetlbfsFilePrefix(gidHex)))
            {
                return real;
            }
            throw new FabricException("region file " + path + " (really " + real + ") is outside the shm fabric " +
                "directory " + directory + " and is not this device's file on hugetlbfs");
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot resolve region file " + path + ": " + ex, ex);
        }
    }

    /**
     * Opens a peer's file without following a symbolic link and maps all of it, after checking it is a regular file
     * of this user that group and others cannot write, at least {@code minLength} bytes long.
     *
     * @throws FabricException naming the file and why it is refused.
     */
    MemorySegment mapPeerFile(final Path path, final Arena arena, final long minLength)
    {
        try
        {
            final PosixFileAttributes attributes =
                Files.readAttributes(path, PosixFileAttributes.class, LinkOption.NOFOLLOW_LINKS);
            if (!attributes.isRegularFile())
            {
                throw new FabricException("shm peer file " + path + " is not a regular file (a symbolic link?)");
            }
            checkOwner(path);
            if (attributes.permissions().contains(PosixFilePermission.GROUP_WRITE) ||
                attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE))
            {
                throw new FabricException("shm peer file " + path + " is writable by group or others");
            }
            // On the posting thread, which may be the application's: see InterruptImmuneIo.
            return InterruptImmuneIo.call(() ->
            {
                try (FileChannel channel = FileChannel.open(
                    path, StandardOpenOption.READ, StandardOpenOption.WRITE, LinkOption.NOFOLLOW_LINKS))
                {
                    final long size = channel.size();
                    if (size < minLength)
                    {
                        throw new FabricException("shm peer file " + path + " is " + size + " bytes, smaller than " +
                            "the " + minLength + " announced");
                    }
                    return channel.map(FileChannel.MapMode.READ_WRITE, 0, size, arena);
                }
            });
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot map shm peer file " + path + ": " + ex, ex);
        }
    }

    /**
     * Opens a peer's file that has no name peers may map (unlinked, or outside the fabric directory) through the
     * peer's descriptor ({@code /proc/<peer pid>/fd/<n>}, which the kernel lets a process of the same user open) and
     * maps all of it <b>read-only</b>, after checking the file it leads to is a regular file of this user that group
     * and others cannot write, at least {@code minLength} bytes long. Only READ is ever served from such a mapping:
     * the peer granted no more, and a table rewritten later to claim more cannot make this process write through it.
     *
     * @throws FabricException naming the path and why it is refused.
     */
    MemorySegment mapPeerDescriptor(final Path path, final Arena arena, final long minLength)
    {
        try
        {
            // Followed on purpose: the magic link is how the file is reached; what it leads to is checked.
            final PosixFileAttributes attributes = Files.readAttributes(path, PosixFileAttributes.class);
            if (!attributes.isRegularFile())
            {
                throw new FabricException("shm peer descriptor " + path + " does not lead to a regular file");
            }
            final int owner = (Integer)Files.getAttribute(path, "unix:uid");
            if (owner != processUid)
            {
                throw new FabricException("shm peer descriptor " + path + " leads to a file of uid " + owner +
                    ", not of this process's user (uid " + processUid + ")");
            }
            if (attributes.permissions().contains(PosixFilePermission.GROUP_WRITE) ||
                attributes.permissions().contains(PosixFilePermission.OTHERS_WRITE))
            {
                throw new FabricException("shm peer descriptor " + path + " leads to a file writable by group or " +
                    "others");
            }
            return InterruptImmuneIo.call(() ->
            {
                try (FileChannel channel = FileChannel.open(path, StandardOpenOption.READ))
                {
                    final long size = channel.size();
                    if (size < minLength)
                    {
                        throw new FabricException("shm peer descriptor " + path + " leads to " + size + " bytes, " +
                            "fewer than the " + minLength + " announced");
                    }
                    return channel.map(FileChannel.MapMode.READ_ONLY, 0, size, arena);
                }
            });
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot map shm peer descriptor " + path + " (both processes must be of one " +
                "user and see one another in /proc): " + ex, ex);
        }
    }

    private void checkOwner(final Path path) throws IOException
    {
        final int owner = (Integer)Files.getAttribute(path, "unix:uid", LinkOption.NOFOLLOW_LINKS);
        if (owner != processUid)
        {
            throw new FabricException("shm peer file " + path + " belongs to uid " + owner + ", not to this " +
                "process's user (uid " + processUid + ")");
        }
    }
}
