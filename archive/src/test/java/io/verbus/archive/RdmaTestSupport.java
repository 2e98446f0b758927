package io.verbus.archive;

import io.verbus.fabric.FabricContext;
import io.verbus.media.rdma.RdmaSecret;

import java.nio.file.Path;
import java.util.List;

/** The rdma settings tests share with their child processes: a secret and a private shm fabric dir. */
final class RdmaTestSupport implements AutoCloseable
{
    static final String SECRET = "archive-test-secret-0123456789abcdef";

    private final Path fabricDir;
    private final String previousSecret;
    private final String previousShmDir;

    /** Sets the properties in this JVM until closed. */
    RdmaTestSupport(final Path fabricDir)
    {
        this.fabricDir = fabricDir;
        previousSecret = System.setProperty(RdmaSecret.SECRET_PROP_NAME, SECRET);
        previousShmDir = System.setProperty(FabricContext.SHM_DIR_PROP_NAME, fabricDir.toString());
    }

    /** @return the same settings as {@code -D} arguments for a child JVM. */
    List<String> childProperties()
    {
        return List.of("-D" + RdmaSecret.SECRET_PROP_NAME + "=" + SECRET,
            "-D" + FabricContext.SHM_DIR_PROP_NAME + "=" + fabricDir);
    }

    public void close()
    {
        restore(RdmaSecret.SECRET_PROP_NAME, previousSecret);
        restore(FabricContext.SHM_DIR_PROP_NAME, previousShmDir);
    }

    private static void restore(final String name, final String value)
    {
        if (null == value)
        {
            System.clearProperty(name);
        }
        else
        {
            System.setProperty(name, value);
        }
    }
}
