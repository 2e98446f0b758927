package io.verbus.archive;

import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Publication;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.driver.IdleStrategies;
import io.verbus.test.MessageStream;
import org.agrona.ExpandableArrayBuffer;

import java.nio.file.Path;

import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;

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

    /** A recorder of {@link #STREAM_ID} on {@code ipc} of {@code verbus}, into an {@link #embeddedArchive}. */
    static VerbusRecorder ipcRecorder(final Verbus verbus, final Path dir)
    {
        return VerbusRecorder.launch(new VerbusRecorder.Context()
            .verbus(verbus).channel("ipc").streamId(STREAM_ID).archive(embeddedArchive(dir)));
    }

    /** Offers sequences {@code 0..count-1} of the rarely fragmented message stream, retrying each until taken. */
    static void offerMessages(final Publication publication, final long count)
    {
        final ExpandableArrayBuffer message = new ExpandableArrayBuffer(MessageStream.MAX_RARELY_FRAGMENTED_LENGTH);
        for (long sequence = 0; sequence < count; )
        {
            if (publication.offer(message, 0, MessageStream.encode(message, 0, sequence, RARELY_FRAGMENTED)) > 0)
            {
                sequence++;
            }
        }
    }

    /** Polls a replay until it has delivered up to {@code position}. */
    static void replayTo(final ArchiveReplay replay, final long position, final FragmentHandler handler)
    {
        TestSupport.await("replay to " + position, () -> replay.position() >= position,
            () -> replay.poll(handler, 256));
    }
}
