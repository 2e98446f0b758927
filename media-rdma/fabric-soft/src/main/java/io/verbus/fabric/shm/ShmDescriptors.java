package io.verbus.fabric.shm;

import io.verbus.fabric.FabricException;

import java.io.IOException;
import java.lang.foreign.FunctionDescriptor;
import java.lang.foreign.Linker;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.lang.invoke.MethodHandle;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.regex.Pattern;

/**
 * Sharing, for READ, memory whose file peers cannot map by name: an embedded driver's log (mapped, then unlinked, so
 * that it lives exactly as long as the process holds it) or a standalone driver's (kept in the Verbus dir, outside
 * the shm fabric directory that peers confine region files to). No name can be given back to an unlinked file
 * (Linux links an unlinked file again only when it was made with {@code O_TMPFILE}), but a process of the same user
 * may open either through the owner's descriptor, {@code /proc/<pid>/fd/<n>}. So the owner duplicates a descriptor of
 * the file for the registration alone (close-on-exec), publishes that path, and closes the descriptor when the
 * registration ends: nothing is ever written into a directory, so nothing is left behind when the owner is killed
 * (the kernel closes its descriptors).
 * <p>
 * Registration time only (reads {@code /proc/self/maps} and {@code /proc/self/fd}); never on a data path.
 */
final class ShmDescriptors
{
    /** Linux's fcntl command: duplicate to the lowest free descriptor, with close-on-exec set. */
    private static final int F_DUPFD_CLOEXEC = 1030;
    private static final Pattern DESCRIPTOR_PATH = Pattern.compile("/proc/([1-9][0-9]{0,9})/fd/(0|[1-9][0-9]{0,9})");

    /**
     * A descriptor duplicated for one registration.
     *
     * @param fd         the descriptor number in this process; close it with {@link #close(int)}.
     * @param path       {@code /proc/<this pid>/fd/<fd>}: what a peer opens.
     * @param fileOffset where the registered segment starts in the file.
     */
    record Shared(int fd, Path path, long fileOffset)
    {
    }

    private ShmDescriptors()
    {
    }

    /**
     * @return the pid a region path names when it is a descriptor path {@code /proc/<pid>/fd/<n>}, else -1.
     */
    static long descriptorPathPid(final String pathText)
    {
        final java.util.regex.Matcher matcher = DESCRIPTOR_PATH.matcher(pathText);
        return matcher.matches() ? Long.parseLong(matcher.group(1)) : -1;
    }

    /**
     * Duplicates a descriptor of the file behind a shared file mapping of this process (unlinked or not).
     *
     * @return the duplicate, or null when {@code [address, address + length)} is not inside one shared file mapping
     * whose file this process still holds open.
     * @throws FabricException when the kernel refuses the duplicate.
     */
    static Shared shareHeldOpen(final long address, final long length)
    {
        final ShmFiles.SharedFileMapping mapping = ShmFiles.findSharedFileMapping(address, length);
        return null == mapping ? null : duplicate(mapping.pathName(), mapping.inode(), mapping.fileOffset());
    }

    private static Shared duplicate(final String linkTarget, final long inode, final long fileOffset)
    {
        final int fd = findDescriptor(linkTarget, inode);
        if (fd < 0)
        {
            return null; // mapped, but no longer open: nothing a peer could open
        }
        final int copy;
        try
        {
            // close-on-exec, so that no child process inherits the log
            copy = (int)Native.FCNTL.invokeExact(fd, F_DUPFD_CLOEXEC, 0);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("fcntl(" + fd + ", F_DUPFD_CLOEXEC) failed: " + ex, ex);
        }
        if (copy < 0)
        {
            throw new FabricException("fcntl(" + fd + ", F_DUPFD_CLOEXEC) of " + linkTarget + " failed");
        }
        // The descriptor found may have been closed and its number reused between the scan and the dup.
        if (inode != inodeOf(Path.of("/proc/self/fd/" + copy)))
        {
            close(copy);
            return null;
        }
        return new Shared(copy, Path.of("/proc/" + ProcessHandle.current().pid() + "/fd/" + copy), fileOffset);
    }

    private static int findDescriptor(final String linkTarget, final long inode)
    {
        try (DirectoryStream<Path> descriptors = Files.newDirectoryStream(Path.of("/proc/self/fd")))
        {
            for (final Path descriptor : descriptors)
            {
                try
                {
                    if (linkTarget.equals(Files.readSymbolicLink(descriptor).toString()) &&
                        inode == inodeOf(descriptor))
                    {
                        return Integer.parseInt(descriptor.getFileName().toString());
                    }
                }
                catch (final IOException | RuntimeException ignore)
                {
                    // closed since the listing (or the stream's own descriptor): not the one
                }
            }
        }
        catch (final IOException ex)
        {
            throw new FabricException("cannot list /proc/self/fd to find the file behind a region: " + ex, ex);
        }
        return -1;
    }

    private static long inodeOf(final Path descriptor)
    {
        try
        {
            return ((Number)Files.getAttribute(descriptor, "unix:ino")).longValue();
        }
        catch (final IOException | RuntimeException ex)
        {
            return -1;
        }
    }

    /**
     * Closes a descriptor {@link #shareHeldOpen} duplicated.
     *
     * @return true when the kernel closed it.
     */
    static boolean close(final int fd)
    {
        try
        {
            return 0 == (int)Native.CLOSE.invokeExact(fd);
        }
        catch (final Throwable ex)
        {
            throw new FabricException("close(" + fd + ") failed: " + ex, ex);
        }
    }

    /** libc's fcntl and close, bound on first use. */
    private static final class Native
    {
        static final MethodHandle FCNTL = function("fcntl", FunctionDescriptor.of(
            ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT, ValueLayout.JAVA_INT),
            Linker.Option.firstVariadicArg(2));
        static final MethodHandle CLOSE = function("close",
            FunctionDescriptor.of(ValueLayout.JAVA_INT, ValueLayout.JAVA_INT));

        private static MethodHandle function(
            final String name, final FunctionDescriptor descriptor, final Linker.Option... options)
        {
            final Linker linker = Linker.nativeLinker();
            final MemorySegment symbol = linker.defaultLookup().find(name)
                .orElseThrow(() -> new FabricException("libc has no " + name));
            return linker.downcallHandle(symbol, descriptor, options);
        }
    }
}
