package io.verbus.archive;

import io.verbus.Verbus;
import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;

/**
 * A recorder's counters in its Verbus's counters file: recorded position, lag, rate, gaps, archive losses. Written
 * once per duty cycle by the recorder thread.
 */
final class RecorderCounters implements AutoCloseable
{
    private final Verbus verbus;
    private final AtomicCounter recordedPosition;
    private final AtomicCounter lag;
    private final AtomicCounter rate;
    private final AtomicCounter gaps;
    private final AtomicCounter gapBytes;
    private final AtomicCounter archiveLost;
    private final RateMeter rateMeter = new RateMeter();
    private long recordedBytes;

    RecorderCounters(final Verbus verbus, final String channel, final int streamId)
    {
        this.verbus = verbus;
        final String suffix = ": stream=" + streamId + " " + channel;
        recordedPosition = verbus.addCounter(ArchiveCounters.RECORDING_POSITION_TYPE_ID, "rec-pos" + suffix);
        lag = verbus.addCounter(ArchiveCounters.RECORDING_LAG_TYPE_ID, "rec-lag bytes read, not yet recorded" + suffix);
        rate = verbus.addCounter(ArchiveCounters.RECORDING_RATE_TYPE_ID, "rec-rate bytes/s" + suffix);
        gaps = verbus.addCounter(ArchiveCounters.RECORDING_GAPS_TYPE_ID, "rec-gaps" + suffix);
        gapBytes = verbus.addCounter(ArchiveCounters.RECORDING_GAP_BYTES_TYPE_ID, "rec-gap-bytes" + suffix);
        archiveLost = verbus.addCounter(ArchiveCounters.ARCHIVE_LOST_TYPE_ID, "archive-lost" + suffix);
    }

    void update(final long position, final long lagBytes, final long newlyRecordedBytes, final long nowNs)
    {
        if (verbus.isClosed())
        {
            return;
        }
        recordedBytes += newlyRecordedBytes;
        recordedPosition.setRelease(position);
        lag.setRelease(lagBytes);
        rate.setRelease(rateMeter.update(recordedBytes, nowNs));
    }

    void onGap(final RecordingGap gap)
    {
        if (!verbus.isClosed())
        {
            gaps.incrementRelease();
            gapBytes.getAndAddRelease(gap.length());
        }
    }

    void onArchiveLost()
    {
        if (!verbus.isClosed())
        {
            archiveLost.incrementRelease();
        }
    }

    public void close()
    {
        if (!verbus.isClosed())
        {
            CloseHelper.quietCloseAll(recordedPosition, lag, rate, gaps, gapBytes, archiveLost);
        }
    }
}
