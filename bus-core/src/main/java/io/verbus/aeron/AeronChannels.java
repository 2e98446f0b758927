package io.verbus.aeron;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.aeron.exceptions.DriverTimeoutException;
import io.verbus.AvailableImageHandler;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.UnavailableImageHandler;
import io.verbus.common.InterruptImmuneIo;
import io.verbus.driver.IdleStrategies;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentInvoker;

import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * The Aeron client that serves a Verbus's {@code aeron:ipc} and {@code aeron:udp} channels behind the Verbus
 * interfaces, connected to an Aeron media driver in one of two ways:
 * <ul>
 *   <li>{@link #launchEmbedded}: a driver embedded in this Verbus (the default), started on first use with its dir
 *   inside the Verbus dir, the Verbus threading mode and idle strategy, and the Verbus term length (Aeron's 64 MiB IPC
 *   default would map 192 MiB per stream). A standalone Verbus driver runs one for its clients with
 *   {@link #launchDriver}, without a client of its own.</li>
 *   <li>{@link #connect}: a driver that runs elsewhere on the host, shared with other Aeron clients, Aeron's own
 *   model: the standalone Verbus driver's, or any Aeron media driver named by
 *   {@code Verbus.Context.aeronDirectoryName}. Its settings (term length, threading) are that driver's own.</li>
 * </ul>
 * Whoever owns the driver closes it; a connected client only closes itself. A driver that dies under a connected
 * client is found by Aeron's own liveness check: after the client's driver timeout its error handler gets a
 * {@code DriverTimeoutException} and every Aeron publication and subscription of it closes.
 */
public final class AeronChannels implements AutoCloseable
{
    /** Name of the Aeron dir inside the Verbus dir. */
    public static final String AERON_DIR_NAME = "aeron";

    /** Longest interval between an Aeron client's keepalives, Aeron's default. */
    private static final long MAX_KEEPALIVE_INTERVAL_NS = TimeUnit.MILLISECONDS.toNanos(500);

    private final MediaDriver driver;
    private final Aeron aeron;
    private final AgentInvoker driverInvoker;
    private final AgentInvoker clientInvoker;

    private AeronChannels(final MediaDriver driver, final Aeron aeron)
    {
        this.driver = driver;
        this.aeron = aeron;
        this.driverInvoker = null == driver ? null : driver.sharedAgentInvoker();
        this.clientInvoker = aeron.conductorAgentInvoker();
    }

    /**
     * Launches a driver in {@code <verbusDir>/aeron} and connects a client to it.
     *
     * @param verbusDir        the Verbus dir.
     * @param threadingMode    the Verbus threading mode, mapped onto Aeron's.
     * @param idleStrategyName for every Aeron agent.
     * @param termLength       for IPC and network publications.
     * @param driverTimeoutMs  the client's driver timeout.
     * @param errorHandler     for driver and client errors.
     * @return the running driver and its client.
     */
    public static AeronChannels launchEmbedded(
        final Path verbusDir,
        final ThreadingMode threadingMode,
        final String idleStrategyName,
        final int termLength,
        final long driverTimeoutMs,
        final ErrorHandler errorHandler)
    {
        MediaDriver launchedDriver = null;
        try
        {
            launchedDriver = launchDriver(verbusDir, threadingMode, idleStrategyName, termLength, errorHandler);
            final Aeron.Context clientContext =
                clientContext(launchedDriver.aeronDirectoryName(), idleStrategyName, driverTimeoutMs, errorHandler);
            if (ThreadingMode.INVOKER == threadingMode)
            {
                clientContext.useConductorAgentInvoker(true).driverAgentInvoker(launchedDriver.sharedAgentInvoker());
            }
            return new AeronChannels(launchedDriver, Aeron.connect(clientContext));
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(launchedDriver);
            throw ex;
        }
    }

    /**
     * Launches an Aeron media driver in {@code <verbusDir>/aeron} with no client of its own: the embedded one, or the
     * one a standalone Verbus driver runs for its clients (whose own Aeron clients connect to it).
     *
     * @param verbusDir        the Verbus dir.
     * @param threadingMode    the Verbus threading mode, mapped onto Aeron's.
     * @param idleStrategyName for every Aeron agent.
     * @param termLength       for IPC and network publications.
     * @param errorHandler     for driver errors.
     * @return the running driver; its dir is deleted when it closes.
     */
    public static MediaDriver launchDriver(
        final Path verbusDir,
        final ThreadingMode threadingMode,
        final String idleStrategyName,
        final int termLength,
        final ErrorHandler errorHandler)
    {
        return MediaDriver.launchEmbedded(new MediaDriver.Context()
            .aeronDirectoryName(verbusDir.resolve(AERON_DIR_NAME).toString())
            .dirDeleteOnStart(true)
            .dirDeleteOnShutdown(true)
            .warnIfDirectoryExists(false)
            .threadingMode(switch (threadingMode)
            {
                case DEDICATED -> io.aeron.driver.ThreadingMode.DEDICATED;
                case SHARED -> io.aeron.driver.ThreadingMode.SHARED;
                case INVOKER -> io.aeron.driver.ThreadingMode.INVOKER;
            })
            .conductorIdleStrategy(IdleStrategies.newIdleStrategy(idleStrategyName))
            .senderIdleStrategy(IdleStrategies.newIdleStrategy(idleStrategyName))
            .receiverIdleStrategy(IdleStrategies.newIdleStrategy(idleStrategyName))
            .sharedNetworkIdleStrategy(IdleStrategies.newIdleStrategy(idleStrategyName))
            .sharedIdleStrategy(IdleStrategies.newIdleStrategy(idleStrategyName))
            .ipcTermBufferLength(termLength)
            .publicationTermBufferLength(termLength)
            .errorHandler(errorHandler));
    }

    /**
     * Connects a client to an Aeron media driver that is already running, as any Aeron client does.
     *
     * @param aeronDir         the driver's Aeron dir.
     * @param threadingMode    INVOKER: the client's conductor runs in {@link #invoke()}; else on its own thread.
     * @param idleStrategyName for the client's conductor thread.
     * @param driverTimeoutMs  how long to wait for the driver now, and how old its heartbeat may get later.
     * @param errorHandler     for client errors, and the {@code DriverTimeoutException} of a driver that died.
     * @return the connected client.
     * @throws IllegalStateException naming the dir, with Aeron's {@link DriverTimeoutException} as the cause, when no
     *                               live driver answers there within the timeout.
     */
    public static AeronChannels connect(
        final String aeronDir,
        final ThreadingMode threadingMode,
        final String idleStrategyName,
        final long driverTimeoutMs,
        final ErrorHandler errorHandler)
    {
        final Aeron.Context clientContext = clientContext(aeronDir, idleStrategyName, driverTimeoutMs, errorHandler);
        if (ThreadingMode.INVOKER == threadingMode)
        {
            clientContext.useConductorAgentInvoker(true);
        }
        try
        {
            return new AeronChannels(null, Aeron.connect(clientContext));
        }
        catch (final DriverTimeoutException ex)
        {
            throw new IllegalStateException("no live Aeron media driver at " + aeronDir + " (nothing answered within " +
                driverTimeoutMs + " ms): start one there, or leave aeronDirectoryName (verbus.aeron.dir, " +
                "--aeron-dir) unset for Verbus's own", ex);
        }
    }

    private static Aeron.Context clientContext(
        final String aeronDir, final String idleStrategyName, final long driverTimeoutMs, final ErrorHandler handler)
    {
        // Aeron wants keepalives well within the driver timeout; Verbus allows timeouts down to 100 ms.
        final long keepAliveIntervalNs =
            Math.min(MAX_KEEPALIVE_INTERVAL_NS, TimeUnit.MILLISECONDS.toNanos(driverTimeoutMs) / 4);
        return new Aeron.Context()
            .aeronDirectoryName(aeronDir)
            .idleStrategy(IdleStrategies.newIdleStrategy(idleStrategyName))
            .driverTimeoutMs(driverTimeoutMs)
            .keepAliveIntervalNs(keepAliveIntervalNs)
            .errorHandler(handler);
    }

    /**
     * @return a publication; the Aeron client checks the channel and throws for bad ones.
     */
    public Publication addPublication(final String channel, final int streamId, final boolean exclusive)
    {
        // Aeron's client maps the new log through a FileChannel on this thread, which an interrupt would close: the
        // add failed with ClosedByInterruptException on a thread whose interrupt flag was set (InterruptImmuneIo).
        final io.aeron.Publication publication = InterruptImmuneIo.withInterruptCleared(() -> exclusive ?
            aeron.addExclusivePublication(channel, streamId) : aeron.addPublication(channel, streamId));
        return new AeronPublicationAdapter(publication, channel);
    }

    /** @return an exclusive publication. */
    public ExclusivePublication addExclusivePublication(final String channel, final int streamId)
    {
        return (ExclusivePublication)addPublication(channel, streamId, true);
    }

    /** @return a subscription whose image events reach the Verbus handlers with Verbus image wrappers. */
    public Subscription addSubscription(
        final String channel,
        final int streamId,
        final AvailableImageHandler availableImageHandler,
        final UnavailableImageHandler unavailableImageHandler)
    {
        final AeronSubscriptionAdapter adapter =
            new AeronSubscriptionAdapter(channel, availableImageHandler, unavailableImageHandler);
        adapter.subscription(InterruptImmuneIo.withInterruptCleared(() ->
            aeron.addSubscription(channel, streamId, adapter::onAvailableImage, adapter::onUnavailableImage)));
        return adapter;
    }

    /** @return work done by the driver and client invokers in INVOKER mode, else 0. */
    public int invoke()
    {
        int work = 0;
        if (null != driverInvoker)
        {
            work += driverInvoker.invoke();
        }
        if (null != clientInvoker)
        {
            work += clientInvoker.invoke();
        }
        return work;
    }

    /** @return the Aeron client. */
    public Aeron aeron()
    {
        return aeron;
    }

    /** @return the Aeron dir of the driver this client is connected to. */
    public String aeronDirectoryName()
    {
        return aeron.context().aeronDirectoryName();
    }

    /** @return true when this Verbus launched the driver, false when the client connected to a running one. */
    public boolean ownsDriver()
    {
        return null != driver;
    }

    /** @return true once the client is closed: by {@link #close()}, or by Aeron when its driver timed out. */
    public boolean isClosed()
    {
        return aeron.isClosed();
    }

    /** Closes the client, then the driver if this Verbus launched it (which deletes its dir). */
    public void close()
    {
        CloseHelper.closeAll(aeron, driver);
    }
}
