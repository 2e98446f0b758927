package io.verbus;

import io.verbus.counters.CountersFile;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static io.verbus.TestSupport.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A standalone driver and its clients as real processes ({@link StandaloneDriverChild}): an {@code ipc} stream
 * between two client processes through the driver's log, kill -9 of a client, kill -9 of the driver.
 * <p>
 * Message count of the exchange: {@code -Dverbus.standalone.messages=N} (default 1,000,000; the 10,000,000 form
 * is {@code -Dverbus.standalone.messages=10000000}); of the {@code aeron:ipc} exchange through the driver's Aeron
 * media driver: {@code -Dverbus.standalone.aeron.messages=N} (default 100,000).
 */
class StandaloneDriverCrossProcessTest
{
    private static final long MESSAGES = Long.getLong("verbus.standalone.messages", 1_000_000);
    private static final long AERON_MESSAGES = Long.getLong("verbus.standalone.aeron.messages", 100_000);

    @TempDir
    Path tempDir;

    private final List<Child> children = new ArrayList<>();

    @AfterEach
    void killChildren()
    {
        for (final Child child : children)
        {
            child.process.destroyForcibly();
        }
    }

    /** A child JVM whose output lines are collected as they come. */
    private static final class Child
    {
        private final Process process;
        private final List<String> lines = new CopyOnWriteArrayList<>();

        Child(final Process process)
        {
            this.process = process;
            final Thread reader = new Thread(() ->
            {
                try (BufferedReader in = new BufferedReader(
                    new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8)))
                {
                    String line;
                    while (null != (line = in.readLine()))
                    {
                        lines.add(line);
                    }
                }
                catch (final java.io.IOException ignore)
                {
                    // The process died: what it printed is in lines.
                }
            });
            reader.setDaemon(true);
            reader.start();
        }

        String awaitLine(final String prefix, final long timeoutMs)
        {
            final long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
            while (System.nanoTime() < deadline)
            {
                for (final String line : lines)
                {
                    if (line.startsWith(prefix))
                    {
                        return line;
                    }
                    if (line.startsWith("FAILED"))
                    {
                        fail("child failed: " + lines);
                    }
                }
                if (!process.isAlive() && lines.stream().noneMatch((l) -> l.startsWith(prefix)))
                {
                    TestSupport.sleep(200); // let the reader drain the last lines
                    if (lines.stream().noneMatch((l) -> l.startsWith(prefix)))
                    {
                        fail("child exited " + process.exitValue() + " before '" + prefix + "': " + lines);
                    }
                }
                TestSupport.sleep(5);
            }
            fail("no '" + prefix + "' within " + timeoutMs + " ms: " + lines);
            return null;
        }

        int awaitExit(final long timeoutMs) throws InterruptedException
        {
            if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
            {
                fail("child still running after " + timeoutMs + " ms: " + lines);
            }
            return process.exitValue();
        }

