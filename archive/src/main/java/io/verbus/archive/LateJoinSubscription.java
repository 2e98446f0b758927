package io.verbus.archive;

import io.aeron.archive.client.AeronArchive;
import io.aeron.logbuffer.ControlledFragmentHandler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.FrameDescriptor;
import io.aeron.logbuffer.Header;
import io.verbus.ChannelUri;
import io.verbus.Image;
import io.verbus.Subscription;
import io.verbus.Verbus;
import org.agrona.BitUtil;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A subscription that starts in the past: it replays one publisher session of a stream from the archive, from a
 * given position (or the start of the recordings), and then merges into the live image of that session at a
 * position both have, with no gap and no duplicate. The idea of Aeron's {@code ReplayMerge}, over a Verbus live
 * image ({@code rdma:}, {@code ipc}, {@code aeron:}):
 * <ol>
 *   <li>{@link Phase#REPLAY}: frames come from the archive, which follows the recording while it grows.</li>
 *   <li>When the replay is within {@link Context#mergeWindowBytes()} of what the archive has recorded, the live
 *   subscription is added ({@link Phase#REPLAY_LIVE_ATTACHED}). Its image joins at the publisher's position {@code J}
 *   and is not read yet; the replay goes on, delivering nothing at or beyond {@code J}.</li>
 *   <li>When the replay reaches {@code J}, the replay is stopped and frames come from the live image from {@code J}
 *   ({@link Phase#LIVE}); live frames below the delivered position would be duplicates and are skipped.</li>
 * </ol>
 * The live subscription is added late on purpose: an unread live image holds a {@code fc=min} publisher back (or is
 * dropped under {@code fc=max}), so it should exist only for the short time the replay needs to reach it. If the
 * live image goes away after the merge (the subscription was dropped), the subscription falls back to the archive
 * from where it is and merges again. Positions no recording holds are reported as {@link RecordingGap}s.
 * <p>
 * Replayed frames have the live stream's header (session id, stream id, term id, offset, flags), so one
 * {@code FragmentAssembler} sees one session across the switch. Only the joined session is delivered. Polled by one
 * thread; phase changes make archive control round trips (not on the per-message path).
 */
public final class LateJoinSubscription implements Subscription
{
    /** The channel key that asks {@link #addSubscription} for a late join: {@code join=archive}. */
    public static final String JOIN_KEY = "join";

    /** Its value. */
    public static final String JOIN_ARCHIVE = "archive";

    /** {@code join=recent}: the rdma media catches up by RDMA READ of the publisher's log; passed through as is. */
    public static final String JOIN_RECENT = "recent";

    /** {@code join=live}: the default, passed through as is. */
    public static final String JOIN_LIVE = "live";

    /** Channel key: the stream position to start from (default: the start of the session's recordings). */
    public static final String JOIN_POSITION_KEY = "join-position";

    /** Channel key: the publisher session to join (default: the session of the stream's newest recording). */
    public static final String JOIN_SESSION_KEY = "join-session";

    /** Where the subscription is. */
    public enum Phase
    {
        /** Catching up from the archive. */
        REPLAY,
        /** Still replaying; the live image is attached and the replay is about to reach it. */
        REPLAY_LIVE_ATTACHED,
        /** Merged: frames come from the live image. */
        LIVE
    }

    private final Context context;
    private final Verbus verbus;
    private final ArchiveConnection connection;
    private final AeronArchive archive;
    private final NanoClock nanoClock;
    private final int streamId;
    private final int sessionId;
    private final RecordedPosition recordedPosition;
    private final LateJoinCounters counters;
    private final List<RecordingGap> gaps = new ArrayList<>();
    private final ControlledFragmentHandler replayHandler = this::onReplayFragment;
    private final ControlledFragmentHandler liveHandler = this::onLiveFragment;
    private List<RecordingDescriptor> recordings;
    private SessionReplay replay;
    private Subscription live;
    private Image liveImage;
    private long liveJoinPosition = -1;
    private long position;
    private long mergeWindowBytes;
    private Phase phase = Phase.REPLAY;
    private FragmentHandler fragmentHandler;
    private ControlledFragmentHandler controlledHandler;
    private boolean isClosed;

    private LateJoinSubscription(final Context context)
    {
        this.context = context;
        this.verbus = context.verbus();
        this.connection = context.connection();
        this.nanoClock = context.nanoClock();
        this.streamId = context.streamId();
        this.archive = connection.connectArchive();
        try
        {
            final int session;
            if (null != context.sessionId())
            {
                session = context.sessionId();
            }
            else
            {
                final RecordingDescriptor latest = StreamRecordings.latest(archive, streamId);
                if (null == latest)
                {
                    throw new IllegalStateException(
                        "no recording of stream " + streamId + " in the archive to join from");
                }
                session = latest.sessionId();
            }
            this.sessionId = session;
            this.recordings = StreamRecordings.ofSession(archive, streamId, sessionId);
            if (recordings.isEmpty())
            {
                throw new IllegalStateException("no recording of stream " + streamId + " session " + sessionId);
            }
            final RecordingDescriptor first = recordings.get(0);
            this.position = context.fromPosition() < 0 ? first.startPosition() : context.fromPosition();
            this.mergeWindowBytes = context.mergeWindowBytes() > 0 ?
                context.mergeWindowBytes() : first.termBufferLength() / 4;
            this.recordedPosition = new RecordedPosition(connection, archive);
            this.counters = new LateJoinCounters(verbus, context.channel(), streamId, sessionId);
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(archive);
            throw ex;
        }
    }

    /**
     * Joins a stream late: replays from the archive, then merges into live.
     *
     * @param context concluded by this call.
     * @return the subscription, replaying.
     */
    public static LateJoinSubscription join(final Context context)
    {
        context.conclude();
        return new LateJoinSubscription(context);
    }

    /**
     * Adds a subscription, late-joining when the channel says {@code join=archive}: e.g.
     * {@code rdma:endpoint=10.0.0.1:40123|join=archive|join-position=0}. The join keys ({@value #JOIN_KEY},
     * {@value #JOIN_POSITION_KEY}, {@value #JOIN_SESSION_KEY}) are taken off the channel the live subscription
     * uses. Without {@code join=archive} (none, {@code join=live} or the rdma media's {@code join=recent}) this is
     * {@code verbus.addSubscription(channel, streamId)}.
     *
     * @param verbus     for the live subscription.
     * @param connection to the archive holding the stream's recordings.
     * @param channel    a Verbus channel, with or without the join keys.
     * @param streamId   of the stream.
     * @return a late-joining subscription, or a plain one.
     */
    public static Subscription addSubscription(
        final Verbus verbus, final ArchiveConnection connection, final String channel, final int streamId)
    {
        final ChannelUri uri = ChannelUri.parse(channel);
        final String join = uri.get(JOIN_KEY);
        if (null == join || JOIN_RECENT.equals(join) || JOIN_LIVE.equals(join))
        {
            // live, or the rdma media's own catch-up by RDMA READ of the publisher's log: not the archive's business
            return verbus.addSubscription(channel, streamId);
        }
        if (!JOIN_ARCHIVE.equals(join))
        {
            throw new IllegalArgumentException(JOIN_KEY + "=" + join + " in channel '" + channel +
                "': the joins are '" + JOIN_ARCHIVE + "' (here), '" + JOIN_RECENT + "' and '" + JOIN_LIVE +
                "' (rdma: channels)");
        }
        final StringBuilder liveChannel = new StringBuilder(uri.scheme());
        char separator = ':';
        for (final Map.Entry<String, String> entry : uri.params().entrySet())
        {
            final String key = entry.getKey();
            if (!JOIN_KEY.equals(key) && !JOIN_POSITION_KEY.equals(key) && !JOIN_SESSION_KEY.equals(key))
            {
                liveChannel.append(separator).append(key).append('=').append(entry.getValue());
                separator = '|';
            }
        }
        final Context context = new Context()
            .verbus(verbus)
            .connection(connection)
            .channel(liveChannel.toString())
            .streamId(streamId)
            .fromPosition(parseLong(uri, JOIN_POSITION_KEY, -1));
        if (uri.containsKey(JOIN_SESSION_KEY))
        {
            context.sessionId((int)parseLong(uri, JOIN_SESSION_KEY, 0));
        }
        return join(context);
    }

    private static long parseLong(final ChannelUri uri, final String key, final long defaultValue)
    {
        final String value = uri.get(key);
        if (null == value)
        {
            return defaultValue;
        }
        try
        {
            return Long.parseLong(value);
        }
        catch (final NumberFormatException ex)
        {
            throw new IllegalArgumentException(key + "=" + value + " in channel '" + uri + "' is not a number", ex);
        }
    }

    public int poll(final FragmentHandler fragmentHandler, final int fragmentLimit)
    {
        this.fragmentHandler = fragmentHandler;
        this.controlledHandler = null;
        return doPoll(fragmentLimit);
    }

    public int controlledPoll(final ControlledFragmentHandler fragmentHandler, final int fragmentLimit)
    {
        this.fragmentHandler = null;
        this.controlledHandler = fragmentHandler;
        return doPoll(fragmentLimit);
    }

    private int doPoll(final int fragmentLimit)
    {
        if (isClosed)
        {
            return 0;
        }
        final long nowNs = nanoClock.nanoTime();
        final int fragments;
        if (Phase.LIVE == phase)
        {
            fragments = pollLive(fragmentLimit);
        }
        else
        {
            fragments = pollReplay(fragmentLimit, nowNs);
        }
        counters.update(position, Phase.LIVE == phase ? 0 : Math.max(0, latestRecordedPosition(nowNs) - position),
            phase, nowNs);
        return fragments;
    }

    private int pollLive(final int fragmentLimit)
    {
        if (liveImage.isClosed())
        {
            // Dropped after the merge (e.g. fc=max): catch up from the archive again from where we are.
            detachLive();
            phase = Phase.REPLAY;
            return 0;
        }
        final int fragments = liveImage.controlledPoll(liveHandler, fragmentLimit);
        position = Math.max(position, liveImage.position());
        return fragments;
    }

    private int pollReplay(final int fragmentLimit, final long nowNs)
    {
        if (null == replay || replay.isDone())
        {
            final ReplayStart start = startReplay(nowNs);
            if (ReplayStart.NOTHING_RECORDED == start)
            {
                return mergeWithoutReplay();
            }
        }

        int fragments = 0;
        if (null != replay)
        {
            fragments = replay.controlledPoll(replayHandler, fragmentLimit);
            final long replayPosition = replay.position();
            if (replayPosition > position && (liveJoinPosition < 0 || replayPosition <= liveJoinPosition))
            {
                position = replayPosition;    // moved over term-end padding
            }
            else if (liveJoinPosition >= 0 && replayPosition > liveJoinPosition && position < liveJoinPosition)
            {
                // The replay jumped a recording gap past where the live image joined: below the join nothing holds
                // those positions (reported, clipped to the join), from the join on the live image does. Left at
                // the gap's start, the joiner waited for a replay that only offers frames past the join: for good.
                position = liveJoinPosition;
            }
        }

        if (Phase.REPLAY == phase)
        {
            if (latestRecordedPosition(nowNs) - position <= mergeWindowBytes)
            {
                live = verbus.addSubscription(context.channel(), streamId);
                phase = Phase.REPLAY_LIVE_ATTACHED;
            }
        }
        else
        {
            if (null == liveImage)
            {
                liveImage = live.imageBySessionId(sessionId);
                if (null != liveImage)
                {
                    liveJoinPosition = liveImage.position();
                }
            }
            if (null != liveImage)
            {
                if (liveImage.isClosed())
                {
                    detachLive();
                    phase = Phase.REPLAY;
                }
                else if (position >= liveJoinPosition)
                {
                    switchToLive();
                }
            }
        }
        return fragments;
    }

    /** What {@link #startReplay} found. */
    private enum ReplayStart
    {
        STARTED,
        /** The recording has not reached the delivered position yet (it was ahead, live): try again later. */
        WAIT,
        NOTHING_RECORDED
    }

    /** Starts replaying from the delivered position over the session's current recordings. */
    private ReplayStart startReplay(final long nowNs)
    {
        CloseHelper.close(replay);
        replay = null;
        recordings = StreamRecordings.ofSession(archive, streamId, sessionId);
        for (final RecordingDescriptor recording : recordings)
        {
            if (!recording.isActive() && recording.stopPosition() <= position)
            {
                continue;
            }
            if (recording.isActive() && recording.startPosition() <= position &&
                recordedPosition.of(recording, nowNs) <= position)
            {
                return ReplayStart.WAIT;
            }
            replay = new SessionReplay(connection, archive, recordings, position, Long.MAX_VALUE, this::onGap);
            return ReplayStart.STARTED;
        }
        return ReplayStart.NOTHING_RECORDED;
    }

    /** The archive has nothing more: merge with live where it joined, reporting what neither could give. */
    private int mergeWithoutReplay()
    {
        if (null == live)
        {
            live = verbus.addSubscription(context.channel(), streamId);
            phase = Phase.REPLAY_LIVE_ATTACHED;
        }
        if (null == liveImage)
        {
            liveImage = live.imageBySessionId(sessionId);
            if (null == liveImage)
            {
                return 0;
            }
            liveJoinPosition = liveImage.position();
        }
        if (liveJoinPosition > position)
        {
            onGap(new RecordingGap(streamId, sessionId, position, liveJoinPosition,
                "not recorded, and the live stream joined further on"));
            position = liveJoinPosition;
        }
        switchToLive();
        return 0;
    }

    private void switchToLive()
    {
        CloseHelper.close(replay);
        replay = null;
        phase = Phase.LIVE;
    }

    private void detachLive()
    {
        CloseHelper.close(live);
        live = null;
        liveImage = null;
        liveJoinPosition = -1;
    }

    private long latestRecordedPosition(final long nowNs)
    {
        return recordedPosition.of(recordings.get(recordings.size() - 1), nowNs);
    }

    private void onGap(final RecordingGap gap)
    {
        RecordingGap reported = gap;
        if (liveJoinPosition >= 0 && gap.toPosition() > liveJoinPosition)
        {
            if (gap.fromPosition() >= liveJoinPosition)
            {
                return; // the live image holds all of it
            }
            reported = new RecordingGap(gap.streamId(), gap.sessionId(), gap.fromPosition(), liveJoinPosition,
                gap.reason());
        }
        gaps.add(reported);
        context.gapListener().accept(reported);
    }

    private ControlledFragmentHandler.Action onReplayFragment(
        final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final long frameEndPosition = header.position();
        final long frameStartPosition =
            frameEndPosition - BitUtil.align(header.frameLength(), FrameDescriptor.FRAME_ALIGNMENT);
        if (liveJoinPosition >= 0 && frameStartPosition >= liveJoinPosition)
        {
            return ControlledFragmentHandler.Action.ABORT;    // the live image delivers from here
        }
        if (frameEndPosition <= position)
        {
            return ControlledFragmentHandler.Action.CONTINUE;
        }
        return deliver(buffer, offset, length, header, frameEndPosition);
    }

    private ControlledFragmentHandler.Action onLiveFragment(
        final DirectBuffer buffer, final int offset, final int length, final Header header)
    {
        final long frameEndPosition = header.position();
        if (frameEndPosition <= position)
        {
            return ControlledFragmentHandler.Action.CONTINUE;    // delivered from the archive already
        }
        return deliver(buffer, offset, length, header, frameEndPosition);
    }

    private ControlledFragmentHandler.Action deliver(
        final DirectBuffer buffer, final int offset, final int length, final Header header, final long frameEndPosition)
    {
        final ControlledFragmentHandler.Action action;
        if (null != controlledHandler)
        {
            action = controlledHandler.onFragment(buffer, offset, length, header);
        }
        else
        {
            fragmentHandler.onFragment(buffer, offset, length, header);
            action = ControlledFragmentHandler.Action.CONTINUE;
        }
        if (ControlledFragmentHandler.Action.ABORT != action)
        {
            position = frameEndPosition;
        }
        return action;
    }

    /** @return the next stream position this subscription delivers from. */
    public long position()
    {
        return position;
    }

    /** @return where it is: replaying, about to merge, or live. */
    public Phase phase()
    {
        return phase;
    }

    /** @return true once frames come from the live image. */
    public boolean isMerged()
    {
        return Phase.LIVE == phase;
    }

    /** @return the position the live image joined at (the merge point), or -1 before it joined. */
    public long liveJoinPosition()
    {
        return liveJoinPosition;
    }

    /** @return the joined publisher session. */
    public int sessionId()
    {
        return sessionId;
    }

    /** @return positions that could not be delivered (neither recorded nor live). */
    public List<RecordingGap> gaps()
    {
        return List.copyOf(gaps);
    }

    public List<Image> images()
    {
        return null == live ? List.of() : live.images();
    }

    public int imageCount()
    {
        return null == live ? 0 : live.imageCount();
    }

    public Image imageBySessionId(final int sessionId)
    {
        return null == live ? null : live.imageBySessionId(sessionId);
    }

    /**
     * Block and raw polls read the live image's log; they see nothing while the subscription is still replaying.
     */
    public long blockPoll(final io.aeron.logbuffer.BlockHandler blockHandler, final int blockLengthLimit)
    {
        return Phase.LIVE == phase && null != live ? live.blockPoll(blockHandler, blockLengthLimit) : 0;
    }

    public long rawPoll(final io.aeron.logbuffer.RawBlockHandler rawBlockHandler, final int blockLengthLimit)
    {
        return Phase.LIVE == phase && null != live ? live.rawPoll(rawBlockHandler, blockLengthLimit) : 0;
    }

    public Image imageAtIndex(final int index)
    {
        if (null == live)
        {
            throw new IndexOutOfBoundsException("no live image yet: the subscription is replaying");
        }
        return live.imageAtIndex(index);
    }

    public void forEachImage(final java.util.function.Consumer<Image> consumer)
    {
        if (null != live)
        {
            live.forEachImage(consumer);
        }
    }

    public boolean hasNoImages()
    {
        return null == live || live.hasNoImages();
    }

    /** @return the live subscription's registration id, or -1 before the live subscription is added. */
    public long registrationId()
    {
        return null == live ? -1 : live.registrationId();
    }

    public long channelStatus()
    {
        return isClosed ? io.aeron.status.ChannelEndpointStatus.NO_ID_ALLOCATED :
            io.aeron.status.ChannelEndpointStatus.ACTIVE;
    }

    /** @return true while it has a source: a replay, or the live image once merged. */
    public boolean isConnected()
    {
        return !isClosed && (Phase.LIVE == phase ? !liveImage.isClosed() : null != replay);
    }

    public String channel()
    {
        return context.channel();
    }

    public int streamId()
    {
        return streamId;
    }

    public boolean isClosed()
    {
        return isClosed;
    }

    /** Stops the replay, closes the live subscription and the archive session. Idempotent. */
    public void close()
    {
        if (isClosed)
        {
            return;
        }
        isClosed = true;
        CloseHelper.quietCloseAll(replay, live, archive, counters);
    }

    public String toString()
    {
        return "LateJoinSubscription{stream=" + streamId + ", session=" + sessionId + ", phase=" + phase +
            ", position=" + position + ", liveJoinPosition=" + liveJoinPosition + '}';
    }

    /** Configuration: fluent setters, validation in {@link #conclude()}. */
    public static final class Context
    {
        private boolean concluded;
        private Verbus verbus;
        private ArchiveConnection connection;
        private String channel;
        private int streamId;
        private boolean streamIdSet;
        private Integer sessionId;
        private long fromPosition = -1;
        private long mergeWindowBytes;
        private Consumer<RecordingGap> gapListener;
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;

        /**
         * @return this.
         * @throws IllegalArgumentException naming what is missing.
         */
        public Context conclude()
        {
            if (concluded)
            {
                throw new IllegalStateException("context already concluded");
            }
            if (null == verbus || null == connection || null == channel || !streamIdSet)
            {
                throw new IllegalArgumentException("verbus, connection, channel and streamId must be set");
            }
            ChannelUri.parse(channel);
            if (mergeWindowBytes < 0)
            {
                throw new IllegalArgumentException("mergeWindowBytes must not be negative: " + mergeWindowBytes);
            }
            if (null == gapListener)
            {
                gapListener = (gap) -> System.getLogger(LateJoinSubscription.class.getName())
                    .log(System.Logger.Level.WARNING, gap.toString());
            }
            concluded = true;
            return this;
        }

        /** @return the Verbus the live subscription is added to. */
        public Verbus verbus()
        {
            return verbus;
        }

        /** @return this. */
        public Context verbus(final Verbus verbus)
        {
            this.verbus = verbus;
            return this;
        }

        /** @return the archive connection replays come through (shared; not closed by the subscription). */
        public ArchiveConnection connection()
        {
            return connection;
        }

        /** @return this. */
        public Context connection(final ArchiveConnection connection)
        {
            this.connection = connection;
            return this;
        }

        /** @return the live Verbus channel. */
        public String channel()
        {
            return channel;
        }

        /** @return this. */
        public Context channel(final String channel)
        {
            this.channel = channel;
            return this;
        }

        /** @return the stream id. */
        public int streamId()
        {
            return streamId;
        }

        /** @return this. */
        public Context streamId(final int streamId)
        {
            this.streamId = streamId;
            this.streamIdSet = true;
            return this;
        }

        /** @return the publisher session to join, or null for the session of the stream's newest recording. */
        public Integer sessionId()
        {
            return sessionId;
        }

        /** @return this. */
        public Context sessionId(final Integer sessionId)
        {
            this.sessionId = sessionId;
            return this;
        }

        /** @return the stream position to start from (a frame boundary), or -1 for the start of the recordings. */
        public long fromPosition()
        {
            return fromPosition;
        }

        /** @return this. */
        public Context fromPosition(final long fromPosition)
        {
            this.fromPosition = fromPosition;
            return this;
        }

        /**
         * @return how close (bytes) the replay must be to the recorded position before the live subscription is
         * added; 0 for a quarter of the term length.
         */
        public long mergeWindowBytes()
        {
            return mergeWindowBytes;
        }

        /** @return this. */
        public Context mergeWindowBytes(final long mergeWindowBytes)
        {
            this.mergeWindowBytes = mergeWindowBytes;
            return this;
        }

        /** @return told of positions that can never be delivered. */
        public Consumer<RecordingGap> gapListener()
        {
            return gapListener;
        }

        /** @return this. */
        public Context gapListener(final Consumer<RecordingGap> gapListener)
        {
            this.gapListener = gapListener;
            return this;
        }

        /** @return the clock. */
        public NanoClock nanoClock()
        {
            return nanoClock;
        }

        /** @return this. */
        public Context nanoClock(final NanoClock nanoClock)
        {
            this.nanoClock = nanoClock;
            return this;
        }
    }
}
