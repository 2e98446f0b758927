package io.verbus.test;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Who the test process runs as: the tests that mount a tmpfs, reserve huge pages or chown a file run only as root and
 * are skipped, saying why, otherwise.
 */
public final class ProcessUser
{
    private ProcessUser()
    {
    }

    /**
     * @return true when the process's real user id is 0, read from {@code /proc/self/status}; false where that cannot
     * be read (not Linux, no /proc).
     */
    public static boolean isRoot()
    {
        try
        {
            for (final String line : Files.readAllLines(Path.of("/proc/self/status")))
            {
                if (line.startsWith("Uid:"))
                {
                    final String[] ids = line.substring(4).strip().split("\\s+");
                    return ids.length > 0 && "0".equals(ids[0]);
                }
            }
        }
        catch (final IOException ignore)
        {
            // not Linux, or /proc not mounted: not known to be root
        }
        return false;
    }
}
