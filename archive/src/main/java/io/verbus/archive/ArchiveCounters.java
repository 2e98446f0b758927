package io.verbus.archive;

import io.verbus.counters.CounterTypes;

/**
 * Type ids of the archive module's counters in the Verbus counters file ({@code ./verbus stat} shows them as
 * {@code archive}), within the range bus-core reserves for it.
 */
public final class ArchiveCounters
{
    /** A recorder's recorded position: how far the archive holds the stream (its newest session). */
    public static final int RECORDING_POSITION_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE;

    /** Bytes a recorder has read from the live stream that the archive has not yet recorded. */
    public static final int RECORDING_LAG_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 1;

    /** Bytes per second a recorder recorded over the last second. */
    public static final int RECORDING_RATE_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 2;

    /** Gaps a recorder reported (positions of the stream that were not recorded). */
    public static final int RECORDING_GAPS_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 3;

    /** Bytes of the stream in reported gaps. */
    public static final int RECORDING_GAP_BYTES_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 4;

    /** Times a recorder lost its archive. */
    public static final int ARCHIVE_LOST_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 5;

    /** A replay's or late joiner's position: the next stream position it delivers. */
    public static final int REPLAY_POSITION_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 10;

    /** Bytes per second replayed over the last second. */
    public static final int REPLAY_RATE_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 11;

    /** A late joiner's distance behind the live stream in bytes, while it catches up from the archive. */
    public static final int LATE_JOIN_LAG_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 12;

    /** A late joiner's phase: 0 replaying, 1 replaying with the live image attached, 2 merged into live. */
    public static final int LATE_JOIN_PHASE_TYPE_ID = CounterTypes.ARCHIVE_TYPE_ID_BASE + 13;

    private ArchiveCounters()
    {
    }
}
