package io.verbus.media.rdma;

import io.verbus.ExclusivePublication;
import io.verbus.Image;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.fabric.FabricContext;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An {@code rdma:} image reports the publisher's MTU (carried in the handshake's CHALLENGE), as an Aeron image does,
 * not the subscriber's own channel default: a subscriber that sizes buffers by {@code Image.mtuLength()} must see
 * what the publisher fragments at.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdmaImageMtuTest
{
    @TempDir
    static Path fabricDir;

    @TempDir
    Path dir;

    private static String previousSecret;
    private static String previousShmDir;

    @BeforeAll
    static void configure()
    {
        previousSecret = System.setProperty(RdmaSecret.SECRET_PROP_NAME, "verbus-mtu-test-secret-0123456789");
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

    @Test
    void shouldReportThePublishersMtuOnTheImage()
    {
        try (Verbus verbus = Verbus.launch(new Verbus.Context()
            .dir(dir.resolve("verbus").toString())
            .threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping")))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication(
                "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=64k|mtu=4096", 2101);
            final int port = RdmaVerbusTest.controlPort(verbus.countersReader());
            final Subscription subscription =
                verbus.addSubscription("rdma:endpoint=127.0.0.1:" + port + "|provider=shm", 2101);

            final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (subscription.imageCount() == 0 || !publication.isConnected())
            {
                assertTrue(System.nanoTime() < deadlineNs, "not connected");
                Thread.onSpinWait();
            }
            final Image image = subscription.imageAtIndex(0);
            assertEquals(4096, image.mtuLength(), "the publisher's mtu, not the subscriber channel's default");
            assertEquals(publication.maxPayloadLength() + 32, image.mtuLength());
        }
    }
}