        void kill9() throws InterruptedException
        {
            process.destroyForcibly(); // SIGKILL on Linux
            assertTrue(process.waitFor(10, TimeUnit.SECONDS));
        }
    }

    private Child start(final String... args) throws Exception
    {
        return start(StandaloneDriverChild.class, args);
    }

    private Child start(final Class<?> mainClass, final String... args) throws Exception
    {
        final Child child = new Child(new ProcessBuilder(TestSupport.childJava(mainClass, args))
            .redirectErrorStream(true).start());
        children.add(child);
        return child;
    }

    private String dir()
    {
        return tempDir.resolve("verbus").toString();
    }

    @Test
    void shouldExchangeMessagesBetweenTwoClientProcessesThroughTheDriver() throws Exception
    {
        final Child driver = start("driver", dir(), "10000");
        driver.awaitLine("DRIVER READY", 30_000);
        final Child subscriber = start("subscriber", dir(), "1001", Long.toString(MESSAGES), "2");
        subscriber.awaitLine("SUBSCRIBED", 30_000);
        final Child publisher = start("publisher", dir(), "1001", Long.toString(MESSAGES));

        final long timeoutMs = 60_000 + MESSAGES / 10;
        final String sent = publisher.awaitLine("SENT", timeoutMs);
        final String received = subscriber.awaitLine("RECEIVED", timeoutMs);
        assertEquals(0, subscriber.awaitExit(30_000), subscriber.lines.toString());
        assertEquals(0, publisher.awaitExit(30_000), publisher.lines.toString());
        final String[] sentParts = sent.split(" ");
        final String[] receivedParts = received.split(" ");
        assertEquals(Long.toString(MESSAGES), receivedParts[1]);
        assertEquals(sentParts[3], receivedParts[3], "checksums: " + sent + " / " + received);
        System.out.println("standalone driver, 2 client processes: " + sent + " / " + received);
        assertTrue(driver.process.isAlive());
    }

    /**
     * {@code ./verbus driver}'s own main class as the driver: two client processes exchange {@code aeron:ipc} through
     * the Aeron media driver it runs, each process with its own Aeron client.
     */
    @Test
    void shouldExchangeAeronIpcMessagesBetweenTwoClientProcessesThroughTheDriversAeronDriver() throws Exception
    {
        final Child driver = start(MediaDriver.class, "--dir", dir(), "--idle-strategy", "backoff");
        final String banner = driver.awaitLine("verbus driver: dir", 30_000);
        assertTrue(banner.contains("aeron: channels through the Aeron driver at " + Path.of(dir(), "aeron")), banner);
        final String count = Long.toString(AERON_MESSAGES);
        final Child subscriber = start("subscriber", dir(), "1002", count, "2", "aeron:ipc");
        subscriber.awaitLine("SUBSCRIBED", 30_000);
        final Child publisher = start("publisher", dir(), "1002", count, "aeron:ipc");

        final long timeoutMs = 60_000 + AERON_MESSAGES / 10;
        final String sent = publisher.awaitLine("SENT", timeoutMs);
        final String received = subscriber.awaitLine("RECEIVED", timeoutMs);
        assertEquals(0, subscriber.awaitExit(30_000), subscriber.lines.toString());
        assertEquals(0, publisher.awaitExit(30_000), publisher.lines.toString());
        assertEquals(count, received.split(" ")[1]);
        assertEquals(sent.split(" ")[3], received.split(" ")[3], "checksums: " + sent + " / " + received);
        System.out.println("standalone driver, aeron:ipc, 2 client processes: " + sent + " / " + received);
        assertTrue(driver.process.isAlive());
    }

    @Test
    void shouldKeepServingOtherClientsWhenAClientIsKilled() throws Exception
    {
        final Child driver = start("driver", dir(), "1000");
        driver.awaitLine("DRIVER READY", 30_000);
        final Child victim = start("victim", dir());
        victim.awaitLine("VICTIM READY", 30_000);

        try (Verbus client = Verbus.connect(new Verbus.Context().dir(dir())))
        {
            final Subscription fromVictim = client.addSubscription("ipc", 2);
            await("the victim's image", () -> 1 == fromVictim.imageCount(),
                () -> fromVictim.poll((b, o, l, h) -> {}, 10));
            final Publication publication = client.addPublication("ipc:term-length=64k", 1);
            final Subscription subscription = client.addSubscription("ipc", 1);
            await("connected", publication::isConnected);

            // The victim subscribes to stream 1 and never polls: the publication stops a window ahead of it.
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
            final long[] received = new long[1];
            long sent = 0;
            long backPressured = 0;
            for (int i = 0; i < 10_000 && backPressured < 100; i++)
            {
                buffer.putLong(0, sent);
                if (publication.offer(buffer, 0, 64) > 0)
                {
                    sent++;
                }
                else
                {
                    backPressured++;
                }
                subscription.poll((b, o, l, h) -> received[0]++, 100);
            }
            assertTrue(backPressured >= 100, "the victim's subscription did not hold the publication back");

            victim.kill9();
            final long killedNs = System.nanoTime();

            // Within the client liveness timeout (1 s here) the driver frees the victim's subscription and publication.
            final long target = sent + 20_000;
            final long[] fromVictimImages = new long[1];
            await("the stream moving again", () ->
            {
                if (sent(publication, buffer))
                {
                    fromVictimImages[0] = fromVictim.imageCount();
                }
                subscription.poll((b, o, l, h) -> received[0]++, 100);
                fromVictim.poll((b, o, l, h) -> {}, 100);
                return received[0] >= target - 1 || publication.position() > 20_000L * 96 + 64 * 1024;
            }, () -> {});
            final long movedMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
            await("the victim's image gone", () -> 0 == fromVictim.imageCount(),
                () -> fromVictim.poll((b, o, l, h) -> {}, 100));

            // A new client process can still subscribe and receive from this client through the driver.
            final Child newSubscriber = start("subscriber", dir(), "3", "10000", "2");
            newSubscriber.awaitLine("SUBSCRIBED", 30_000);
            final Child newPublisher = start("publisher", dir(), "3", "10000");
            try
            {
                newSubscriber.awaitLine("RECEIVED 10000", 60_000);
            }
            catch (final AssertionError ex)
            {
                throw new AssertionError(ex.getMessage() + "; the publisher printed " + newPublisher.lines +
                    (newPublisher.process.isAlive() ? " (running)" : " (exited " + newPublisher.process.exitValue() +
                    ")") + "; the driver printed " + driver.lines, ex);
            }
            assertEquals(0, newSubscriber.awaitExit(30_000));
            assertEquals(0, newPublisher.awaitExit(30_000));
            assertTrue(driver.process.isAlive());
            System.out.println("kill -9 of a client: stream moving again " + movedMs + " ms after the kill");
        }
    }

    @Test
    void shouldFreeTheCounterOfAKilledClient() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir)
                .clientLivenessTimeoutNs(TimeUnit.MILLISECONDS.toNanos(1_000)));
            CountersFile stat = CountersFile.openReadOnly(Path.of(dir())))
        {
            final CountersReader reader = stat.countersReader(); // what ./verbus stat reads
            final Child holder = start("counter", dir());
            final int counterId = Integer.parseInt(holder.awaitLine("COUNTER ", 30_000).substring(8).trim());
            assertEquals(CountersReader.RECORD_ALLOCATED, reader.getCounterState(counterId));
            assertEquals("child process counter", reader.getCounterLabel(counterId));
            assertEquals(77, reader.getCounterValue(counterId));

            holder.kill9();
            final long killedNs = System.nanoTime();
            await("the killed client's counter freed",
                () -> CountersReader.RECORD_ALLOCATED != reader.getCounterState(counterId));
            System.out.println("kill -9 of a client: its counter freed " +
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs) + " ms after the kill");
            assertEquals(0, driver.clientCount());
        }
    }

    /**
     * A killed client's process is gone at once: the driver sees it (the pid from its keepalives, in the driver's own
     * pid namespace) and frees what it held long before its liveness timeout (30 s here), as a restarted gateway
     * needs when it takes its rdma: stream again.
     */
    @Test
    void shouldFreeAKilledClientAsSoonAsItsProcessIsGoneNotAfterTheLivenessTimeout() throws Exception
    {
        try (MediaDriver driver = MediaDriver.launch(TestSupport.context(tempDir)
                .clientLivenessTimeoutNs(TimeUnit.SECONDS.toNanos(30)));
            CountersFile stat = CountersFile.openReadOnly(Path.of(dir())))
        {
            final CountersReader reader = stat.countersReader();
            final Child holder = start("counter", dir());
            final int counterId = Integer.parseInt(holder.awaitLine("COUNTER ", 30_000).substring(8).trim());
            assertEquals(CountersReader.RECORD_ALLOCATED, reader.getCounterState(counterId));

            holder.kill9();
            final long killedNs = System.nanoTime();
            final long deadlineNs = killedNs + TimeUnit.SECONDS.toNanos(10);
            while (CountersReader.RECORD_ALLOCATED == reader.getCounterState(counterId))
            {
                assertTrue(System.nanoTime() < deadlineNs,
                    "the killed client's counter still allocated 10 s after the kill (liveness timeout 30 s)");
                Thread.sleep(10);
            }
            System.out.println("kill -9 of a client: freed " +
                TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs) + " ms after the kill (timeout 30 s)");
            assertEquals(0, driver.clientCount());
        }
    }

    private static boolean sent(final Publication publication, final UnsafeBuffer buffer)
    {
        buffer.putLong(0, publication.position());
        return publication.offer(buffer, 0, 64) > 0;
    }

    @Test
    void shouldTellEveryClientWhenTheDriverIsKilled() throws Exception
    {
        shouldTellEveryClientWhenTheDriverIsKilled("ipc");
    }

    /** The clients' Aeron clients go with the driver (its Aeron media driver dies with it). */
    @Test
    void shouldTellEveryClientOfAeronChannelsWhenTheDriverIsKilled() throws Exception
    {
        shouldTellEveryClientWhenTheDriverIsKilled("aeron:ipc");
    }

    private void shouldTellEveryClientWhenTheDriverIsKilled(final String channel) throws Exception
    {
        final long driverTimeoutMs = 2_000;
        final Child driver = start("driver", dir(), "10000");
        driver.awaitLine("DRIVER READY", 30_000);
        final Child watcherOne = start("watcher", dir(), Long.toString(driverTimeoutMs), channel);
        final Child watcherTwo = start("watcher", dir(), Long.toString(driverTimeoutMs), channel);
        watcherOne.awaitLine("WATCHING", 30_000);
        watcherTwo.awaitLine("WATCHING", 30_000);

        driver.kill9();
        final long killedAtMs = System.currentTimeMillis();
        for (final Child watcher : List.of(watcherOne, watcherTwo))
        {
            final String line = watcher.awaitLine("DRIVER GONE", 30_000);
            final long seenAfterMs = Long.parseLong(line.split(" ")[3]) - killedAtMs;
            assertTrue(seenAfterMs <= driverTimeoutMs + 2_000, "seen " + seenAfterMs + " ms after the kill: " + line);
            assertEquals(0, watcher.awaitExit(30_000), watcher.lines.toString());
            System.out.println(
                "kill -9 of the driver (" + channel + "): seen by a client " + seenAfterMs + " ms later");
        }

        // The killed driver left its log files (ipc: Verbus's; aeron:ipc: its Aeron driver's, in D/aeron); a new
        // driver on the dir sweeps them and serves clients again.
        final boolean nativeLogs = "ipc".equals(channel);
        assertTrue(!nativeLogs || countLogFiles() > 0);
        try (MediaDriver ignored = MediaDriver.launch(TestSupport.context(tempDir));
            Verbus client = Verbus.connect(new Verbus.Context().dir(dir())))
        {
            assertEquals(0, countLogFiles());
            final Subscription subscription = client.addSubscription(channel, 4);
            final Publication publication = client.addPublication(channel, 4);
            await("connected", publication::isConnected);
            // An aeron: image reaches the subscription through the Aeron client's conductor, maybe after isConnected.
            await("the image", () -> 1 == subscription.imageCount());
        }
    }

    /**
     * A Verbus attached to a plain Aeron media driver in another process ({@code Context.aeronDirectoryName}): the
     * driver's kill -9 is reported by Aeron's own driver timeout, and the channels on it close.
     */
    @Test
    void shouldReportAKilledAeronDriverToAVerbusAttachedToIt() throws Exception
    {
        final long driverTimeoutMs = 2_000;
        final String aeronDir = tempDir.resolve("aeron-elsewhere").toString();
        final Child aeronDriver = start("aeron-driver", aeronDir);
        aeronDriver.awaitLine("AERON DRIVER READY", 30_000);
        final java.util.concurrent.atomic.AtomicReference<Throwable> error =
            new java.util.concurrent.atomic.AtomicReference<>();
        try (Verbus verbus = Verbus.launch(TestSupport.context(tempDir).aeronDirectoryName(aeronDir)
            .driverTimeoutMs(driverTimeoutMs).errorHandler((t) -> error.compareAndSet(null, t))))
        {
            final Subscription subscription = verbus.addSubscription("aeron:ipc", 6);
            final Publication publication = verbus.addPublication("aeron:ipc", 6);
            await("connected", publication::isConnected);
            final UnsafeBuffer buffer = new UnsafeBuffer(new byte[8]);
            final long[] received = {0};
            await("a message through the other process's driver", () -> received[0] > 0, () ->
            {
                publication.offer(buffer, 0, 8);
                subscription.poll((b, o, l, h) -> received[0]++, 10);
            });

            aeronDriver.kill9();
            final long killedNs = System.nanoTime();
            // Aeron closes the client's publications and subscriptions, then reports the timeout.
            await("the channels closed and the error reported",
                () -> publication.isClosed() && subscription.isClosed() && null != error.get());
            final long seenAfterMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
            assertTrue(error.get() instanceof io.aeron.exceptions.DriverTimeoutException, String.valueOf(error.get()));
            assertEquals(Publication.CLOSED, publication.offer(buffer, 0, 8));
            assertTrue(seenAfterMs <= driverTimeoutMs + 2_000, "seen " + seenAfterMs + " ms after the kill");
            System.out.println(
                "kill -9 of an attached Aeron driver: seen " + seenAfterMs + " ms later: " + error.get());
        }
    }

    private long countLogFiles() throws java.io.IOException
    {
        try (java.util.stream.Stream<Path> files = java.nio.file.Files.list(Path.of(dir())))
        {
            return files.filter((f) -> f.toString().endsWith(".map")).count();
        }
    }
}
