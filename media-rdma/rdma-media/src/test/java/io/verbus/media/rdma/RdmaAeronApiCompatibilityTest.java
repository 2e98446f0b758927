package io.verbus.media.rdma;

import io.verbus.AeronApiCompatibility;
import io.verbus.fabric.FabricContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.nio.file.Path;

/**
 * {@link AeronApiCompatibility} on {@code rdma:} channels over the shm provider: publications of every stream share
 * one endpoint; images are bounded by the remote-written position and never see an end of stream.
 */
class RdmaAeronApiCompatibilityTest extends AeronApiCompatibility
{
    @TempDir
    static Path fabricDir;

    private static String previousSecret;
    private static String previousShmDir;

    private final String endpoint = "rdma:endpoint=127.0.0.1:" + freePort() + "|provider=shm";

    @BeforeAll
    static void configure()
    {
        previousSecret = System.setProperty(RdmaSecret.SECRET_PROP_NAME, "verbus-api-test-secret-0123456789");
        previousShmDir = System.setProperty(FabricContext.SHM_DIR_PROP_NAME, fabricDir.toString());
    }

    @AfterAll
    static void restore()
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

    private static int freePort()
    {
        try (ServerSocket socket = new ServerSocket(0))
        {
            return socket.getLocalPort();
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException(ex);
        }
    }

    protected String publicationChannel()
    {
        return endpoint + "|term-length=64k";
    }

    protected String subscriptionChannel()
    {
        return endpoint;
    }

    protected String withSessionId(final String channel, final int sessionId)
    {
        return channel + "|session-id=" + sessionId;
    }

    protected int activeTransportCount()
    {
        return 1;
    }

    /** A closing rdma: publication WRITEs an end-of-stream position block after its last data. */
    protected boolean signalsEndOfStream()
    {
        return true;
    }
}
