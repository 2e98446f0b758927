package io.verbus.gateway;

import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.driver.Affinity;
import io.verbus.driver.IdleStrategies;
import io.verbus.gateway.GatewayConfig.Part;
import io.verbus.gateway.feed.FeedHandler;
import io.verbus.gateway.orders.OrderGateway;
import io.verbus.gateway.strategy.Strategy;
import org.HdrHistogram.Recorder;
import org.agrona.CloseHelper;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.Agent;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.CompositeAgent;
import org.agrona.concurrent.NanoClock;
import org.agrona.concurrent.SystemNanoClock;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The parts of the gateway this process runs, wired to their channels on one embedded Verbus and running on agent
 * threads: all parts taking turns on one thread ({@code --threads shared}, the default, one spinning thread at most),
 * or one thread each. Subscriptions are added before publications so that in-process channels connect at once.
 */
public final class Gateway implements AutoCloseable
{
    private static final long CLOSE_POLL_NS = TimeUnit.MILLISECONDS.toNanos(10);

    private final GatewayConfig config;
    private final Verbus verbus;
    private final FeedHandler feed;
    private final Strategy strategy;
    private final OrderGateway orderGateway;
    private final List<AgentRunner> runners = new ArrayList<>();
    private volatile boolean closed;

    private Gateway(
        final GatewayConfig config,
        final Verbus verbus,
        final FeedHandler feed,
        final Strategy strategy,
        final OrderGateway orderGateway)
    {
        this.config = config;
        this.verbus = verbus;
        this.feed = feed;
        this.strategy = strategy;
        this.orderGateway = orderGateway;
    }

    /**
     * Launch Verbus, add the channels of the parts this process runs, and start their agents.
     *
     * @param config       of the run.
     * @param tickToTrade  recorder the strategy records into (unused when this process runs no strategy).
     * @param errorHandler told of agent errors.
     * @return the running gateway.
     */
    public static Gateway launch(
        final GatewayConfig config, final Recorder tickToTrade, final ErrorHandler errorHandler)
    {
        final Verbus verbus = Verbus.launch(new Verbus.Context()
            .dir(config.verbusDir())
            .threadingMode(config.driverInvoked() ? ThreadingMode.INVOKER : ThreadingMode.SHARED)
            .idleStrategy(config.driverIdleStrategy())
            .conductorCpu(config.driverCpu())
            .senderCpu(config.driverCpu())
            .receiverCpu(config.driverCpu()));
        try
        {
            final NanoClock clock = SystemNanoClock.INSTANCE;
            final int md = GatewayConfig.MARKET_DATA_STREAM_ID;
            final int orders = GatewayConfig.ORDER_STREAM_ID;
            final int reports = GatewayConfig.REPORT_STREAM_ID;

            final Subscription mdSubscription = config.runs(Part.STRATEGY) ?
                verbus.addSubscription(config.channel(md, false), md) : null;
            final Subscription orderSubscription = config.runs(Part.ORDERS) ?
                verbus.addSubscription(config.channel(orders, false), orders) : null;
            final Subscription reportSubscription = config.runs(Part.STRATEGY) ?
                verbus.addSubscription(config.channel(reports, false), reports) : null;

            FeedHandler feed = null;
            if (config.runs(Part.FEED))
            {
                final ExclusivePublication publication = verbus.addExclusivePublication(config.channel(md, true), md);
                feed = new FeedHandler(publication, clock, config.instruments(), config.depth(),
                    config.ratePerSecond(), config.maxBurst(), config.seed());
            }
            OrderGateway orderGateway = null;
            if (config.runs(Part.ORDERS))
            {
                final ExclusivePublication publication =
                    verbus.addExclusivePublication(config.channel(reports, true), reports);
                orderGateway = new OrderGateway(orderSubscription, publication, clock, config.instruments(),
                    config.maxOrderQty(), config.positionLimit(), config.fillPercent(), config.seed() + 1);
            }
            Strategy strategy = null;
            if (config.runs(Part.STRATEGY))
            {
                final ExclusivePublication publication =
                    verbus.addExclusivePublication(config.channel(orders, true), orders);
                strategy = new Strategy(mdSubscription, publication, reportSubscription, clock, tickToTrade,
                    config.instruments(), config.depth(), config.imbalancePercent(), config.maxOrderQty());
            }

            final Gateway gateway = new Gateway(config, verbus, feed, strategy, orderGateway);
            gateway.start(errorHandler);
            return gateway;
        }
        catch (final RuntimeException ex)
        {
            CloseHelper.quietClose(verbus);
            throw ex;
        }
    }

