package io.verbus.driver;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Which process a driver client is, so that a standalone driver can free a client that was killed as soon as its
 * process is gone instead of after the client liveness timeout (10 s by default; a gateway restarted after a crash
 * would otherwise find its rdma: stream still taken by its dead self for that long). A pid means the same process
 * only inside one pid namespace, so the driver trusts it only when the client's namespace is its own; a pid reused
 * since looks alive, and the timeout still applies.
 */
public final class ClientProcess
{
    private static final Path PID_NAMESPACE = Path.of("/proc/self/ns/pid");
    private static final long OWN_PID_NAMESPACE = readPidNamespace();
    private static final long OWN_PID = ProcessHandle.current().pid();

    private ClientProcess()
    {
    }

    /** @return this process's id, as a keepalive carries it. */
    public static long pid()
    {
        return OWN_PID;
    }

    /** @return the inode of this process's pid namespace, or 0 where there is no {@code /proc/self/ns/pid}. */
    public static long pidNamespace()
    {
        return OWN_PID_NAMESPACE;
    }

    /**
     * @param pid          a client's process id, as it sent it.
     * @param pidNamespace the inode of that client's pid namespace, as it sent it.
     * @return true only when the pid is known to name no live process: the client is in this process's namespace
     * (known on both sides) and no process has that pid.
     */
    public static boolean hasExited(final long pid, final long pidNamespace)
    {
        if (pid <= 0 || 0 == pidNamespace || pidNamespace != OWN_PID_NAMESPACE)
        {
            return false;
        }
        return ProcessHandle.of(pid).map(handle -> !handle.isAlive()).orElse(true);
    }

    private static long readPidNamespace()
    {
        try
        {
            // "pid:[4026531836]"
            final String link = Files.readSymbolicLink(PID_NAMESPACE).toString();
            final int open = link.indexOf('[');
            final int close = link.indexOf(']', open + 1);
            return open < 0 || close < 0 ? 0 : Long.parseLong(link.substring(open + 1, close));
        }
        catch (final Exception ex)
        {
            return 0; // no procfs (or not Linux): pids are not used, the liveness timeout decides
        }
    }
}
