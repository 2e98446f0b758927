package io.verbus.media.rdma;

import io.verbus.Publication;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * {@code rdma:} through standalone drivers across processes ({@link RdmaDriverChild}), on providers {@code shm} and
 * {@code tcp}: a driver process with the rdma media, a publisher client process whose exclusive publication the driver
 * sends, and three subscriber client processes served by the driver's one rdma subscription to it (bridged into a log
 * they share). One subscriber stops polling part-way, holding the stream back, and is killed -9: the driver frees it
 * after the client liveness timeout and the publisher and the other two subscribers finish, every message checked
 * (sequence, length, CRC32) and the sums of the CRC32s equal on every side. Then as two hosts have it, a driver per
 * side: the stream between the two drivers, and either driver killed -9 mid-stream.
 * <p>
 * Message count: {@code -Dverbus.rdma.driver.messages=N} (default 1,000,000).
 */
@Timeout(value = 600, unit = TimeUnit.SECONDS)
@Tag("slow") // cross-process: left out of ./verbus test --quick
class RdmaStandaloneDriverCrossProcessTest
{
    private static final String SECRET = "standalone-driver-secret-0123456789";
    private static final long MESSAGES = Long.getLong("verbus.rdma.driver.messages", 1_000_000);
    private static final int STREAM_ID = 5001;

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

    /** A child JVM, the lines it printed, and its stdin. */
    private static final class Child
    {
        private final String name;
        private final Process process;
        private final BlockingQueue<String> lines;
        private final List<String> seen = new ArrayList<>();

        Child(final String name, final Process process)
        {
            this.name = name;
            this.process = process;
            this.lines = PeerProcesses.lines(process);
        }

        String awaitLine(final String prefix, final long timeoutMs) throws InterruptedException
        {
            final String line = PeerProcesses.awaitLine(
                lines, seen, TimeUnit.MILLISECONDS.toNanos(timeoutMs), prefix, "FAILED");
            if (null == line || line.startsWith("FAILED"))
            {
                fail(name + ": no '" + prefix + "' within " + timeoutMs + " ms (" +
                    (process.isAlive() ? "running" : "exited " + process.exitValue()) + "):\n    " +
                    PeerProcesses.tail(seen, lines, 30));
            }
            return line;
        }

        /** @return the FAILED line the child prints when it gives up, expected here. */
        String awaitFailure(final long timeoutMs) throws InterruptedException
        {
            final String line = PeerProcesses.awaitLine(
                lines, seen, TimeUnit.MILLISECONDS.toNanos(timeoutMs), "FAILED");
            if (null == line)
            {
                fail(name + ": no FAILED line within " + timeoutMs + " ms (" +
                    (process.isAlive() ? "running" : "exited " + process.exitValue()) + "):\n    " +
                    PeerProcesses.tail(seen, lines, 30));
            }
            return line;
        }

        void send(final String line) throws IOException
        {
            final OutputStream in = process.getOutputStream();
            in.write((line + "\n").getBytes(StandardCharsets.US_ASCII));
            in.flush();
        }

        int awaitExit(final long timeoutMs) throws InterruptedException
        {
            if (!process.waitFor(timeoutMs, TimeUnit.MILLISECONDS))
            {
                fail(name + " still running after " + timeoutMs + " ms:\n    " + PeerProcesses.tail(seen, lines, 30));
            }
            return process.exitValue();
        }
    }

    /** A driver per side, as two hosts have them, both ready. */
    private record TwoDrivers(String publisherDir, String subscriberDir, Child publisherDriver, Child subscriberDriver)
    {
    }

    private TwoDrivers startTwoDrivers() throws Exception
    {
        final String publisherDir = tempDir.resolve("driver-p").toString();
        final String subscriberDir = tempDir.resolve("driver-s").toString();
        final Child publisherDriver = start("publisher's driver", "driver", publisherDir, "1000");
        final Child subscriberDriver = start("subscribers' driver", "driver", subscriberDir, "1000");
        publisherDriver.awaitLine("DRIVER READY", 60_000);
        subscriberDriver.awaitLine("DRIVER READY", 60_000);
        return new TwoDrivers(publisherDir, subscriberDir, publisherDriver, subscriberDriver);
    }