    private void start(final ErrorHandler errorHandler)
    {
        final List<Agent> agents = new ArrayList<>();
        final List<Integer> cpus = new ArrayList<>();
        if (null != feed)
        {
            agents.add(feed);
            cpus.add(config.cpu(Part.FEED));
        }
        if (null != strategy)
        {
            agents.add(strategy);
            cpus.add(config.cpu(Part.STRATEGY));
        }
        if (null != orderGateway)
        {
            agents.add(orderGateway);
            cpus.add(config.cpu(Part.ORDERS));
        }

        if (config.driverInvoked())
        {
            agents.add(new DriverInvokerAgent(verbus));
        }

        if (config.dedicatedThreads())
        {
            for (int i = 0; i < agents.size(); i++)
            {
                startRunner(agents.get(i), cpus.get(i), errorHandler);
            }
        }
        else
        {
            final Agent shared = agents.size() == 1 ? agents.get(0) : new CompositeAgent(agents);
            startRunner(shared, config.partsCpu(), errorHandler);
        }
    }

    private void startRunner(final Agent agent, final int cpu, final ErrorHandler errorHandler)
    {
        final AgentRunner runner = new AgentRunner(
            IdleStrategies.newIdleStrategy(config.idleStrategy()), errorHandler, null, agent);
        runners.add(runner);
        AgentRunner.startOnThread(runner, task -> new Thread(() ->
        {
            if (cpu != Affinity.NO_CPU)
            {
                Affinity.pinCurrentThread(cpu);
            }
            task.run();
        }, "gateway-" + agent.roleName()));
    }

    /** Stop generating market data and sending new orders; answers in flight still flow. Any thread. */
    public void quiesce()
    {
        if (null != feed)
        {
            feed.stopPublishing();
        }
        if (null != strategy)
        {
            strategy.stopTrading();
        }
    }

    /**
     * After {@link #quiesce()}: wait until the strategy has run a duty cycle since the stop (before that it may still
     * send an order it decided on, and its published counters lag a cycle) and has no request in flight.
     *
     * @param timeoutNs longest wait.
     * @return true when nothing is in flight (always true without a strategy in this process).
     * @throws InterruptedException when interrupted.
     */
    public boolean awaitNothingInFlight(final long timeoutNs) throws InterruptedException
    {
        if (null == strategy)
        {
            return true;
        }
        final long deadlineNs = System.nanoTime() + timeoutNs;
        while (!strategy.isQuiescent() || strategy.counters().get(Strategy.IN_FLIGHT) != 0)
        {
            if (System.nanoTime() - deadlineNs > 0)
            {
                return false;
            }
            TimeUnit.NANOSECONDS.sleep(CLOSE_POLL_NS);
        }
        return true;
    }

    /** @return the feed, or null when this process does not run it. */
    public FeedHandler feed()
    {
        return feed;
    }

    /** @return the strategy, or null when this process does not run it. */
    public Strategy strategy()
    {
        return strategy;
    }

    /** @return the order gateway, or null when this process does not run it. */
    public OrderGateway orderGateway()
    {
        return orderGateway;
    }

    /** @return the embedded Verbus. */
    public Verbus verbus()
    {
        return verbus;
    }

    /** Stop the agent threads (joining them), then close Verbus. Idempotent, any thread. */
    @Override
    public synchronized void close()
    {
        if (!closed)
        {
            closed = true;
            CloseHelper.closeAll(runners);
            CloseHelper.close(verbus);
        }
    }

    /** @return true once closed. */
    public boolean isClosed()
    {
        return closed;
    }
}
