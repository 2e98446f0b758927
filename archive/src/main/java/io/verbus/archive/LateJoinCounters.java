package io.verbus.archive;

import io.verbus.Verbus;
import org.agrona.CloseHelper;
import org.agrona.concurrent.status.AtomicCounter;

/** A late joiner's counters: position, lag behind what is recorded, replay rate, phase. Written once per poll. */
final class LateJoinCounters implements AutoCloseable
{
    private final Verbus verbus;
    private final AtomicCounter position;
    private final AtomicCounter lag;
    private final AtomicCounter rate;
    private final AtomicCounter phase;
    private final RateMeter rateMeter = new RateMeter();

    LateJoinCounters(final Verbus verbus, final String channel, final int streamId, final int sessionId)
    {
        this.verbus = verbus;
        final String suffix = ": stream=" + streamId + " session=" + sessionId + " " + channel;
        position = verbus.addCounter(ArchiveCounters.REPLAY_POSITION_TYPE_ID, "late-join-pos" + suffix);
        lag = verbus.addCounter(ArchiveCounters.LATE_JOIN_LAG_TYPE_ID, "late-join-lag bytes behind recorded" + suffix);
        rate = verbus.addCounter(ArchiveCounters.REPLAY_RATE_TYPE_ID, "late-join-replay-rate bytes/s" + suffix);
        phase = verbus.addCounter(ArchiveCounters.LATE_JOIN_PHASE_TYPE_ID,
            "late-join-phase 0 replay 1 live attached 2 live" + suffix);
    }

    void update(
        final long deliveredPosition, final long lagBytes, final LateJoinSubscription.Phase currentPhase,
        final long nowNs)
    {
        if (verbus.isClosed())
        {
            return;
        }
        position.setRelease(deliveredPosition);
        lag.setRelease(lagBytes);
        phase.setRelease(currentPhase.ordinal());
        if (LateJoinSubscription.Phase.LIVE == currentPhase)
        {
            rateMeter.reset();
            rate.setRelease(0);
        }
        else
        {
            rate.setRelease(rateMeter.update(deliveredPosition, nowNs));
        }
    }

    public void close()
    {
        if (!verbus.isClosed())
        {
            CloseHelper.quietCloseAll(position, lag, rate, phase);
        }
    }
}