    private Child start(final String name, final String... args) throws IOException
    {
        final List<String> command = new ArrayList<>(
            PeerProcesses.javaCommand(RdmaDriverChild.class, SECRET, tempDir.resolve("fabric")));
        command.addAll(List.of(args));
        final Child child = new Child(name, new ProcessBuilder(command).redirectErrorStream(true).start());
        children.add(child);
        return child;
    }

    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldCarryCheckedMessagesBetweenClientProcessesOverRdmaAndOutliveAKilledClient(final String provider)
        throws Exception
    {
        final String dir = tempDir.resolve("driver").toString();
        final Child driver = start("driver", "driver", dir, "1000");
        driver.awaitLine("DRIVER READY", 60_000);
        final Child publisher = start("publisher", "publisher", dir,
            "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=256k", Integer.toString(STREAM_ID),
            Long.toString(MESSAGES));
        final int port = Integer.parseInt(publisher.awaitLine("PORT ", 60_000).substring(5).trim());
        assertTrue(port > 0, "the publication's control port in the driver's counters");

        final String channel = "rdma:endpoint=127.0.0.1:" + port + "|provider=" + provider;
        final String count = Long.toString(MESSAGES);
        final long stallAfter = MESSAGES / 10;
        final Child subscriberA = start("subscriber A", "subscriber", dir, channel, "5001", count);
        final Child subscriberB = start("subscriber B", "subscriber", dir, channel, "5001", count);
        final Child victim = start("victim", "subscriber", dir, channel, "5001", count, Long.toString(stallAfter));
        for (final Child subscriber : List.of(subscriberA, subscriberB, victim))
        {
            subscriber.awaitLine("IMAGE", 60_000);
        }
        publisher.awaitLine("CONNECTED", 60_000);
        publisher.send("GO");
        assertEquals("STARTING rdma-subscribers=1", publisher.awaitLine("STARTING", 10_000),
            "one rdma subscription in the driver serves the three subscriber processes");

        assertEquals("STALLED " + stallAfter, victim.awaitLine("STALLED", 300_000));
        victim.process.destroyForcibly(); // SIGKILL
        assertTrue(victim.process.waitFor(10, TimeUnit.SECONDS));
        final long killedNs = System.nanoTime();

        final long timeoutMs = 120_000 + MESSAGES / 5;
        final String sent = publisher.awaitLine("SENT", timeoutMs);
        final String receivedA = subscriberA.awaitLine("RECEIVED", timeoutMs);
        final String receivedB = subscriberB.awaitLine("RECEIVED", timeoutMs);
        final long afterKillMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
        final String sentSum = sent.split(" ")[3];
        for (final String received : List.of(receivedA, receivedB))
        {
            final String[] parts = received.split(" ");
            assertEquals(count, parts[1], received);
            assertEquals(sentSum, parts[3], "CRC32 sums: " + sent + " / " + received);
        }
        assertEquals(0, subscriberA.awaitExit(30_000));
        assertEquals(0, subscriberB.awaitExit(30_000));
        publisher.send("DONE");
        assertEquals(0, publisher.awaitExit(30_000));
        assertTrue(driver.process.isAlive(), "the driver outlived its clients");
        System.out.println("rdma through a standalone driver, 3 subscriber processes (one killed -9 after " +
            stallAfter + "): " + sent + " / " + receivedA + " / " + receivedB + "; finished " + afterKillMs +
            " ms after the kill");
    }

