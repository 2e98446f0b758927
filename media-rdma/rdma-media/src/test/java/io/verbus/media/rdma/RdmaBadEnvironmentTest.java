package io.verbus.media.rdma;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Level;
import java.util.logging.LogRecord;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * A full shm fabric directory (a small tmpfs, filled up; root only) does not kill the subscription's control thread:
 * it fails each attempt with a clear, rate-limited log line naming the path and "no space", keeps retrying with
 * back-off, and connects once space is freed.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RdmaBadEnvironmentTest
{
    @TempDir
    Path dir;

    @Test
    void shouldKeepRetryingThroughAFullFabricDirectoryAndConnectOnceThereIsRoom() throws Exception
    {
        assumeTrue(io.verbus.test.ProcessUser.isRoot(), "mounting a small tmpfs needs root");
        final Path fabric = Files.createDirectories(dir.resolve("fabric"));
        MediaTestSupport.run("mount", "-t", "tmpfs", "-o", "size=8m,mode=0700", "tmpfs", fabric.toString());
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        try (LogCapture ignored = new LogCapture(records);
            RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "20ms", "timeout", "1s"))
        {
            final Path filler = fabric.resolve("filler");
            fill(filler);

            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            final long startNs = System.nanoTime();
            rig.awaitCondition("a few attempts", 10_000,
                () -> System.nanoTime() - startNs > TimeUnit.MILLISECONDS.toNanos(2500));
            assertEquals(null, subscriber.image(), "no room: no connection");
            assertTrue(controlThreadAlive(), "the control thread survives a full fabric directory");
            final List<LogRecord> failures = records.stream()
                .filter(r -> r.getLevel() == Level.WARNING && r.getMessage().contains("rdma subscription")).toList();
            assertTrue(failures.size() >= 1 && failures.size() <= 2,
                "rate-limited, one line per 5 s: " + failures.size());
            assertTrue(failures.get(0).getMessage().contains("no space left"), failures.get(0).getMessage());
            assertTrue(failures.get(0).getMessage().contains(fabric.toString()), failures.get(0).getMessage());

            Files.delete(filler);
            rig.awaitCondition("connected once there is room", 20_000, () -> null != subscriber.image());
        }
        finally
        {
            MediaTestSupport.run("umount", fabric.toString());
        }
    }

    @Test
    void shouldKeepRetryingThroughAReadOnlyFabricDirectoryAndConnectOnceWritable() throws Exception
    {
        assumeTrue(io.verbus.test.ProcessUser.isRoot(), "mounting a tmpfs needs root");
        // The subscriber sees the publisher's fabric directory through a bind mount that is made read-only.
        final Path fabric = Files.createDirectories(dir.resolve("fabric"));
        final Path view = Files.createDirectories(dir.resolve("fabric-view"));
        MediaTestSupport.run("mount", "--bind", fabric.toString(), view.toString());
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        try (LogCapture ignored = new LogCapture(records);
            RdmaRig rig = new RdmaRig(dir, "shm", 64 * 1024, null, "heartbeat", "20ms", "timeout", "1s"))
        {
            MediaTestSupport.run("mount", "-o", "remount,bind,ro", view.toString());
            rig.subscriberShmDirectory = view;
            final RdmaRig.Subscriber subscriber = rig.addSubscriber();
            final long startNs = System.nanoTime();
            rig.awaitCondition("a few attempts", 10_000,
                () -> System.nanoTime() - startNs > TimeUnit.MILLISECONDS.toNanos(2500));
            assertEquals(null, subscriber.image());
            assertTrue(controlThreadAlive(), "the control thread survives a read-only fabric directory");
            final long failures = records.stream()
                .filter(r -> r.getLevel() == Level.WARNING && r.getMessage().contains("rdma subscription")).count();
            assertTrue(failures >= 1 && failures <= 2, "rate-limited, one line per 5 s: " + failures);

            MediaTestSupport.run("mount", "-o", "remount,bind,rw", view.toString());
            rig.awaitCondition("connected once writable", 20_000, () -> null != subscriber.image());
        }
        finally
        {
            MediaTestSupport.run("umount", view.toString());
        }
    }

    private static boolean controlThreadAlive()
    {
        return Thread.getAllStackTraces().keySet().stream()
            .anyMatch(t -> t.getName().equals("verbus-rdma-sub-" + RdmaRig.STREAM_ID) && t.isAlive());
    }

    /**
     * Fills the file system but for a few pages: enough for the first small files and the last page of a larger
     * one, so that touching the rest of that mapping faults (SIGBUS) rather than failing a write cleanly.
     */
    private static void fill(final Path filler) throws IOException
    {
        final byte[] chunk = new byte[4096];
        try (OutputStream out = Files.newOutputStream(filler))
        {
            for (int i = 0; i < 1_000_000; i++)
            {
                out.write(chunk);
            }
        }
        catch (final IOException expected)
        {
            // the file system is full
        }
        try (java.nio.channels.FileChannel channel =
            java.nio.channels.FileChannel.open(filler, java.nio.file.StandardOpenOption.WRITE))
        {
            channel.truncate(channel.size() - 4 * 4096);
        }
    }

    /** Captures the media's log records for the duration of a test. */
    static final class LogCapture implements AutoCloseable
    {
        private final java.util.logging.Logger logger = java.util.logging.Logger.getLogger("io.verbus.media.rdma");
        private final java.util.logging.Handler handler;
        private final boolean parentHandlers;

        LogCapture(final List<LogRecord> records)
        {
            handler = new java.util.logging.Handler()
            {
                public void publish(final LogRecord record)
                {
                    records.add(record);
                }

                public void flush()
                {
                }

                public void close()
                {
                }
            };
            logger.addHandler(handler);
            parentHandlers = logger.getUseParentHandlers();
            logger.setUseParentHandlers(false);
        }

        public void close()
        {
            logger.removeHandler(handler);
            logger.setUseParentHandlers(parentHandlers);
        }
    }
}
