package io.verbus.log;

import io.aeron.logbuffer.LogBufferDescriptor;
import io.verbus.media.PublicationLog;
import io.verbus.memory.MemoryMapper;
import org.agrona.concurrent.UnsafeBuffer;
import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;
import org.agrona.concurrent.status.UnsafeBufferPosition;

import java.nio.ByteBuffer;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * A native log without a driver: mapped, initialised, with an unlimited publisher limit and a connected state, so
 * the appenders and readers can be tested on their own.
 */
final class LogFixture implements AutoCloseable
{
    static final int SESSION_ID = 0x5E55;
    static final int STREAM_ID = 1001;
    static final int INITIAL_TERM_ID = 7;

    final LogBuffers logBuffers;
    final PublicationLog publicationLog;
    final UnsafeBufferPosition limit;
    final AtomicCounter backPressure;
    final CountersManager countersManager;
    final List<LogPublication> closed = new ArrayList<>();

    LogFixture(final Path dir, final int termLength, final int mtu)
    {
        logBuffers = LogBuffers.map(new MemoryMapper(dir, null, false), "fixture", termLength, false);
        logBuffers.initialise(SESSION_ID, STREAM_ID, INITIAL_TERM_ID, mtu,
            LogBufferDescriptor.LOG_BUFFER_TYPE_CONCURRENT_PUBLICATION);
        countersManager = new CountersManager(
            new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 512)),
            new UnsafeBuffer(ByteBuffer.allocateDirect(64 * 128)));
        limit = new UnsafeBufferPosition(
            (UnsafeBuffer)countersManager.valuesBuffer(), countersManager.allocate("limit"), countersManager);
        limit.set(Long.MAX_VALUE);
        backPressure = countersManager.newCounter("bp");
        publicationLog = new PublicationLog(logBuffers, SESSION_ID, STREAM_ID, limit);
        publicationLog.connected(true);
    }

    ConcurrentLogPublication concurrent()
    {
        return new ConcurrentLogPublication("ipc", publicationLog, backPressure, closed::add);
    }

    ExclusiveLogPublication exclusive()
    {
        return new ExclusiveLogPublication("ipc", publicationLog, backPressure, closed::add, null);
    }

    UnsafeBuffer term(final int index)
    {
        return logBuffers.termBuffers()[index];
    }

    public void close()
    {
        logBuffers.close();
    }
}