    /**
     * Two hosts, as a deployment has them: a driver per host, the publisher a client of one, two subscribers clients
     * of the other, the stream between the two drivers' rdma media. Every message checked on both subscribers.
     */
    @ParameterizedTest
    @ValueSource(strings = { "shm", "tcp" })
    void shouldCarryCheckedMessagesBetweenClientsOfTwoDrivers(final String provider) throws Exception
    {
        final TwoDrivers drivers = startTwoDrivers();
        final String publisherDir = drivers.publisherDir();
        final String subscriberDir = drivers.subscriberDir();
        final Child publisher = start("publisher", "publisher", publisherDir,
            "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=256k", Integer.toString(STREAM_ID),
            Long.toString(MESSAGES));
        final int port = Integer.parseInt(publisher.awaitLine("PORT ", 60_000).substring(5).trim());
        final String channel = "rdma:endpoint=127.0.0.1:" + port + "|provider=" + provider;
        final String count = Long.toString(MESSAGES);
        final Child subscriberA = start("subscriber A", "subscriber", subscriberDir, channel, "5001", count);
        final Child subscriberB = start("subscriber B", "subscriber", subscriberDir, channel, "5001", count);
        subscriberA.awaitLine("IMAGE", 60_000);
        subscriberB.awaitLine("IMAGE", 60_000);
        publisher.awaitLine("CONNECTED", 60_000);
        publisher.send("GO");
        assertEquals("STARTING rdma-subscribers=1", publisher.awaitLine("STARTING", 10_000),
            "the subscribers' driver serves both with one rdma subscription");

        final long timeoutMs = 120_000 + MESSAGES / 5;
        final String sent = publisher.awaitLine("SENT", timeoutMs);
        for (final Child subscriber : List.of(subscriberA, subscriberB))
        {
            final String[] parts = subscriber.awaitLine("RECEIVED", timeoutMs).split(" ");
            assertEquals(count, parts[1]);
            assertEquals(sent.split(" ")[3], parts[3], "CRC32 sums");
            assertEquals(0, subscriber.awaitExit(30_000));
        }
        publisher.send("DONE");
        assertEquals(0, publisher.awaitExit(30_000));
        System.out.println("rdma between two drivers over " + provider + ": " + sent);
    }

    /**
     * A driver killed -9 mid-stream, on either side of a two-driver stream: the other side's clients are told at
     * once, in the Aeron way (the publisher's offers NOT_CONNECTED, the subscriber's image gone), nothing wedges, and
     * the surviving driver serves a new stream from a new peer driver, every message checked.
     */
    @ParameterizedTest
    @CsvSource({ "shm,publisher", "shm,subscriber", "tcp,publisher", "tcp,subscriber" })
    void shouldTellTheOtherSideOfADriverKilledMidStreamAndServeTheNextPeer(final String provider, final String killed)
        throws Exception
    {
        final boolean killPublisherSide = "publisher".equals(killed);
        final TwoDrivers drivers = startTwoDrivers();
        final String publisherDir = drivers.publisherDir();
        final String subscriberDir = drivers.subscriberDir();
        final Child publisherDriver = drivers.publisherDriver();
        final Child subscriberDriver = drivers.subscriberDriver();
        final String endless = Long.toString(Long.MAX_VALUE);
        final Child publisher = start("publisher", "publisher", publisherDir,
            "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=256k", Integer.toString(STREAM_ID),
            endless);
        final int port = Integer.parseInt(publisher.awaitLine("PORT ", 60_000).substring(5).trim());
        final Child subscriber = start("subscriber", "subscriber", subscriberDir,
            "rdma:endpoint=127.0.0.1:" + port + "|provider=" + provider, "5001", endless);
        subscriber.awaitLine("IMAGE", 60_000);
        publisher.awaitLine("CONNECTED", 60_000);
        publisher.send("GO");
        publisher.awaitLine("STARTING", 10_000);
        Thread.sleep(1_000); // mid-stream

        final Child victim = killPublisherSide ? publisherDriver : subscriberDriver;
        victim.process.destroyForcibly(); // SIGKILL
        assertTrue(victim.process.waitFor(10, TimeUnit.SECONDS));
        final long killedNs = System.nanoTime();
        final Child told = killPublisherSide ? subscriber : publisher;
        final String failure = told.awaitFailure(30_000);
        final long toldMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
        assertTrue(failure.contains(killPublisherSide ? "image gone" : "returned " + Publication.NOT_CONNECTED),
            failure);
        assertEquals(1, told.awaitExit(10_000));
        final Child survivor = killPublisherSide ? subscriberDriver : publisherDriver;
        assertTrue(survivor.process.isAlive(), "the surviving driver");

        // The survivor serves a new stream with a new peer driver.
        final String newDir = tempDir.resolve("driver-new").toString();
        final Child newDriver = start("new driver", "driver", newDir, "1000");
        newDriver.awaitLine("DRIVER READY", 60_000);
        final String messages = "100000";
        final Child newPublisher = start("new publisher", "publisher", killPublisherSide ? newDir : publisherDir,
            "rdma:endpoint=127.0.0.1:0|provider=" + provider + "|term-length=256k", Integer.toString(STREAM_ID + 1),
            messages);
        final int newPort = Integer.parseInt(newPublisher.awaitLine("PORT ", 60_000).substring(5).trim());
        final Child newSubscriber = start("new subscriber", "subscriber", killPublisherSide ? subscriberDir : newDir,
            "rdma:endpoint=127.0.0.1:" + newPort + "|provider=" + provider, Integer.toString(STREAM_ID + 1), messages);
        final String received = runCheckedStream(newPublisher, newSubscriber, messages);
        System.out.println("rdma over " + provider + ", the " + killed + "'s driver killed -9 mid-stream: " +
            failure + " (" + toldMs + " ms after the kill); then a new stream through the survivor: " + received);
    }

