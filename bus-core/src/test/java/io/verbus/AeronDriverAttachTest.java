package io.verbus;

import io.aeron.Aeron;
import io.aeron.exceptions.DriverTimeoutException;
import io.aeron.logbuffer.FragmentHandler;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.function.ToLongFunction;

import static io.verbus.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link Verbus.Context#aeronDirectoryName(String)}: {@code aeron:} channels of a Verbus attach to a plain Aeron
 * media driver that already runs (here in this JVM, in its own dir) instead of launching an embedded one, and carry
 * checked messages both ways with a plain Aeron client of the same driver.
 */
class AeronDriverAttachTest
{
    private static final int MESSAGES = 20_000;
    private static final long TIMEOUT_NS = 60_000_000_000L;

    @TempDir
    Path tempDir;

    private static io.aeron.driver.MediaDriver launchAeronDriver(final Path aeronDir)
    {
        return io.aeron.driver.MediaDriver.launch(new io.aeron.driver.MediaDriver.Context()
            .aeronDirectoryName(aeronDir.toString())
            .threadingMode(io.aeron.driver.ThreadingMode.SHARED)
            .sharedIdleStrategy(new org.agrona.concurrent.SleepingMillisIdleStrategy(1))
            .ipcTermBufferLength(64 * 1024)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true));
    }

    @Test
    void shouldExchangeCheckedMessagesBothWaysWithAPlainAeronClientOfARunningAeronDriver()
    {
        final Path aeronDir = tempDir.resolve("plain-aeron");
        final Verbus.Context context = TestSupport.context(tempDir).aeronDirectoryName(aeronDir.toString());
        try (io.aeron.driver.MediaDriver ignored = launchAeronDriver(aeronDir);
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir.toString()));
            Verbus verbus = Verbus.launch(context))
        {
            // Verbus to Aeron.
            final io.aeron.Subscription aeronSubscription = aeron.addSubscription("aeron:ipc", 41);
            final Publication verbusPublication = verbus.addPublication("aeron:ipc", 41);
            exchange(verbusPublication::isConnected, (buffer) -> verbusPublication.offer(buffer, 0, 8),
                (handler) -> aeronSubscription.poll(handler, 100));

            // Aeron to Verbus.
            final Subscription verbusSubscription = verbus.addSubscription("aeron:ipc", 42);
            final io.aeron.ExclusivePublication aeronPublication = aeron.addExclusivePublication("aeron:ipc", 42);
            exchange(aeronPublication::isConnected, (buffer) -> aeronPublication.offer(buffer, 0, 8),
                (handler) -> verbusSubscription.poll(handler, 100));

            assertFalse(Files.exists(Path.of(context.dir(), "aeron")), "no embedded Aeron driver was launched");
            // The attached driver's term length (64 KiB here), not the Verbus one, applies.
            assertEquals(64 * 1024, verbusPublication.termBufferLength());
        }
    }

    @Test
    void shouldRunTheAttachedAeronClientInInvokeInInvokerMode()
    {
        final Path aeronDir = tempDir.resolve("plain-aeron");
        try (io.aeron.driver.MediaDriver ignored = launchAeronDriver(aeronDir);
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir.toString()));
            Verbus verbus = Verbus.launch(TestSupport.context(tempDir)
                .threadingMode(ThreadingMode.INVOKER).aeronDirectoryName(aeronDir.toString())))
        {
            final Subscription subscription = verbus.addSubscription("aeron:ipc", 44);
            final io.aeron.Publication aeronPublication = aeron.addPublication("aeron:ipc", 44);
            // Image events reach the Verbus subscription only through invoke(): the poll step runs it.
            exchange(aeronPublication::isConnected, (buffer) -> aeronPublication.offer(buffer, 0, 8),
                (handler) -> verbus.invoke() + subscription.poll(handler, 100));
            assertEquals(1, subscription.imageCount());
        }
    }

    /** Aeron's own driver timeout reports an attached driver that stops, and closes the channels on it. */
    @Test
    void shouldReportAnAttachedAeronDriverThatStops()
    {
        final Path aeronDir = tempDir.resolve("plain-aeron");
        final java.util.concurrent.atomic.AtomicReference<Throwable> error =
            new java.util.concurrent.atomic.AtomicReference<>();
        final io.aeron.driver.MediaDriver aeronDriver = launchAeronDriver(aeronDir);
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).aeronDirectoryName(aeronDir.toString())
            .driverTimeoutMs(1_000).errorHandler((t) -> error.compareAndSet(null, t))))
        {
            final Publication publication = verbus.addPublication("aeron:ipc", 45);
            final Subscription subscription = verbus.addSubscription("aeron:ipc", 45);
            await("connected", publication::isConnected);

            aeronDriver.close();
            final long stoppedNs = System.nanoTime();
            // Aeron closes the client's publications and subscriptions, then reports the timeout.
            await("the channels closed and the error reported",
                () -> publication.isClosed() && subscription.isClosed() && null != error.get());
            assertInstanceOf(DriverTimeoutException.class, error.get());
            assertEquals(Publication.CLOSED, publication.offer(new UnsafeBuffer(new byte[8]), 0, 8));
            System.out.println("attached Aeron driver stopped: reported " +
                (System.nanoTime() - stoppedNs) / 1_000_000 + " ms later (driver timeout 1000 ms): " + error.get());
        }
        finally
        {
            aeronDriver.close();
        }
    }

    /** Sends {@link #MESSAGES} sequence numbers and checks that each arrives once, in order. */
    private static void exchange(
        final java.util.function.BooleanSupplier connected,
        final ToLongFunction<UnsafeBuffer> offer,
        final ToLongFunction<FragmentHandler> poll)
    {
        await("connected", connected);
        final UnsafeBuffer buffer = new UnsafeBuffer(ByteBuffer.allocateDirect(8));
        final long[] next = {0};
        final String[] error = {null};
        final FragmentHandler handler = (b, o, l, h) ->
        {
            final long sequence = b.getLong(o);
            if (sequence != next[0] && null == error[0])
            {
                error[0] = "sequence " + sequence + " where " + next[0] + " was due";
            }
            next[0] = sequence + 1;
        };
        long sent = 0;
        final long deadline = System.nanoTime() + TIMEOUT_NS;
        while (next[0] < MESSAGES && null == error[0] && System.nanoTime() < deadline)
        {
            if (sent < MESSAGES)
            {
                buffer.putLong(0, sent);
                if (offer.applyAsLong(buffer) > 0)
                {
                    sent++;
                }
            }
            poll.applyAsLong(handler);
        }
        assertEquals(null, error[0]);
        assertEquals(MESSAGES, next[0]);
    }

    @Test
    void shouldNameTheDirWhenNoAeronDriverRunsThere()
    {
        final Path aeronDir = tempDir.resolve("no-aeron-here");
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir)
            .aeronDirectoryName(aeronDir.toString()).driverTimeoutMs(500)))
        {
            final IllegalStateException ex =
                assertThrows(IllegalStateException.class, () -> verbus.addPublication("aeron:ipc", 1));
            assertTrue(ex.getMessage().contains(aeronDir.toString()), ex.getMessage());
            assertInstanceOf(DriverTimeoutException.class, ex.getCause());
            // Native channels are untouched, and the next aeron: channel tries again.
            verbus.addPublication("ipc", 1).close();
            assertThrows(IllegalStateException.class, () -> verbus.addSubscription("aeron:ipc", 1));
        }
    }

    @Test
    void shouldNameTheDirWhenAStandaloneDriverIsToAttachToNoAeronDriver()
    {
        final Path aeronDir = tempDir.resolve("no-aeron-here");
        final IllegalStateException ex = assertThrows(IllegalStateException.class, () -> MediaDriver.launch(
            TestSupport.context(tempDir).aeronDirectoryName(aeronDir.toString()).driverTimeoutMs(500)));
        assertTrue(ex.getMessage().contains(aeronDir.toString()), ex.getMessage());
        assertInstanceOf(DriverTimeoutException.class, ex.getCause());
    }

    @Test
    void shouldServeAStandaloneDriversClientsThroughTheAeronDriverItAttachedTo()
    {
        final Path aeronDir = tempDir.resolve("plain-aeron");
        try (io.aeron.driver.MediaDriver ignored = launchAeronDriver(aeronDir);
            Aeron aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir.toString()));
            MediaDriver driver =
                MediaDriver.launch(TestSupport.context(tempDir).aeronDirectoryName(aeronDir.toString()));
            Verbus client = Verbus.connect(new Verbus.Context().dir(driver.dir())))
        {
            assertEquals(aeronDir.toString(), driver.aeronDirectoryName());
            final Subscription subscription = client.addSubscription("aeron:ipc", 43);
            final io.aeron.Publication aeronPublication = aeron.addPublication("aeron:ipc", 43);
            exchange(aeronPublication::isConnected, (buffer) -> aeronPublication.offer(buffer, 0, 8),
                (handler) -> subscription.poll(handler, 100));
            assertFalse(Files.exists(Path.of(driver.dir(), "aeron")));
        }
    }
}
