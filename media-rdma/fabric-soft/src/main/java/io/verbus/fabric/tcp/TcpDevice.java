package io.verbus.fabric.tcp;

import io.verbus.common.AtomicBudget;
import io.verbus.fabric.DeviceAttributes;
import io.verbus.fabric.DeviceMemory;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FabricException;
import io.verbus.fabric.IpGid;
import io.verbus.fabric.LinkLayer;
import io.verbus.fabric.PortAttributes;
import io.verbus.fabric.PortState;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.soft.SoftDevice;
import io.verbus.fabric.soft.SoftProtectionDomain;
import io.verbus.fabric.soft.SoftQueuePair;
import org.agrona.ErrorHandler;
import org.agrona.concurrent.AgentRunner;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.BusySpinIdleStrategy;
import org.agrona.concurrent.IdleStrategy;
import org.agrona.concurrent.YieldingIdleStrategy;

import java.io.IOException;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A tcp device: a listening socket on {@link FabricContext#tcpAddress()} (its port is the port's LID, its
 * address the GID) and one NIC thread, an Agrona agent. The data path runs mostly on the application's threads
 * (see {@link TcpQueuePair}); the NIC thread busy-spins and joins in only when the host has CPUs to spare
 * ({@link FabricContext#TCP_IDLE_AUTO}), else it backs off to parks of up to
 * {@link FabricContext#tcpIdleMaxParkNs()} and serves as the fallback.
 */
public final class TcpDevice extends SoftDevice
{
    /** Inline capacity offered. */
    public static final int MAX_INLINE_DATA = 256;
    /** Largest payload of one WR. */
    public static final int MAX_MESSAGE_LENGTH = 16 << 20;

    /** NIC threads of this process that busy-spin: {@link FabricContext#TCP_IDLE_AUTO} spins within a budget. */
    private static final AtomicInteger SPINNING_NICS = new AtomicInteger();
    private static final int BACKOFF_SPINS = 20;
    private static final int BACKOFF_YIELDS = 10;

    private final DeviceMemory memory = new DeviceMemory();
    private final long connectTimeoutNs;
    private final long coalesceNs;
    private final long fallbackGraceNs;
    private final boolean countedAsSpinning;
    private final TcpNic nic;
    private final AgentRunner runner;

    private TcpDevice(
        final String name, final FabricContext context, final ServerSocketChannel server, final InetSocketAddress bound)
    {
        super(attributes(name, bound), context);
        this.connectTimeoutNs = context.tcpConnectTimeoutNs();
        this.coalesceNs = context.tcpCoalesceNs();
        this.fallbackGraceNs = context.tcpFallbackGraceNs();
        final IdleStrategy idleStrategy;
        boolean spinning = false;
        if (null != context.tcpIdleStrategySupplier())
        {
            idleStrategy = context.tcpIdleStrategySupplier().get();
        }
        else
        {
            spinning = switch (context.tcpIdleStrategy())
            {
                case FabricContext.TCP_IDLE_BUSY_SPIN -> true;
                case FabricContext.TCP_IDLE_AUTO -> claimSpinningBudget(Runtime.getRuntime().availableProcessors());
                default -> false;
            };
            idleStrategy = spinning ? new BusySpinIdleStrategy() :
                FabricContext.TCP_IDLE_YIELDING.equals(context.tcpIdleStrategy()) ? new YieldingIdleStrategy() :
                new BackoffIdleStrategy(BACKOFF_SPINS, BACKOFF_YIELDS, TimeUnit.MICROSECONDS.toNanos(1),
                    context.tcpIdleMaxParkNs());
        }
        this.countedAsSpinning = spinning && FabricContext.TCP_IDLE_AUTO.equals(context.tcpIdleStrategy()) &&
            null == context.tcpIdleStrategySupplier();
        this.nic = new TcpNic(this, server, context, idleStrategy instanceof BusySpinIdleStrategy);
        this.runner = new AgentRunner(idleStrategy, context.errorHandler(), null, nic);
        AgentRunner.startOnThread(runner);
    }

    /**
     * One more spinning NIC thread if the process's spinning NIC threads, with it, leave at least half of the CPUs
     * beyond two to the application: none on 2 CPUs, one on 4, three on 8.
     */
    private static boolean claimSpinningBudget(final int cpus)
    {
        return AtomicBudget.tryTake(SPINNING_NICS, Math.max(0, (cpus - 2) / 2));
    }

    static TcpDevice open(final String name, final FabricContext context)
    {
        final InetAddress address = context.resolveTcpAddress();
        ServerSocketChannel server = null;
        try
        {
            server = ServerSocketChannel.open();
            final InetSocketAddress bound = TcpNic.bind(server, address);
            return new TcpDevice(name, context, server, bound);
        }
        catch (final IOException ex)
        {
            if (null != server)
            {
                try
                {
                    server.close();
                }
                catch (final IOException ignore)
                {
                    // reporting the first failure
                }
            }
            throw new FabricException("tcp device cannot listen on " + address.getHostAddress() + ": " + ex, ex);
        }
    }

    private static DeviceAttributes attributes(final String name, final InetSocketAddress bound)
    {
        final byte[] gid = IpGid.of(bound.getAddress());
        return new DeviceAttributes(
            name,
            TcpFabricProvider.NAME,
            4096,
            16384,
            1 << 20,
            MAX_INLINE_DATA,
            MAX_MESSAGE_LENGTH,
            1L << 40,
            true,
            List.of(new PortAttributes(1, PortState.ACTIVE, LinkLayer.ETHERNET, bound.getPort(), gid, 0, 4096)));
    }

    TcpNic nic()
    {
        return nic;
    }

    long connectTimeoutNs()
    {
        return connectTimeoutNs;
    }

    ErrorHandler errorHandler()
    {
        return context.errorHandler();
    }

    long coalesceNs()
    {
        return coalesceNs;
    }

    long fallbackGraceNs()
    {
        return fallbackGraceNs;
    }

    /**
     * @return true if this device's NIC thread busy-spins (and so makes progress on every QP on every cycle).
     */
    public boolean isNicSpinning()
    {
        return nic.isEager();
    }

    int maxFrameLength()
    {
        return MAX_MESSAGE_LENGTH + 64;
    }

    @Override
    public MemorySegment allocateMemory(final long length)
    {
        requireOpen();
        if (length <= 0)
        {
            throw new IllegalArgumentException("length must be > 0: " + length);
        }
        return memory.allocateAnonymous(length);
    }

    @Override
    protected SoftQueuePair newQueuePair(final SoftProtectionDomain pd, final QueuePairConfig config, final int qpn)
    {
        final TcpQueuePair qp = new TcpQueuePair(this, pd, config, qpn);
        nic.addQueuePair(qp);
        return qp;
    }

    @Override
    protected void onClose()
    {
        runner.close();
        if (countedAsSpinning)
        {
            SPINNING_NICS.decrementAndGet();
        }
        memory.retireAll(); // quarantined: a Header kept from a poll of a ring in it must not fault
    }
}
