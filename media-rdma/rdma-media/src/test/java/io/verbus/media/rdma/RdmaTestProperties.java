package io.verbus.media.rdma;

import io.verbus.fabric.FabricContext;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;

/**
 * The two system properties an in-process rdma test needs, set for one test class and restored after it: a shared
 * secret (both ends read the same one) and a private shm fabric dir, so classes never see each other's devices.
 * Use with {@code @ExtendWith(RdmaTestProperties.class)}.
 */
final class RdmaTestProperties implements BeforeAllCallback, AfterAllCallback
{
    private String previousSecret;
    private String previousShmDir;
    private Path shmDir;

    @Override
    public void beforeAll(final ExtensionContext context)
    {
        try
        {
            shmDir = Files.createTempDirectory("verbus-rdma-test-shm-");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
        previousSecret = System.setProperty(RdmaSecret.SECRET_PROP_NAME,
            "verbus-" + context.getRequiredTestClass().getSimpleName() + "-secret-0123456789");
        previousShmDir = System.setProperty(FabricContext.SHM_DIR_PROP_NAME, shmDir.toString());
    }

    @Override
    public void afterAll(final ExtensionContext context) throws IOException
    {
        restore(RdmaSecret.SECRET_PROP_NAME, previousSecret);
        restore(FabricContext.SHM_DIR_PROP_NAME, previousShmDir);
        try (var paths = Files.walk(shmDir))
        {
            paths.sorted(Comparator.reverseOrder()).forEach(path -> path.toFile().delete());
        }
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
