package io.verbus.archive;

import io.aeron.logbuffer.FragmentHandler;
import io.verbus.TestSupport;
import io.verbus.driver.IdleStrategies;

import java.nio.file.Path;

/** Archive settings for tests: everything under the test's temp dir, agents that back off. */
final class ArchiveTestSupport
{
    static final int STREAM_ID = 1701;

    private ArchiveTestSupport()
    {
    }

    /** An embedded archive in {@code dir/archive}, its driver in {@code dir/archive-aeron}, wiped on start. */
    static ArchiveConnection.Context embeddedArchive(final Path dir)
    {
        return new ArchiveConnection.Context()
            .archiveDir(dir.resolve("archive").toString())
            .aeronDir(dir.resolve("archive-aeron").toString())
            .deleteArchiveOnStart(true)
            .idleStrategy(IdleStrategies.BACKOFF);
    }

    /** Polls a replay until it has delivered up to {@code position}. */
    static void replayTo(final ArchiveReplay replay, final long position, final FragmentHandler handler)
    {
        TestSupport.await("replay to " + position, () -> replay.position() >= position,
            () -> replay.poll(handler, 256));
    }
}
