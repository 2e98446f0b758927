package io.verbus.archive;

import io.aeron.Aeron;
import io.aeron.ExclusivePublication;
import io.aeron.archive.client.AeronArchive;
import io.aeron.archive.codecs.RecordingSignal;
import io.aeron.archive.status.RecordingPos;
import io.aeron.exceptions.RegistrationException;
import io.verbus.Image;
import io.verbus.Subscription;
import io.verbus.Verbus;
import io.verbus.driver.IdleStrategies;
import org.agrona.CloseHelper;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.ManyToOneConcurrentArrayQueue;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;
import org.agrona.concurrent.status.CountersReader;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Records a Verbus stream ({@code ipc}, {@code rdma:} over any provider, {@code aeron:}) into an Aeron Archive, one
 * recording per publisher session, with recording positions equal to the stream's positions.
 * <pre>{@code
 * try (VerbusRecorder recorder = VerbusRecorder.launch(new VerbusRecorder.Context()
 *     .verbus(verbus).channel("rdma:endpoint=10.0.0.1:40123").streamId(1001)))
 * {
 *     ...   // recording on the recorder's own thread
 * }
 * }</pre>
 * It is an agent: its duty cycle takes new images, reads each image into its {@link ImageRecorder}, writes to the
 * archive, and follows the archive's recording signals. It runs on its own thread, or on the caller's through
 * {@link #doWork()} when {@link Context#ownThread(boolean)} is false.
 * <p>
 * Keeping up: the recorder reads a live image like any subscriber, so under {@code fc=min} (the rdma default) a
 * recorder that cannot keep up back-pressures the publisher and loses nothing; under {@code fc=max} it may be dropped,
 * rejoins at the publisher's position, and the positions in between are reported as a {@link RecordingGap}.
 */
public final class VerbusRecorder implements Agent, AutoCloseable
{
    private static final System.Logger LOGGER = System.getLogger(VerbusRecorder.class.getName());

    private final Context context;
    private final NanoClock nanoClock;
    private final RecordingListener listener;
    private final ManyToOneConcurrentArrayQueue<Image> newImages = new ManyToOneConcurrentArrayQueue<>(1024);
    private final ArrayList<ImageRecorder> recorders = new ArrayList<>();
    private volatile ImageRecorder[] published = new ImageRecorder[0];
    private final List<RecordingGap> gaps = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final Subscription subscription;
    private final RecorderCounters counters;
    private ArchiveConnection connection;
    private AeronArchive archive;
    private long nextReconnectNs;
    private String lastArchiveError;
    private AgentRunner runner;
    private volatile boolean isClosed;

    private VerbusRecorder(final Context context)
    {
        this.context = context;
        this.nanoClock = context.nanoClock();
        this.listener = context.listener();
        this.connection = ArchiveConnection.connect(context.archive());
        try
        {
            this.archive = connection.connectArchive(this::onSignal, this::onArchiveError);
            this.counters = new RecorderCounters(context.verbus(), context.channel(), context.streamId());
            this.subscription = context.verbus().addSubscription(
                context.channel(), context.streamId(), this::onAvailableImage, (image) -> {});
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(archive, connection);
            throw ex;
        }
    }

    /**
     * Connects to the archive, subscribes to the stream and, unless the context says otherwise, starts the recorder
     * thread.
     *
     * @param context concluded by this call.
     * @return the running recorder.
     */
    public static VerbusRecorder launch(final Context context)
    {
        context.conclude();
        final VerbusRecorder recorder = new VerbusRecorder(context);
        if (context.ownThread())
        {
            recorder.runner = new AgentRunner(
                IdleStrategies.newIdleStrategy(context.idleStrategy()), recorder::onAgentError, null, recorder);
            AgentRunner.startOnThread(recorder.runner);
        }
        return recorder;
    }

    public String roleName()
    {
        return "verbus-recorder";
    }

    /** @return the retention of an image in terms: as configured, within {@link Context#RETENTION_MAX_LENGTH}. */
    private int retentionTerms(final int termLength)
    {
        int terms = context.retentionTerms();
        while (terms > 1 && (long)terms * termLength > Context.RETENTION_MAX_LENGTH)
        {
            terms >>= 1;
        }
        return terms;
    }

    private void onAvailableImage(final Image image)
    {
        if (!newImages.offer(image))
        {
            onAgentError(new IllegalStateException("recorder image queue full: " + image + " not recorded"));
        }
    }

    private void onAgentError(final Throwable throwable)
    {
        LOGGER.log(System.Logger.Level.ERROR, "recorder error", throwable);
    }

    private void onArchiveError(final Throwable throwable)
    {
        lastArchiveError = throwable.getMessage();
        LOGGER.log(System.Logger.Level.WARNING, "archive refused a recorder request: " + lastArchiveError);
    }

    /**
     * One duty cycle.
     *
     * @return work done.
     */
    public int doWork()
    {
        final long nowNs = nanoClock.nanoTime();
        int work = newImages.drain((image) -> recorders.add(
            new ImageRecorder(image, retentionTerms(image.termBufferLength()), context.recordingMtuLength(), nowNs)));

        if (null == archive)
        {
            if (nowNs - nextReconnectNs >= 0)
            {
                reconnect(nowNs);
            }
            if (null == archive)
            {
                for (int i = 0, size = recorders.size(); i < size; i++)
                {
                    work += recorders.get(i).poll();
                }
                updateCounters(nowNs);
                if (published.length != recorders.size())
                {
                    published = recorders.toArray(new ImageRecorder[0]);
                }
                return work;
            }
        }

        try
        {
            work += archive.pollForRecordingSignals();
            for (int i = 0, size = recorders.size(); i < size; i++)
            {
                work += step(recorders.get(i), nowNs);
            }
            if (connection.aeron().isClosed() || !archive.controlResponsePoller().subscription().isConnected())
            {
                onArchiveLost("the archive's control session is no longer connected", nowNs);
            }
        }
        catch (final RuntimeException ex)
        {
            onArchiveLost(ex.toString(), nowNs);
        }

        updateCounters(nowNs);
        if (recorders.removeIf((recorder) -> ImageRecorder.State.DONE == recorder.state()) ||
            published.length != recorders.size())
        {
            published = recorders.toArray(new ImageRecorder[0]);
        }
        return work;
    }

    private int step(final ImageRecorder recorder, final long nowNs)
    {
        switch (recorder.state())
        {
            case NEW ->
            {
                if (recorder.image().isClosed() && recorder.consumedPosition() == recorder.confirmedPosition())
                {
                    recorder.state(ImageRecorder.State.DONE, nowNs);
                    return 1;
                }
                int work = recorder.poll();
                if (nowNs - recorder.stateChangeNs() >= 0 && !hasEarlierRecorderOfSession(recorder))
                {
                    work += startRecording(recorder, nowNs);
                }
                return work;
            }
            case STARTING ->
            {
                final int work = recorder.poll() + recorder.offer();
                if (nowNs - recorder.stateChangeNs() > context.startTimeoutNs())
                {
                    onStartTimeout(recorder, nowNs);
                }
                return work;
            }
            case RECORDING ->
            {
                int work = recorder.poll() + recorder.offer();
                updateRecordedPosition(recorder, nowNs);
                if (recorder.isPublicationLost(nowNs, context.startTimeoutNs()))
                {
                    throw new IllegalStateException("recording publication of " + recorder + " lost its archive");
                }
                if (recorder.isDrained())
                {
                    // An image that closed before the recorder read all of it (the recorder held back by an archive
                    // behind it, the image gone after its linger or drain timeout) leaves its tail unrecorded: say so
                    // where the end is known. (A publisher lost without an end of stream leaves no such mark.)
                    final long endOfStream = recorder.image().endOfStreamPosition();
                    if (Long.MAX_VALUE != endOfStream && endOfStream > recorder.consumedPosition())
                    {
                        reportGap(new RecordingGap(recorder.streamId(), recorder.sessionId(),
                            recorder.consumedPosition(), endOfStream,
                            "the image closed before the recorder read it (the archive was behind)"));
                    }
                    recorder.closePublication();
                    recorder.state(ImageRecorder.State.CLOSING, nowNs);
                    work++;
                }
                return work;
            }
            case CLOSING ->
            {
                if (Aeron.NULL_VALUE != recorder.stopPosition() ||
                    nowNs - recorder.stateChangeNs() > context.startTimeoutNs())
                {
                    listener.onRecordingStopped(recorder.recordingId(), recorder.confirmedPosition());
                    recorder.state(ImageRecorder.State.DONE, nowNs);
                    return 1;
                }
                return 0;
            }
            case SUSPENDED ->
            {
                return recorder.poll();
            }
            default ->
            {
                return 0;
            }
        }
    }

    /** A new image of a session waits until the recording of that session's previous image has stopped. */
    private boolean hasEarlierRecorderOfSession(final ImageRecorder recorder)
    {
        for (int i = 0, size = recorders.size(); i < size; i++)
        {
            final ImageRecorder other = recorders.get(i);
            if (other == recorder)
            {
                return false;
            }
            if (other.sessionId() == recorder.sessionId() && ImageRecorder.State.DONE != other.state())
            {
                return true;
            }
        }
        return false;
    }

    /**
     * Starts a recording of the image at the oldest position still retained, or extends the session's recording that
     * stopped within the retained range (a recorder restarted while the stream was idle, or the archive came back).
     * Anything between the session's earlier recordings and the start is a gap.
     */
    private int startRecording(final ImageRecorder recorder, final long nowNs)
    {
        final List<RecordingDescriptor> sessionRecordings =
            StreamRecordings.ofSession(archive, recorder.streamId(), recorder.sessionId());
        RecordingDescriptor extendable = null;
        long recordedTo = Long.MIN_VALUE;
        for (final RecordingDescriptor recording : sessionRecordings)
        {
            if (recording.initialTermId() != recorder.initialTermId() ||
                recording.termBufferLength() != recorder.termLength())
            {
                continue;
            }
            if (recording.isActive())
            {
                if (recording.recordingId() == recorder.recordingId())
                {
                    // Our own recording outlived our connection: stop it, then extend it.
                    archive.tryStopRecordingByIdentity(recording.recordingId());
                    recorder.state(ImageRecorder.State.NEW, nowNs + context.retryIntervalNs());
                    return 1;
                }
                continue;
            }
            recordedTo = Math.max(recordedTo, recording.stopPosition());
            if (!recorder.extendRefused() &&
                recording.mtuLength() == context.recordingMtuLength() &&
                recording.stopPosition() >= recorder.confirmedPosition() &&
                recording.stopPosition() <= recorder.consumedPosition() &&
                (null == extendable || recording.recordingId() > extendable.recordingId()))
            {
                extendable = recording;
            }
        }

        final long startPosition = null != extendable ? extendable.stopPosition() : recorder.confirmedPosition();
        recorder.pendingGap(Long.MIN_VALUE != recordedTo && recordedTo < startPosition ?
            new RecordingGap(recorder.streamId(), recorder.sessionId(), recordedTo, startPosition,
                Aeron.NULL_VALUE != recorder.recordingId() ? "the archive lost data it had not yet recorded" :
                "the recorder was not subscribed (dropped, stopped or started late) while the stream went on") :
            null);

        final String channel = RecordingChannel.publicationChannel(
            context.archive().recordingChannel(), context.channel(), recorder.sessionId(), recorder.initialTermId(),
            recorder.termLength(), startPosition, context.recordingMtuLength());
        final long subscriptionId = null != extendable ?
            archive.extendRecording(extendable.recordingId(), channel, recorder.streamId(),
                context.archive().recordingSourceLocation(), true) :
            archive.startRecording(channel, recorder.streamId(), context.archive().recordingSourceLocation(), true);

        final ExclusivePublication publication;
        try
        {
            publication = connection.aeron().addExclusivePublication(channel, recorder.streamId());
        }
        catch (final RegistrationException ex)
        {
            // The previous publication of this session may still be draining in the driver: try again shortly.
            archive.tryStopRecording(subscriptionId);
            recorder.state(ImageRecorder.State.NEW, nowNs + context.retryIntervalNs());
            LOGGER.log(System.Logger.Level.DEBUG, "recording publication refused, retrying: " + ex.getMessage());
            return 1;
        }
        recorder.attach(publication, subscriptionId, startPosition, null != extendable, nowNs);
        return 1;
    }

    private void onStartTimeout(final ImageRecorder recorder, final long nowNs)
    {
        final String reason = null != lastArchiveError ? lastArchiveError : "no signal from the archive";
        LOGGER.log(System.Logger.Level.WARNING, "recording of stream=" + recorder.streamId() + " session=" +
            recorder.sessionId() + " did not start within " +
            TimeUnit.NANOSECONDS.toMillis(context.startTimeoutNs()) + " ms (" + reason + "); retrying" +
            (recorder.extendsRecording() ? " as a new recording" : ""));
        if (recorder.extendsRecording())
        {
            recorder.extendRefused(true);
        }
        archive.tryStopRecording(recorder.subscriptionId());
        recorder.suspend(nowNs);
        recorder.state(ImageRecorder.State.NEW, nowNs + context.retryIntervalNs());
    }

    private void onSignal(
        final long controlSessionId,
        final long correlationId,
        final long recordingId,
        final long subscriptionId,
        final long position,
        final RecordingSignal signal)
    {
        final long nowNs = nanoClock.nanoTime();
        for (int i = 0, size = recorders.size(); i < size; i++)
        {
            final ImageRecorder recorder = recorders.get(i);
            if ((RecordingSignal.START == signal || RecordingSignal.EXTEND == signal) &&
                recorder.subscriptionId() == subscriptionId && ImageRecorder.State.STARTING == recorder.state())
            {
                final CountersReader countersReader = connection.countersReader();
                final int counterId = connection.sharesArchiveDriver() ?
                    RecordingPos.findCounterIdByRecording(countersReader, recordingId, archive.archiveId()) :
                    Aeron.NULL_VALUE;
                recorder.onRecordingStarted(recordingId, counterId, nowNs);
                final RecordingGap gap = recorder.takePendingGap();
                if (null != gap)
                {
                    reportGap(gap);
                }
                listener.onRecordingStarted(
                    recordingId, recorder.streamId(), recorder.sessionId(), position, RecordingSignal.EXTEND == signal);
            }
            else if (RecordingSignal.STOP == signal && recorder.recordingId() == recordingId &&
                ImageRecorder.State.CLOSING == recorder.state())
            {
                recorder.onRecordingStopped(position);
            }
        }
    }

    private void updateRecordedPosition(final ImageRecorder recorder, final long nowNs)
    {
        final int counterId = recorder.recordingPositionCounterId();
        if (Aeron.NULL_VALUE != counterId)
        {
            final CountersReader countersReader = connection.countersReader();
            final long position = countersReader.getCounterValue(counterId);
            if (RecordingPos.isActive(countersReader, counterId, recorder.recordingId()))
            {
                recorder.onRecordedPosition(position);
            }
        }
        else if (nowNs - recorder.nextPositionQueryNs() >= 0)
        {
            // A remote archive's counters are not visible here: ask it, a few times a second.
            recorder.nextPositionQueryNs(nowNs + context.positionQueryIntervalNs());
            final long position = archive.getRecordingPosition(recorder.recordingId());
            if (AeronArchive.NULL_POSITION != position)
            {
                recorder.onRecordedPosition(position);
            }
        }
    }

    private void reportGap(final RecordingGap gap)
    {
        gaps.add(gap);
        counters.onGap(gap);
        LOGGER.log(System.Logger.Level.WARNING, gap.toString());
        listener.onGap(gap);
    }

    private void onArchiveLost(final String reason, final long nowNs)
    {
        LOGGER.log(System.Logger.Level.WARNING, "archive lost (" + reason + "): " +
            "retaining up to the retention of each image " +
            "and reconnecting every " + TimeUnit.NANOSECONDS.toMillis(context.reconnectIntervalNs()) + " ms");
        for (int i = 0, size = recorders.size(); i < size; i++)
        {
            final ImageRecorder recorder = recorders.get(i);
            if (ImageRecorder.State.CLOSING == recorder.state() || ImageRecorder.State.DONE == recorder.state())
            {
                recorder.state(ImageRecorder.State.DONE, nowNs);
            }
            else if (ImageRecorder.State.NEW != recorder.state())
            {
                recorder.suspend(nowNs);
            }
        }
        CloseHelper.quietClose(archive);
        archive = null;
        if (connection.aeron().isClosed() || connection.sharesArchiveDriver())
        {
            // Sharing the archive's driver means the archive and our client went down together: start afresh.
            CloseHelper.quietClose(connection);
            connection = null;
        }
        counters.onArchiveLost();
        nextReconnectNs = nowNs + context.reconnectIntervalNs();
        listener.onArchiveLost(reason);
    }

    private void reconnect(final long nowNs)
    {
        try
        {
            if (null == connection)
            {
                connection = ArchiveConnection.connect(context.archive().copy());
            }
            archive = connection.connectArchive(this::onSignal, this::onArchiveError);
        }
        catch (final RuntimeException ex)
        {
            LOGGER.log(System.Logger.Level.DEBUG, "archive not reachable yet: " + ex.getMessage());
            CloseHelper.quietClose(connection);
            connection = null;
            nextReconnectNs = nowNs + context.reconnectIntervalNs();
            return;
        }
        LOGGER.log(System.Logger.Level.INFO, "archive reconnected: " + connection.describe());
        for (int i = 0, size = recorders.size(); i < size; i++)
        {
            final ImageRecorder recorder = recorders.get(i);
            if (ImageRecorder.State.SUSPENDED == recorder.state())
            {
                recorder.state(ImageRecorder.State.NEW, nowNs);
            }
        }
        listener.onArchiveReconnected();
    }

    private void updateCounters(final long nowNs)
    {
        long position = 0;
        long lag = 0;
        long newlyRecorded = 0;
        for (int i = 0, size = recorders.size(); i < size; i++)
        {
            final ImageRecorder recorder = recorders.get(i);
            position = recorder.confirmedPosition();
            lag = Math.max(lag, recorder.consumedPosition() - recorder.confirmedPosition());
            newlyRecorded += recorder.takeNewlyRecordedBytes();
            recorder.publishRecordedPosition();
        }
        counters.update(position, lag, newlyRecorded, nowNs);
    }

    /** @return the Verbus subscription the recorder reads. */
    public Subscription subscription()
    {
        return subscription;
    }

    /** @return the gaps reported so far. Thread-safe. */
    public List<RecordingGap> gaps()
    {
        return List.copyOf(gaps);
    }

    /** @return the connection to the archive, or null while reconnecting. */
    public ArchiveConnection connection()
    {
        return connection;
    }

    /** @return the concluded context. */
    public Context context()
    {
        return context;
    }

    /**
     * @param sessionId of a publisher.
     * @return how far the archive has recorded that session's stream in this recorder's recordings, or -1 before
     * any of them started. Thread-safe (a snapshot).
     */
    public long recordedPosition(final int sessionId)
    {
        long position = -1;
        for (final ImageRecorder recorder : published)
        {
            if (recorder.sessionId() == sessionId)
            {
                position = Math.max(position, recorder.publishedRecordedPosition());
            }
        }
        return position;
    }

    public void onClose()
    {
        final long nowNs = nanoClock.nanoTime();
        for (final ImageRecorder recorder : recorders)
        {
            recorder.suspend(nowNs);
        }
        CloseHelper.quietCloseAll(subscription, archive, connection, counters);
    }

    /**
     * Stops the recorder thread (if any), closes the subscription, the recording publications (the archive stops
     * their recordings) and the connection (an embedded archive closes with it). Idempotent.
     */
    public void close()
    {
        if (isClosed)
        {
            return;
        }
        isClosed = true;
        if (null != runner)
        {
            runner.close();
        }
        else
        {
            onClose();
        }
    }

    /** Configuration, Aeron-style: fluent setters, validation in {@link #conclude()}. */
    public static final class Context
    {
        /** How long a start or extend may wait for the archive's signal before it is retried. */
        public static final long START_TIMEOUT_NS_DEFAULT = TimeUnit.SECONDS.toNanos(5);

        /** How often a lost archive is tried again. */
        public static final long RECONNECT_INTERVAL_NS_DEFAULT = TimeUnit.SECONDS.toNanos(1);

        /** Pause before a refused start is tried again. */
        public static final long RETRY_INTERVAL_NS_DEFAULT = TimeUnit.MILLISECONDS.toNanos(100);

        /** How often a remote archive is asked how far it has recorded. */
        public static final long POSITION_QUERY_INTERVAL_NS_DEFAULT = TimeUnit.MILLISECONDS.toNanos(100);

        /**
         * Terms of each image the recorder may read ahead of what the archive has recorded: it absorbs the archive's
         * write latency, so the recorder reads at the live rate; and it is what is written again, without a gap,
         * when the archive comes back after a restart.
         */
        public static final int RETENTION_TERMS_DEFAULT = 4;

        /** The retention of one image never exceeds this (fewer terms for long terms, at least one). */
        public static final long RETENTION_MAX_LENGTH = 64L * 1024 * 1024;

        private boolean concluded;
        private Verbus verbus;
        private String channel;
        private int streamId;
        private boolean streamIdSet;
        private ArchiveConnection.Context archive;
        private RecordingListener listener;
        private int recordingMtuLength;
        private boolean ownThread = true;
        private String idleStrategy = IdleStrategies.BACKOFF;
        private long startTimeoutNs = START_TIMEOUT_NS_DEFAULT;
        private long reconnectIntervalNs = RECONNECT_INTERVAL_NS_DEFAULT;
        private long retryIntervalNs = RETRY_INTERVAL_NS_DEFAULT;
        private long positionQueryIntervalNs = POSITION_QUERY_INTERVAL_NS_DEFAULT;
        private int retentionTerms = RETENTION_TERMS_DEFAULT;
        private NanoClock nanoClock = SystemNanoClock.INSTANCE;

        /**
         * @return this.
         * @throws IllegalArgumentException naming what is missing or invalid.
         */
        public Context conclude()
        {
            if (concluded)
            {
                throw new IllegalStateException("context already concluded: use a new Context per recorder");
            }
            if (null == verbus)
            {
                throw new IllegalArgumentException("verbus must be set: the recorder subscribes through it");
            }
            if (null == channel)
            {
                throw new IllegalArgumentException("channel must be set: the Verbus channel to record");
            }
            if (!streamIdSet)
            {
                throw new IllegalArgumentException("streamId must be set");
            }
            io.verbus.ChannelUri.parse(channel);
            if (null == archive)
            {
                archive = new ArchiveConnection.Context();
            }
            if (0 == recordingMtuLength)
            {
                recordingMtuLength = verbus.context().mtuLength();
            }
            if (recordingMtuLength < io.verbus.ChannelUri.MTU_MIN_LENGTH ||
                recordingMtuLength > io.verbus.ChannelUri.MTU_MAX_LENGTH || 0 != (recordingMtuLength & 31))
            {
                throw new IllegalArgumentException("recordingMtuLength " + recordingMtuLength +
                    " must be a multiple of 32 from " + io.verbus.ChannelUri.MTU_MIN_LENGTH + " to " +
                    io.verbus.ChannelUri.MTU_MAX_LENGTH);
            }
            IdleStrategies.checkName(idleStrategy);
            if (retentionTerms < 1 || Integer.bitCount(retentionTerms) != 1)
            {
                throw new IllegalArgumentException("retentionTerms must be a power of two of at least 1: " +
                    retentionTerms);
            }
            if (null == listener)
            {
                listener = new RecordingListener()
                {
                };
            }
            concluded = true;
            return this;
        }

        /** @return the Verbus the recorder subscribes through. */
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

        /** @return the Verbus channel recorded. */
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

        /** @return the stream id recorded. */
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

        /** @return where to record (embedded archive by default). */
        public ArchiveConnection.Context archive()
        {
            return archive;
        }

        /** @return this. */
        public Context archive(final ArchiveConnection.Context archive)
        {
            this.archive = archive;
            return this;
        }

        /** @return told of starts, gaps, stops and archive loss. */
        public RecordingListener listener()
        {
            return listener;
        }

        /** @return this. */
        public Context listener(final RecordingListener listener)
        {
            this.listener = listener;
            return this;
        }

        /**
         * @return the MTU of recording publications: at least the recorded stream's, so a replay over UDP can carry
         * every frame; defaults to the Verbus context's.
         */
        public int recordingMtuLength()
        {
            return recordingMtuLength;
        }

        /** @return this. */
        public Context recordingMtuLength(final int recordingMtuLength)
        {
            this.recordingMtuLength = recordingMtuLength;
            return this;
        }

        /** @return true to run on a thread of its own (default); false to be driven by {@link #doWork()}. */
        public boolean ownThread()
        {
            return ownThread;
        }

        /** @return this. */
        public Context ownThread(final boolean ownThread)
        {
            this.ownThread = ownThread;
            return this;
        }

        /** @return the idle strategy of the recorder thread. */
        public String idleStrategy()
        {
            return idleStrategy;
        }

        /** @return this. */
        public Context idleStrategy(final String idleStrategy)
        {
            this.idleStrategy = idleStrategy;
            return this;
        }

        /** @return how long a start may wait for the archive's signal. */
        public long startTimeoutNs()
        {
            return startTimeoutNs;
        }

        /** @return this. */
        public Context startTimeoutNs(final long startTimeoutNs)
        {
            this.startTimeoutNs = startTimeoutNs;
            return this;
        }

        /** @return how often a lost archive is tried again. */
        public long reconnectIntervalNs()
        {
            return reconnectIntervalNs;
        }

        /** @return this. */
        public Context reconnectIntervalNs(final long reconnectIntervalNs)
        {
            this.reconnectIntervalNs = reconnectIntervalNs;
            return this;
        }

        /** @return the pause before a refused start is retried. */
        public long retryIntervalNs()
        {
            return retryIntervalNs;
        }

        /** @return this. */
        public Context retryIntervalNs(final long retryIntervalNs)
        {
            this.retryIntervalNs = retryIntervalNs;
            return this;
        }

        /** @return how often a remote archive is asked for its recording position. */
        public long positionQueryIntervalNs()
        {
            return positionQueryIntervalNs;
        }

        /** @return this. */
        public Context positionQueryIntervalNs(final long positionQueryIntervalNs)
        {
            this.positionQueryIntervalNs = positionQueryIntervalNs;
            return this;
        }

        /** @return terms of retention per image (a power of two). */
        public int retentionTerms()
        {
            return retentionTerms;
        }

        /** @return this. */
        public Context retentionTerms(final int retentionTerms)
        {
            this.retentionTerms = retentionTerms;
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