    /**
     * A publisher client killed -9 and started again on the same endpoint and stream: the driver frees the dead
     * client as soon as its process is gone (its liveness timeout here is 30 s), so the restarted one takes the
     * stream within seconds and a subscriber gets every message from it.
     */
    @Test
    void shouldLetARestartedPublisherTakeItsStreamBackLongBeforeTheClientTimeout() throws Exception
    {
        final String dir = tempDir.resolve("driver").toString();
        final Child driver = start("driver", "driver", dir, "30000");
        driver.awaitLine("DRIVER READY", 60_000);
        final String messages = "2000";
        final Child first = start("publisher", "publisher", dir,
            "rdma:endpoint=127.0.0.1:0|provider=shm|term-length=256k", Integer.toString(STREAM_ID), messages);
        final int port = Integer.parseInt(first.awaitLine("PORT ", 60_000).substring(5).trim());
        final String channel = "rdma:endpoint=127.0.0.1:" + port + "|provider=shm";

        first.process.destroyForcibly(); // SIGKILL
        assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
        final long killedNs = System.nanoTime();
        final Child restarted = start("restarted publisher", "publisher", dir, channel + "|term-length=256k",
            Integer.toString(STREAM_ID), messages);
        assertEquals("PORT " + port, restarted.awaitLine("PORT ", 20_000),
            "the restarted publisher took the stream on the same endpoint");
        final long takenMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - killedNs);
        assertTrue(takenMs < 15_000, "took " + takenMs + " ms; the client liveness timeout is 30 s");

        final Child subscriber = start("subscriber", "subscriber", dir, channel, Integer.toString(STREAM_ID), messages);
        final String received = runCheckedStream(restarted, subscriber, messages);
        System.out.println("rdma publisher restarted through a standalone driver: stream taken again " + takenMs +
            " ms after the kill (client timeout 30 s); " + received);
    }
    /**
     * Once the subscriber has its image and the publisher is connected: GO, then every message checked and the CRC32
     * sums equal on both sides, and both children exit cleanly.
     *
     * @return the subscriber's RECEIVED line.
     */
    private static String runCheckedStream(final Child publisher, final Child subscriber, final String messages)
        throws Exception
    {
        subscriber.awaitLine("IMAGE", 60_000);
        publisher.awaitLine("CONNECTED", 60_000);
        publisher.send("GO");
        final String sent = publisher.awaitLine("SENT", 120_000);
        final String received = subscriber.awaitLine("RECEIVED", 120_000);
        assertEquals(messages, received.split(" ")[1], received);
        assertEquals(sent.split(" ")[3], received.split(" ")[3], "CRC32 sums: " + sent + " / " + received);
        assertEquals(0, subscriber.awaitExit(30_000));
        publisher.send("DONE");
        assertEquals(0, publisher.awaitExit(30_000));
        return received;
    }
}
