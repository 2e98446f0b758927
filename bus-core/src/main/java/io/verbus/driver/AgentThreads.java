package io.verbus.driver;

import io.verbus.ThreadingMode;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Starts the driver's agents per the threading mode: DEDICATED (one runner per agent, each pinned to its own CPU
 * if set), SHARED (one runner over a composite agent, pinned to the conductor CPU), or INVOKER (no thread; an
 * {@link AgentInvoker} the application calls; pinning does not apply to the application's thread).
 * <p>
 * A composite runs the sender first, then the receiver, then the conductor: what the application appended since the
 * last cycle leaves before the conductor's commands and housekeeping, which nothing on the data path waits for. Ahead
 * of them all goes the {@link DutyCycleClock}, so the cycle reads the clock once.
 */
public final class AgentThreads implements AutoCloseable
{
    /** How long launch waits for agent threads to start (and pin). */
    public static final long START_TIMEOUT_MS = 10_000;

    private final List<AgentRunner> runners = new ArrayList<>();
    private final AgentInvoker invoker;

    /**
     * @param mode             the threading mode.
     * @param idleStrategyName for every runner (a new instance each).
     * @param errorHandler     for agent errors.
     * @param conductor        the conductor agent.
     * @param sender           the sender agent.
     * @param receiver         the receiver agent.
     * @param conductorCpu     CPU of the conductor (or the shared thread), -1 for none.
     * @param senderCpu        CPU of the sender thread in DEDICATED mode, -1 for none.
     * @param receiverCpu      CPU of the receiver thread in DEDICATED mode, -1 for none.
     * @param dutyCycleClock   run first in a composite (SHARED, INVOKER); unused in DEDICATED mode, may be null there.
     * @throws IllegalStateException when a thread cannot start or be pinned; started threads are stopped again.
     */
    public AgentThreads(
        final ThreadingMode mode,
        final String idleStrategyName,
        final ErrorHandler errorHandler,
        final Agent conductor,
        final Agent sender,
        final Agent receiver,
        final int conductorCpu,
        final int senderCpu,
        final int receiverCpu,
        final DutyCycleClock dutyCycleClock)
    {
        switch (mode)
        {
            case DEDICATED ->
            {
                invoker = null;
                final List<PinnedAgent> pinned = List.of(
                    new PinnedAgent(conductor, conductorCpu),
                    new PinnedAgent(sender, senderCpu),
                    new PinnedAgent(receiver, receiverCpu));
                start(pinned, idleStrategyName, errorHandler);
            }
            case SHARED ->
            {
                invoker = null;
                final PinnedAgent shared = new PinnedAgent(
                    new CompositeAgent(dutyCycleClock, sender, receiver, conductor), conductorCpu);
                start(List.of(shared), idleStrategyName, errorHandler);
            }
            case INVOKER ->
            {
                invoker = new AgentInvoker(
                    errorHandler, null, new CompositeAgent(dutyCycleClock, sender, receiver, conductor));
                invoker.start();
            }
            default -> throw new IllegalArgumentException("unknown threading mode " + mode);
        }
    }

    private void start(final List<PinnedAgent> agents, final String idleStrategyName, final ErrorHandler errorHandler)
    {
        try
        {
            for (final PinnedAgent agent : agents)
            {
                final AgentRunner runner = new AgentRunner(
                    IdleStrategies.newIdleStrategy(idleStrategyName), errorHandler, null, agent);
                runners.add(runner);
                AgentRunner.startOnThread(runner);
            }
            for (final PinnedAgent agent : agents)
            {
                agent.awaitStart(START_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            }
        }
        catch (final RuntimeException ex)
        {
            close();
            throw ex;
        }
    }

    /** @return the invoker in INVOKER mode, else null. */
    public AgentInvoker invoker()
    {
        return invoker;
    }

    /** @return the runners (empty in INVOKER mode). */
    public List<AgentRunner> runners()
    {
        return runners;
    }

    /** Stops the threads (or the invoker), which closes the agents on their own threads. */
    public void close()
    {
        CloseHelper.closeAll(runners);
        CloseHelper.close(invoker);
    }
}
