package io.verbus.common;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.EnumSet;
import java.util.Set;

/**
 * Directories and files only this process's user can read or write: the Verbus dir and the shm fabric directories
 * are created 0700, the files in them 0600 (mapped logs and ring files hold every message; the counters show what
 * runs), so shm peers must run as the same user. A directory that already exists must belong to this user, both the
 * entry itself and, if it is a symbolic link, what it points to: one created by another user could be read, replaced
 * or filled by that user, so it is refused. One of ours that is open to group or others is closed to them.
 * <p>
 * Used by bus-core (the Verbus dir) and the soft fabric providers (the shm directories), which may not depend on each
 * other.
 */
public final class OwnerOnlyFiles
{
    /** rw------- for files. */
    public static final Set<PosixFilePermission> FILE_PERMISSIONS =
        EnumSet.of(PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE);

    /** rwx------ for directories. */
    public static final Set<PosixFilePermission> DIRECTORY_PERMISSIONS = EnumSet.of(
        PosixFilePermission.OWNER_READ, PosixFilePermission.OWNER_WRITE, PosixFilePermission.OWNER_EXECUTE);

    private static final System.Logger LOGGER = System.getLogger(OwnerOnlyFiles.class.getName());

    private OwnerOnlyFiles()
    {
    }

    /** @return the attribute that creates a file rw------- (the umask can only take bits away). */
    public static FileAttribute<Set<PosixFilePermission>> fileAttribute()
    {
        return PosixFilePermissions.asFileAttribute(FILE_PERMISSIONS);
    }

    /**
     * Creates {@code dir} (and missing parents) rwx------, or checks that the existing one is this user's and closes
     * it to group and others.
     *
     * @param dir  the directory.
     * @param what what it is, for the error, e.g. {@code "Verbus dir"}.
     * @return {@code dir}.
     * @throws IllegalStateException when it exists but belongs to another user, or is not a directory.
     * @throws UncheckedIOException  when it cannot be created or inspected.
     */
    public static Path ensureDirectory(final Path dir, final String what)
    {
        try
        {
            if (!Files.exists(dir, LinkOption.NOFOLLOW_LINKS))
            {
                if (null != dir.getParent())
                {
                    Files.createDirectories(dir.getParent());
                }
                try
                {
                    Files.createDirectory(dir, PosixFilePermissions.asFileAttribute(DIRECTORY_PERMISSIONS));
                    return dir;
                }
                catch (final java.nio.file.FileAlreadyExistsException raced)
                {
                    // someone created it meanwhile: check it as an existing one
                }
            }
            final int processUid = processUid();
            final int linkOwner = (Integer)Files.getAttribute(dir, "unix:uid", LinkOption.NOFOLLOW_LINKS);
            final int owner = (Integer)Files.getAttribute(dir, "unix:uid");
            if (linkOwner != processUid || owner != processUid)
            {
                throw new IllegalStateException(what + " " + dir + " exists but belongs to uid " +
                    (linkOwner != processUid ? linkOwner : owner) + ", not to this process's user (uid " + processUid +
                    "): refusing it, as that user could read or replace what is in it; remove it or use another");
            }
            if (!Files.isDirectory(dir))
            {
                throw new IllegalStateException(what + " " + dir + " exists but is not a directory");
            }
            final Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(dir);
            if (!DIRECTORY_PERMISSIONS.containsAll(permissions))
            {
                Files.setPosixFilePermissions(dir, DIRECTORY_PERMISSIONS);
                LOGGER.log(System.Logger.Level.INFO, what + " " + dir + " was " +
                    PosixFilePermissions.toString(permissions) + ": closed it to group and others (rwx------)");
            }
            return dir;
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("cannot create or check " + what + " " + dir + ": " + ex, ex);
        }
    }

    /** @return the effective uid of this process (the owner of {@code /proc/self}). */
    public static int processUid() throws IOException
    {
        return (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
    }
}
