package io.verbus.media.rdma;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.ThreadingMode;
import io.verbus.log.LogBuffers;
import io.verbus.media.MediaContext;
import io.verbus.media.PublicationLog;
import io.verbus.memory.MemoryMapper;
import org.agrona.concurrent.SystemEpochNanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.UnsafeBufferPosition;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Builds the driver-side pieces a media needs, for tests that drive the media directly. */
final class MediaTestSupport
{
    final CountersManager countersManager;
    final UnsafeBuffer countersValues;
    final List<Throwable> errors = new CopyOnWriteArrayList<>();
    final MediaContext context;
    final MemoryMapper mapper;

    MediaTestSupport(final Path dir)
    {
        final UnsafeBuffer metaData = new UnsafeBuffer(ByteBuffer.allocateDirect(1024 * 1024));
        countersValues = new UnsafeBuffer(ByteBuffer.allocateDirect(256 * 1024));
        countersManager = new CountersManager(metaData, countersValues);
        mapper = new MemoryMapper(dir, null, false);
        context = new MediaContext()
            .countersManager(countersManager)
            .errorHandler(errors::add)
            .nanoClock(SystemNanoClock.INSTANCE)
            .epochNanoClock(new SystemEpochNanoClock())
            .memoryMapper(mapper)
            .verbusDir(dir)
            .idleStrategyName("sleeping")
            .threadingMode(ThreadingMode.SHARED);
    }

    PublicationLog newPublicationLog(final int sessionId, final int streamId, final int termLength)
    {
        return newPublicationLog(sessionId, streamId, termLength, mapper, false);
    }

    /**
     * @param logMapper where the log file goes.
     * @param keepFile  false to unlink it once mapped (as an embedded driver does), true to leave it for peers.
     */
    PublicationLog newPublicationLog(
        final int sessionId, final int streamId, final int termLength, final MemoryMapper logMapper,
        final boolean keepFile)
    {
        final LogBuffers logBuffers = LogBuffers.map(logMapper, "rdma-test-" + streamId, termLength, keepFile);
        logBuffers.initialise(sessionId, streamId, 100, 1408, (byte)0);
        final UnsafeBufferPosition limit;
        synchronized (countersManager)
        {
            limit = new UnsafeBufferPosition(countersValues, countersManager.allocate("pub-lmt " + streamId));
        }
        return new PublicationLog(logBuffers, sessionId, streamId, limit);
    }

    /** Runs a command to completion (30 s at most) and fails with its output unless it exits 0. */
    static void run(final String... command) throws Exception
    {
        final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
        final String output = new String(process.getInputStream().readAllBytes());
        if (!process.waitFor(30, java.util.concurrent.TimeUnit.SECONDS) || 0 != process.exitValue())
        {
            throw new AssertionError(String.join(" ", command) + " failed: " + output);
        }
    }

    static int initialTermId(final PublicationLog log)
    {
        return LogBufferDescriptor.initialTermId(log.logBuffers().metaDataBuffer());
    }
}
