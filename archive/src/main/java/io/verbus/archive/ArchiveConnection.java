package io.verbus.archive;

import io.aeron.Aeron;
import io.aeron.CommonContext;
import io.aeron.archive.Archive;
import io.aeron.archive.ArchiveThreadingMode;
import io.aeron.archive.ArchivingMediaDriver;
import io.aeron.archive.client.AeronArchive;
import io.aeron.archive.client.AeronArchiveVersion;
import io.aeron.archive.client.RecordingSignalConsumer;
import io.aeron.archive.codecs.SourceLocation;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.verbus.driver.IdleStrategies;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.status.CountersReader;

import java.io.File;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * Where recordings go and come from: an Aeron Archive, either launched here (an {@link ArchivingMediaDriver}: an
 * Aeron media driver plus the archive, the default) or an existing one reached through its media driver's dir
 * (same host) or its UDP control channel (any host). Holds one Aeron client; each recorder, replay or late joiner
 * opens its own archive control session with {@link #connectArchive}, so their requests never queue behind each
 * other.
 * <p>
 * Recording and replay travel on {@link Context#recordingChannel()} and {@link Context#replayChannel()}:
 * {@code aeron:ipc} (the default) when this process shares the archive's media driver, an {@code aeron:udp}
 * endpoint when the archive is remote.
 */
public final class ArchiveConnection implements AutoCloseable
{
    /**
     * The timer interval of a launched driver (Aeron's default is 1 s). A closed recording publication keeps its
     * session id until the driver's timer sees it drained, and a recorder rejoining the same stream session cannot
     * add its new recording publication before that, so a shorter interval shortens the time it is not recording.
     */
    static final long TIMER_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(50);

    /** A driver whose heartbeat is older than this is not running. */
    static final long DRIVER_ACTIVE_TIMEOUT_MS = 5_000;

    private final Context context;
    private final ArchivingMediaDriver archivingDriver;
    private final MediaDriver clientDriver;
    private final Aeron aeron;

    private ArchiveConnection(final Context context)
    {
        this.context = context;
        ArchivingMediaDriver launchedArchive = null;
        MediaDriver launchedDriver = null;
        try
        {
            final String aeronDir = context.aeronDir();
            if ((context.launchArchive() || (!context.sharesArchiveDriver() && context.launchClientDriver())) &&
                isDriverActive(aeronDir))
            {
                // A launched driver deletes its dir on start: never do that to a running one.
                throw new IllegalStateException("a media driver is already running in " + aeronDir +
                    " (a running recorder's archive?): connect to it as an existing archive, or use another dir");
            }
            if (context.launchArchive())
            {
                launchedArchive = ArchivingMediaDriver.launch(driverContext(aeronDir), archiveContext(aeronDir));
            }
            else if (!context.sharesArchiveDriver() && context.launchClientDriver())
            {
                launchedDriver = MediaDriver.launch(driverContext(aeronDir));
            }
            this.aeron = Aeron.connect(new Aeron.Context()
                .aeronDirectoryName(aeronDir)
                .clientName("verbus-archive")
                .driverTimeoutMs(context.driverTimeoutMs())
                .errorHandler(context.errorHandler()));
            this.archivingDriver = launchedArchive;
            this.clientDriver = launchedDriver;
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietCloseAll(launchedArchive, launchedDriver);
            throw ex;
        }
    }

    /**
     * @param aeronDir a media driver dir.
     * @return true when a media driver is alive there (its heartbeat is recent).
     */
    public static boolean isDriverActive(final String aeronDir)
    {
        return CommonContext.isDriverActive(new File(aeronDir), DRIVER_ACTIVE_TIMEOUT_MS, (message) -> {});
    }

    /**
     * Launches or connects per the context.
     *
     * @param context concluded by this call.
     * @return the connection.
     */
    public static ArchiveConnection connect(final Context context)
    {
        context.conclude();
        return new ArchiveConnection(context);
    }

    private MediaDriver.Context driverContext(final String aeronDir)
    {
        return new MediaDriver.Context()
            .aeronDirectoryName(aeronDir)
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .warnIfDirectoryExists(false)
            .threadingMode(ThreadingMode.SHARED)
            .driverTimeoutMs(context.driverTimeoutMs())
            .timerIntervalNs(TIMER_INTERVAL_NS)
            .sharedIdleStrategy(IdleStrategies.newIdleStrategy(context.idleStrategy()))
            .spiesSimulateConnection(false)
            .errorHandler(context.errorHandler());
    }

    private Archive.Context archiveContext(final String aeronDir)
    {
        final Archive.Context archiveContext = new Archive.Context()
            .aeronDirectoryName(aeronDir)
            .archiveDirectoryName(context.archiveDir())
            .deleteArchiveOnStart(context.deleteArchiveOnStart())
            .threadingMode(ArchiveThreadingMode.SHARED)
            .idleStrategySupplier(() -> IdleStrategies.newIdleStrategy(context.idleStrategy()))
            .localControlChannel(Context.IPC_CHANNEL)
            .replicationChannel(Context.REPLICATION_CHANNEL_DEFAULT)
            .archiveClientContext(new AeronArchive.Context()
                .controlResponseChannel(Context.UDP_RESPONSE_CHANNEL_DEFAULT))
            .recordingEventsEnabled(false)
            .segmentFileLength(context.segmentFileLength())
            .errorHandler(context.errorHandler());
        if (null != context.controlChannel())
        {
            archiveContext.controlChannel(context.controlChannel()).controlChannelEnabled(true);
        }
        else
        {
            archiveContext.controlChannelEnabled(false);
        }
        return archiveContext;
    }

    /**
     * Opens a new archive control session. The caller owns it and closes it; it shares this connection's Aeron
     * client.
     *
     * @param signalConsumer told of recording signals (START, EXTEND, STOP, ...) when the owner polls for them, or
     *                       null.
     * @param errorHandler   told of errors the archive sends back asynchronously (a refused extension, ...), or null
     *                       to have them thrown from the poll.
     * @return the connected archive client.
     */
    public AeronArchive connectArchive(final RecordingSignalConsumer signalConsumer, final ErrorHandler errorHandler)
    {
        final AeronArchive.Context archiveContext = new AeronArchive.Context()
            .aeron(aeron)
            .ownsAeronClient(false)
            .controlRequestChannel(context.controlRequestChannel())
            .controlResponseChannel(context.controlResponseChannel())
            .errorHandler(errorHandler);
        if (null != signalConsumer)
        {
            archiveContext.recordingSignalConsumer(signalConsumer);
        }
        return AeronArchive.connect(archiveContext);
    }

    /** @return the Aeron client on the media driver that carries recordings and replays. */
    public Aeron aeron()
    {
        return aeron;
    }

    /**
     * @return the counters of the media driver this process uses; the archive's recording positions are among them
     * only when that driver is the archive's own ({@link #sharesArchiveDriver()}).
     */
    public CountersReader countersReader()
    {
        return aeron.countersReader();
    }

    /** @return true when this process's media driver is the archive's, so {@code aeron:ipc} reaches the archive. */
    public boolean sharesArchiveDriver()
    {
        return context.sharesArchiveDriver();
    }

    /** @return true when the archive was launched by this connection. */
    public boolean isEmbedded()
    {
        return null != archivingDriver;
    }

    /** @return the concluded context. */
    public Context context()
    {
        return context;
    }

    /** @return a new archive control session without a signal consumer; errors are thrown. */
    public AeronArchive connectArchive()
    {
        return connectArchive(null, null);
    }

    /** @return a one-line description for logs and the command line. */
    public String describe()
    {
        if (isEmbedded())
        {
            return "embedded Aeron Archive " + AeronArchiveVersion.VERSION + " dir=" + context.archiveDir() +
                " aeron-dir=" + context.aeronDir() +
                (null == context.controlChannel() ? "" : " control=" + context.controlChannel());
        }
        return "Aeron Archive at " + (null == context.controlChannel() ?
            "aeron-dir=" + context.aeronDir() : "control=" + context.controlChannel()) + " (client " +
            AeronArchiveVersion.VERSION + ")";
    }

    /** Closes the Aeron client, then whatever driver or archive this connection launched. */
    public void close()
    {
        CloseHelper.closeAll(aeron, archivingDriver, clientDriver);
    }

    /**
     * Configuration, Aeron-style: system-property defaults, fluent setters, validation in {@link #conclude()}.
     * <ul>
     *   <li>Embedded (default): launch an archive with its media driver in {@link #aeronDir()} and its files in
     *   {@link #archiveDir()}; control on IPC, plus UDP when {@link #controlChannel(String)} is set so that other
     *   hosts can reach it.</li>
     *   <li>Existing, same host: {@code launchArchive(false)} and the archive's driver dir as {@link #aeronDir()};
     *   control on IPC.</li>
     *   <li>Existing, remote: {@code launchArchive(false)}, its UDP {@link #controlChannel(String)}, a
     *   {@link #controlResponseChannel(String)} and UDP {@link #recordingChannel(String)} /
     *   {@link #replayChannel(String)} it can reach; a media driver is launched here for this process's client unless
     *   {@link #launchClientDriver(boolean)} is false and {@link #aeronDir()} names a running one.</li>
     * </ul>
     */
    public static final class Context
    {
        /** Property for {@link #archiveDir(String)}. */
        public static final String ARCHIVE_DIR_PROP_NAME = "verbus.archive.dir";

        /** Property for {@link #aeronDir(String)}. */
        public static final String AERON_DIR_PROP_NAME = "verbus.archive.aeron.dir";

        /** Property for {@link #controlChannel(String)}. */
        public static final String CONTROL_CHANNEL_PROP_NAME = "verbus.archive.control.channel";

        /** Property for {@link #recordingChannel(String)}. */
        public static final String RECORDING_CHANNEL_PROP_NAME = "verbus.archive.recording.channel";

        /** Property for {@link #replayChannel(String)}. */
        public static final String REPLAY_CHANNEL_PROP_NAME = "verbus.archive.replay.channel";

        /** Default archive dir: recordings are files, kept on disk, relative to the working directory like Aeron's. */
        public static final String ARCHIVE_DIR_DEFAULT = "verbus-archive";

        /** The IPC channel: recording and replay inside the archive's own media driver. */
        public static final String IPC_CHANNEL = "aeron:ipc";

        /** Replication is not used by Verbus, but the archive requires the channel. */
        public static final String REPLICATION_CHANNEL_DEFAULT = "aeron:udp?endpoint=localhost:0";

        /** Where control responses come back when the control channel is UDP. */
        public static final String UDP_RESPONSE_CHANNEL_DEFAULT = "aeron:udp?endpoint=localhost:0";

        /** Stream id replays are sent on (each replay is told apart by its session id). */
        public static final int REPLAY_STREAM_ID_DEFAULT = 0x5652_0001;

        /** Segment files of 128 MiB (Aeron's default); the archive raises it to the term length when that is larger. */
        public static final int SEGMENT_FILE_LENGTH_DEFAULT = 128 * 1024 * 1024;

        /**
         * How long the Aeron client waits for its media driver's heartbeat before it closes: how soon a recorder
         * notices that an archive it shares a driver with has died (Aeron's default).
         */
        public static final long DRIVER_TIMEOUT_MS_DEFAULT = 10_000;

        private boolean concluded;
        private boolean launchArchive = true;
        private boolean launchClientDriver = true;
        private boolean deleteArchiveOnStart;
        private String archiveDir = System.getProperty(ARCHIVE_DIR_PROP_NAME, ARCHIVE_DIR_DEFAULT);
        private String aeronDir = System.getProperty(AERON_DIR_PROP_NAME);
        private String controlChannel = System.getProperty(CONTROL_CHANNEL_PROP_NAME);
        private String controlResponseChannel;
        private String recordingChannel = System.getProperty(RECORDING_CHANNEL_PROP_NAME, IPC_CHANNEL);
        private String replayChannel = System.getProperty(REPLAY_CHANNEL_PROP_NAME, IPC_CHANNEL);
        private int replayStreamId = REPLAY_STREAM_ID_DEFAULT;
        private int segmentFileLength = SEGMENT_FILE_LENGTH_DEFAULT;
        private String idleStrategy = IdleStrategies.BACKOFF;
        private long driverTimeoutMs = DRIVER_TIMEOUT_MS_DEFAULT;
        private ErrorHandler errorHandler;

        /**
         * @return an unconcluded copy of these settings for connecting again (never deleting the archive on start).
         */
        public Context copy()
        {
            final Context copy = new Context();
            copy.launchArchive = launchArchive;
            copy.launchClientDriver = launchClientDriver;
            copy.deleteArchiveOnStart = false;
            copy.archiveDir = archiveDir;
            copy.aeronDir = aeronDir;
            copy.controlChannel = controlChannel;
            copy.controlResponseChannel = controlResponseChannel;
            copy.recordingChannel = recordingChannel;
            copy.replayChannel = replayChannel;
            copy.replayStreamId = replayStreamId;
            copy.segmentFileLength = segmentFileLength;
            copy.idleStrategy = idleStrategy;
            copy.driverTimeoutMs = driverTimeoutMs;
            copy.errorHandler = errorHandler;
            return copy;
        }

        /** @return the default media driver dir of an embedded archive: beside the Verbus default dir. */
        public static String defaultAeronDir()
        {
            final String user = System.getProperty("user.name", "default");
            final Path shm = Path.of("/dev/shm");
            final Path base = shm.toFile().isDirectory() ? shm : Path.of(System.getProperty("java.io.tmpdir"));
            return base.resolve("verbus-archive-" + user + "-aeron").toString();
        }

        /**
         * Fills defaults and validates.
         *
         * @return this.
         * @throws IllegalArgumentException naming the setting that is invalid.
         */
        public Context conclude()
        {
            if (concluded)
            {
                throw new IllegalStateException("context already concluded: use a new Context per connection");
            }
            if (null == aeronDir)
            {
                // A client driver of our own must not land on an embedded archive's driver dir.
                final boolean ownClientDriver = !launchArchive && null != controlChannel && launchClientDriver;
                aeronDir = ownClientDriver ? defaultAeronDir() + "-client-" + ProcessHandle.current().pid() :
                    defaultAeronDir();
            }
            if (launchArchive && (null == archiveDir || archiveDir.isBlank()))
            {
                throw new IllegalArgumentException("archiveDir must be set for an embedded archive");
            }
            checkAeronChannel(recordingChannel, "recordingChannel");
            checkAeronChannel(replayChannel, "replayChannel");
            if (null != controlChannel)
            {
                checkAeronChannel(controlChannel, "controlChannel");
                if (!controlChannel.startsWith("aeron:udp"))
                {
                    throw new IllegalArgumentException(
                        "controlChannel must be an aeron:udp channel: " + controlChannel);
                }
            }
            if (null == controlResponseChannel)
            {
                controlResponseChannel = sharesArchiveDriver() ? IPC_CHANNEL : UDP_RESPONSE_CHANNEL_DEFAULT;
            }
            if (segmentFileLength < 64 * 1024 || Integer.bitCount(segmentFileLength) != 1)
            {
                throw new IllegalArgumentException("segmentFileLength must be a power of two of at least 64k: " +
                    segmentFileLength);
            }
            IdleStrategies.checkName(idleStrategy);
            if (null == errorHandler)
            {
                errorHandler = (throwable) -> System.getLogger(ArchiveConnection.class.getName())
                    .log(System.Logger.Level.WARNING, "archive connection error", throwable);
            }
            concluded = true;
            return this;
        }

        private static void checkAeronChannel(final String channel, final String name)
        {
            try
            {
                io.aeron.ChannelUri.parse(channel);
            }
            catch (final RuntimeException ex)
            {
                throw new IllegalArgumentException(name + " '" + channel + "' is not an Aeron channel: " +
                    ex.getMessage(), ex);
            }
        }

        /** @return true when this process's client uses the archive's own media driver (embedded or same host). */
        public boolean sharesArchiveDriver()
        {
            return launchArchive || null == controlChannel;
        }

        /** @return the control channel the archive client sends requests on: IPC when it shares the driver. */
        String controlRequestChannel()
        {
            return sharesArchiveDriver() ? IPC_CHANNEL : controlChannel;
        }

        /** @return true to launch an archive here (the default). */
        public boolean launchArchive()
        {
            return launchArchive;
        }

        /** @return this. */
        public Context launchArchive(final boolean launchArchive)
        {
            this.launchArchive = launchArchive;
            return this;
        }

        /** @return true to launch a plain media driver for this process's client (remote archive only). */
        public boolean launchClientDriver()
        {
            return launchClientDriver;
        }

        /** @return this. */
        public Context launchClientDriver(final boolean launchClientDriver)
        {
            this.launchClientDriver = launchClientDriver;
            return this;
        }

        /** @return true to delete the embedded archive's files on start (tests). */
        public boolean deleteArchiveOnStart()
        {
            return deleteArchiveOnStart;
        }

        /** @return this. */
        public Context deleteArchiveOnStart(final boolean deleteArchiveOnStart)
        {
            this.deleteArchiveOnStart = deleteArchiveOnStart;
            return this;
        }

        /** @return the embedded archive's dir: catalog, segment files, mark file. */
        public String archiveDir()
        {
            return archiveDir;
        }

        /** @return this. */
        public Context archiveDir(final String archiveDir)
        {
            this.archiveDir = archiveDir;
            return this;
        }

        /** @return the media driver dir: launched here, or the running driver to connect to. */
        public String aeronDir()
        {
            return aeronDir;
        }

        /** @return this. */
        public Context aeronDir(final String aeronDir)
        {
            this.aeronDir = aeronDir;
            return this;
        }

        /**
         * @return the archive's UDP control channel: the one an embedded archive opens, or the one an existing
         * remote archive listens on; null for IPC control only.
         */
        public String controlChannel()
        {
            return controlChannel;
        }

        /** @return this. */
        public Context controlChannel(final String controlChannel)
        {
            this.controlChannel = controlChannel;
            return this;
        }

        /** @return where control responses come back. */
        public String controlResponseChannel()
        {
            return controlResponseChannel;
        }

        /** @return this. */
        public Context controlResponseChannel(final String controlResponseChannel)
        {
            this.controlResponseChannel = controlResponseChannel;
            return this;
        }

        /** @return the channel recording publications use: {@code aeron:ipc} or a UDP endpoint the archive reads. */
        public String recordingChannel()
        {
            return recordingChannel;
        }

        /** @return this. */
        public Context recordingChannel(final String recordingChannel)
        {
            this.recordingChannel = recordingChannel;
            return this;
        }

        /** @return where the archive records from: LOCAL for IPC, REMOTE for a network channel. */
        public SourceLocation recordingSourceLocation()
        {
            return recordingChannel.startsWith(IPC_CHANNEL) ? SourceLocation.LOCAL : SourceLocation.REMOTE;
        }

        /** @return the channel replays come back on: {@code aeron:ipc} or a UDP endpoint of this host. */
        public String replayChannel()
        {
            return replayChannel;
        }

        /** @return this. */
        public Context replayChannel(final String replayChannel)
        {
            this.replayChannel = replayChannel;
            return this;
        }

        /** @return the stream id replays arrive on. */
        public int replayStreamId()
        {
            return replayStreamId;
        }

        /** @return this. */
        public Context replayStreamId(final int replayStreamId)
        {
            this.replayStreamId = replayStreamId;
            return this;
        }

        /** @return the embedded archive's segment file length. */
        public int segmentFileLength()
        {
            return segmentFileLength;
        }

        /** @return this. */
        public Context segmentFileLength(final int segmentFileLength)
        {
            this.segmentFileLength = segmentFileLength;
            return this;
        }

        /** @return the idle strategy name of launched drivers and archives. */
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

        /** @return the Aeron client's driver timeout in milliseconds. */
        public long driverTimeoutMs()
        {
            return driverTimeoutMs;
        }

        /** @return this. */
        public Context driverTimeoutMs(final long driverTimeoutMs)
        {
            this.driverTimeoutMs = driverTimeoutMs;
            return this;
        }

        /** @return the error handler of the Aeron client, driver and archive. */
        public ErrorHandler errorHandler()
        {
            return errorHandler;
        }

        /** @return this. */
        public Context errorHandler(final ErrorHandler errorHandler)
        {
            this.errorHandler = errorHandler;
            return this;
        }
    }
}
