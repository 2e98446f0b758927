package io.verbus.archive;

import io.aeron.FragmentAssembler;
import io.verbus.ExclusivePublication;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.MessageStream;
import io.verbus.tools.VerbusStat;
import org.agrona.concurrent.status.CountersReader;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.verbus.archive.ArchiveTestSupport.STREAM_ID;
import static io.verbus.test.MessageStream.Sizes.RARELY_FRAGMENTED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The recorder's and a late joiner's counters hold what they say, and {@code ./verbus stat} shows them. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class ArchiveCountersTest
{
    @TempDir
    Path dir;

    @Test
    void shouldShowRecordingAndLateJoinCountersInVerbusStat()
    {
        try (Verbus verbus = Verbus.launch(TestSupport.context(dir));
            VerbusRecorder recorder = ArchiveTestSupport.ipcRecorder(verbus, dir))
        {
            final ExclusivePublication publication = verbus.addExclusivePublication("ipc", STREAM_ID);
            TestSupport.await("recorder image", () -> 1 == recorder.subscription().imageCount());
            ArchiveTestSupport.offerMessages(publication, 2_000);
            final long endPosition = publication.position();
            final CountersReader counters = verbus.countersReader();
            TestSupport.await("rec-pos counter at the end", () ->
                endPosition == value(counters, ArchiveCounters.RECORDING_POSITION_TYPE_ID) &&
                0 == value(counters, ArchiveCounters.RECORDING_LAG_TYPE_ID));
            assertEquals(0, value(counters, ArchiveCounters.RECORDING_GAPS_TYPE_ID));

            final LateJoinSubscription lateJoiner = LateJoinSubscription.join(new LateJoinSubscription.Context()
                .verbus(verbus).connection(recorder.connection()).channel("ipc").streamId(STREAM_ID));
            final MessageStream.Checker checker = new MessageStream.Checker(0, RARELY_FRAGMENTED);
            final FragmentAssembler assembler = new FragmentAssembler((buffer, offset, length, header) ->
                checker.onMessage(buffer, offset, length));
            TestSupport.await("late joiner merged", () -> lateJoiner.isMerged() && checker.received == 2_000,
                () -> lateJoiner.poll(assembler, 64));
            lateJoiner.poll(assembler, 64);
            assertEquals(endPosition, value(counters, ArchiveCounters.REPLAY_POSITION_TYPE_ID));
            assertEquals(LateJoinSubscription.Phase.LIVE.ordinal(),
                value(counters, ArchiveCounters.LATE_JOIN_PHASE_TYPE_ID));

            final ByteArrayOutputStream output = new ByteArrayOutputStream();
            final PrintStream out = new PrintStream(output, true, StandardCharsets.UTF_8);
            assertEquals(0, VerbusStat.run(new String[] { "--dir", verbus.context().dir(), "--once" }, out, out));
            final String stat = output.toString(StandardCharsets.UTF_8);
            assertTrue(stat.matches("(?s).*archive\\s+" + endPosition + "\\s+rec-pos: stream=" + STREAM_ID + " ipc.*"),
                stat);
            assertTrue(stat.contains("rec-lag"), stat);
            assertTrue(stat.contains("rec-rate bytes/s"), stat);
            assertTrue(stat.contains("late-join-phase"), stat);
            lateJoiner.close();
        }
    }

    private static long value(final CountersReader counters, final int typeId)
    {
        final long[] value = { Long.MIN_VALUE };
        counters.forEach((counterId, type, keyBuffer, label) ->
        {
            if (type == typeId)
            {
                value[0] = counters.getCounterValue(counterId);
            }
        });
        return value[0];
    }
}
