package io.verbus.aeron;

import io.aeron.Aeron;
import io.aeron.driver.MediaDriver;
import io.verbus.AvailableImageHandler;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.UnavailableImageHandler;
import io.verbus.driver.IdleStrategies;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentInvoker;

import java.nio.file.Path;

/**
 * A real Aeron media driver and client embedded in a Verbus, serving {@code aeron:ipc} and {@code aeron:udp}
 * channels behind the Verbus interfaces. Started on first use, with its dir inside the Verbus dir, the Verbus
 * threading mode and idle strategy, and the Verbus term length (Aeron's 64 MiB IPC default would map 192 MiB per
 * stream).
 */
public final class EmbeddedAeron implements AutoCloseable
{
    /** Name of the Aeron dir inside the Verbus dir. */
    public static final String AERON_DIR_NAME = "aeron";

    private final MediaDriver driver;
    private final Aeron aeron;
    private final AgentInvoker driverInvoker;
    private final AgentInvoker clientInvoker;

    /**
     * Launches the driver and connects a client.
     *
     * @param verbusDir        the Verbus dir.
     * @param threadingMode    the Verbus threading mode, mapped onto Aeron's.
     * @param idleStrategyName for every Aeron agent.
     * @param termLength       for IPC and network publications.
     * @param errorHandler     for driver and client errors.
     */
    public EmbeddedAeron(
        final Path verbusDir,
        final ThreadingMode threadingMode,
        final String idleStrategyName,
        final int termLength,
        final ErrorHandler errorHandler)
    {
        final String aeronDir = verbusDir.resolve(AERON_DIR_NAME).toString();
        final MediaDriver.Context driverContext = new MediaDriver.Context()
            .aeronDirectoryName(aeronDir)
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
            .errorHandler(errorHandler);

        MediaDriver launchedDriver = null;
        try
        {
            launchedDriver = MediaDriver.launchEmbedded(driverContext);
            final Aeron.Context clientContext = new Aeron.Context()
                .aeronDirectoryName(launchedDriver.aeronDirectoryName())
                .idleStrategy(IdleStrategies.newIdleStrategy(idleStrategyName))
                .errorHandler(errorHandler);
            if (ThreadingMode.INVOKER == threadingMode)
            {
                clientContext.useConductorAgentInvoker(true).driverAgentInvoker(launchedDriver.sharedAgentInvoker());
            }
            this.aeron = Aeron.connect(clientContext);
            this.driver = launchedDriver;
            this.driverInvoker = launchedDriver.sharedAgentInvoker();
            this.clientInvoker = aeron.conductorAgentInvoker();
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(launchedDriver);
            throw ex;
        }
    }

    /**
     * @return a publication; the Aeron client checks the channel and throws for bad ones.
     */
    public Publication addPublication(final String channel, final int streamId, final boolean exclusive)
    {
        final io.aeron.Publication publication = exclusive ?
            aeron.addExclusivePublication(channel, streamId) : aeron.addPublication(channel, streamId);
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
        adapter.subscription(
            aeron.addSubscription(channel, streamId, adapter::onAvailableImage, adapter::onUnavailableImage));
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

    /** @return the Aeron dir. */
    public String aeronDirectoryName()
    {
        return driver.aeronDirectoryName();
    }

    /** Closes the client, then the driver (which deletes its dir). */
    public void close()
    {
        CloseHelper.closeAll(aeron, driver);
    }
}
