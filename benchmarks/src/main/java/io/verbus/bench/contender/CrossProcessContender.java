package io.verbus.bench.contender;

import io.aeron.Aeron;
import io.aeron.FragmentAssembler;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.Verbus;
import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;
import org.agrona.CloseHelper;
import org.agrona.concurrent.BackoffIdleStrategy;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Two processes, as in production: the harness's process publishes pings (and times them), a child JVM
 * ({@link EchoProcessMain}, pinned to the ponger's CPU) echoes them or counts them. Verbus over {@code rdma:} on
 * the shm provider (each process its own Verbus, invoker mode, direct or sender-agent publications) and, where an
 * RDMA device exists (a NIC, or Soft-RoCE in the qemu guest of {@code ./verbus softroce-test}), on the verbs
 * provider in direct mode, beside Aeron IPC between two client processes sharing one media driver (the driver's
 * threads back off: IPC needs them only to move publication limits).
 */
public final class CrossProcessContender implements Contender
{
    /** What runs in the two processes. */
    public enum Kind
    {
        AERON_IPC("aeron-ipc-2p", "aeron-ipc"),
        VERBUS_RDMA_SHM_DIRECT("verbus-rdma-shm-direct-2p", "verbus-direct"),
        VERBUS_RDMA_SHM_AGENT("verbus-rdma-shm-agent-2p", "verbus-agent"),
        VERBUS_RDMA_VERBS_DIRECT("verbus-rdma-verbs-direct-2p", "verbus-verbs-direct"),
        /** commit=imm beside {@link #VERBUS_RDMA_SHM_DIRECT} (commit=counter). */
        VERBUS_RDMA_SHM_IMM_DIRECT("verbus-rdma-shm-imm-direct-2p", "verbus-imm-direct"),
        /** commit=imm beside {@link #VERBUS_RDMA_VERBS_DIRECT} (commit=counter). */
        VERBUS_RDMA_VERBS_IMM_DIRECT("verbus-rdma-verbs-imm-direct-2p", "verbus-verbs-imm-direct");

        private final String contenderName;
        private final String childMode;

        Kind(final String contenderName, final String childMode)
        {
            this.contenderName = contenderName;
            this.childMode = childMode;
        }

        /** @return the fabric provider of an rdma kind. */
        String fabricProvider()
        {
            return VERBUS_RDMA_VERBS_DIRECT == this || VERBUS_RDMA_VERBS_IMM_DIRECT == this ? "verbs" : "shm";
        }

        /** @return the rdma channel's {@code commit} key. */
        String commit()
        {
            return VERBUS_RDMA_SHM_IMM_DIRECT == this || VERBUS_RDMA_VERBS_IMM_DIRECT == this ? "imm" : "counter";
        }
    }

    static final int PING_STREAM_ID = 3001;
    static final int PONG_STREAM_ID = 3002;
    static final String TERM_LENGTH = "4m";
    static final String AERON_IPC_CHANNEL = "aeron:ipc?term-length=" + TERM_LENGTH;
    /**
     * How long the two processes may take to connect: 30 s by default; {@code -Dverbus.bench.connect.timeout.s}
     * raises it where JVMs start slowly (the Soft-RoCE guest's emulated CPU).
     */
    private static final long CONNECT_TIMEOUT_NS =
        TimeUnit.SECONDS.toNanos(Long.getLong("verbus.bench.connect.timeout.s", 30));
    private static final int PONG_POLLS_PER_DUTY_CYCLE = 16;
    /**
     * A streaming publisher runs its Verbus's duty cycle (in sender-agent mode the sender: it sends what was offered)
     * after this many bytes and whenever an offer fails, as the in-process stream does.
     */
    private static final int BYTES_PER_DUTY_CYCLE = 16 * 1024;

    private final Kind kind;
    private final int childCpu;

    /**
     * @param kind     what runs.
     * @param childCpu the CPU the child pins its thread to (the ponger's), or -1.
     */
    public CrossProcessContender(final Kind kind, final int childCpu)
    {
        this.kind = kind;
        this.childCpu = childCpu;
    }

    @Override
    public String name()
    {
        return kind.contenderName;
    }

    @Override
    public String provider()
    {
        return switch (kind)
        {
            case AERON_IPC -> "aeron 1.51.0 ipc, two client processes on one MediaDriver (backoff)";
            case VERBUS_RDMA_SHM_DIRECT -> "verbus rdma provider=shm, two processes, direct mode, invoker";
            case VERBUS_RDMA_SHM_AGENT -> "verbus rdma provider=shm, two processes, sender agent on the writer";
            case VERBUS_RDMA_VERBS_DIRECT -> "verbus rdma provider=verbs, two processes, direct mode, invoker, on " +
                FabricLink.label("verbs");
            case VERBUS_RDMA_SHM_IMM_DIRECT -> "verbus rdma provider=shm, two processes, direct mode, invoker, " +
                "commit=imm";
            case VERBUS_RDMA_VERBS_IMM_DIRECT -> "verbus rdma provider=verbs, two processes, direct mode, invoker, " +
                "commit=imm, on " + FabricLink.label("verbs");
        };
    }

    @Override
    public String burstTailUnavailableReason()
    {
        return "the subscriber process reports its counts in batches, coarser than a burst's tail";
    }

    @Override
    public String unavailableReason()
    {
        return Kind.AERON_IPC == kind ? null : FabricLink.unavailableReason(kind.fabricProvider());
    }

    static String rdmaChannel(final String provider, final int port, final String secretFile, final String commit)
    {
        return "rdma:endpoint=127.0.0.1:" + port + "|provider=" + provider + "|term-length=" + TERM_LENGTH +
            "|secret-file=" + secretFile + "|commit=" + commit;
    }

    @Override
    public PingPongPair openPingPong(final int maxLength) throws IOException
    {
        final Session session = open("echo");
        try
        {
            return new SimplePingPongPair(session.pinger(maxLength), session.child.watchingPonger(), session);
        }
        catch (final RuntimeException ex)
        {
            session.close();
            throw ex;
        }
    }

    @Override
    public StreamPair openStream(final int maxLength) throws IOException
    {
        final Session session = open("count");
        try
        {
            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(maxLength));
            final StreamPublisher publisher = new StreamPublisher()
            {
                private int bytesSinceDutyCycle;

                @Override
                public boolean send(final int length)
                {
                    final long result = session.offer(message, length);
                    bytesSinceDutyCycle += length;
                    if (result < 0 || bytesSinceDutyCycle >= BYTES_PER_DUTY_CYCLE)
                    {
                        bytesSinceDutyCycle = 0;
                        flush();
                    }
                    return result > 0;
                }

                @Override
                public int flush()
                {
                    return session.dutyCycle();
                }
            };
            final StreamSubscriber subscriber = session.child.countingSubscriber(session::pollCounts);
            return new SimpleStreamPair(publisher, subscriber, session);
        }
        catch (final RuntimeException ex)
        {
            session.close();
            throw ex;
        }
    }

    private Session open(final String role) throws IOException
    {
        final Session session = new Session(kind);
        try
        {
            session.start(role, childCpu);
            return session;
        }
        catch (final IOException | RuntimeException ex)
        {
            session.close();
            throw ex;
        }
    }

    /** This process's end, the child, and everything to close. */
    private static final class Session implements AutoCloseable
    {
        private final Kind kind;
        private final List<AutoCloseable> resources = new ArrayList<>();
        private final boolean exclusive;
        private TempDirectory directory;
        private RemoteEnd child;
        private Verbus verbus;
        private Publication publication;
        private Subscription subscription;
        private Aeron aeron;
        private io.aeron.Publication aeronPublication;
        private io.aeron.Subscription aeronSubscription;
        private RemoteEnd.CountConsumer countConsumer;
        private final FragmentHandler countHandler = new FragmentAssembler(
            (buffer, offset, length, header) -> countConsumer.onCount(buffer, offset));

        Session(final Kind kind)
        {
            this.kind = kind;
            this.exclusive = Kind.VERBUS_RDMA_SHM_AGENT != kind;
        }

        void start(final String role, final int childCpu) throws IOException
        {
            directory = TempDirectory.create("verbus-bench-2p-");
            resources.add(directory);
            final Path log = directory.path().resolve("child.log");
            final String cpu = Integer.toString(childCpu);
            if (Kind.AERON_IPC == kind)
            {
                final String aeronDir = directory.path().resolve("aeron").toString();
                final MediaDriver driver = MediaDriver.launch(new MediaDriver.Context()
                    .aeronDirectoryName(aeronDir)
                    .threadingMode(ThreadingMode.SHARED)
                    .sharedIdleStrategy(new BackoffIdleStrategy(10, 10, 1_000, TimeUnit.MILLISECONDS.toNanos(1)))
                    .dirDeleteOnStart(true)
                    .dirDeleteOnShutdown(true));
                resources.add(driver);
                aeron = Aeron.connect(new Aeron.Context().aeronDirectoryName(aeronDir));
                resources.add(aeron);
                aeronPublication = aeron.addExclusivePublication(AERON_IPC_CHANNEL, PING_STREAM_ID);
                aeronSubscription = aeron.addSubscription(AERON_IPC_CHANNEL, PONG_STREAM_ID);
                child = RemoteEnd.start(log, role, cpu, kind.childMode, aeronDir);
            }
            else
            {
                final Path secret = directory.path().resolve("rdma.secret");
                Files.writeString(secret, "verbus-bench-2p-" + System.nanoTime());
                Files.setPosixFilePermissions(secret, PosixFilePermissions.fromString("rw-------"));
                final int pingPort = freePort();
                final int pongPort = freePort();
                final TempDirectory verbusDir = TempDirectory.create("verbus-bench-2p-a-");
                resources.add(verbusDir);
                verbus = Verbus.launch(new Verbus.Context()
                    .dir(verbusDir.path().toString())
                    .threadingMode(io.verbus.ThreadingMode.INVOKER)
                    .idleStrategy("noop"));
                resources.add(verbus);
                final String provider = kind.fabricProvider();
                final String pingChannel = rdmaChannel(provider, pingPort, secret.toString(), kind.commit());
                publication = exclusive ? verbus.addExclusivePublication(pingChannel, PING_STREAM_ID) :
                    verbus.addPublication(pingChannel, PING_STREAM_ID);
                subscription = verbus.addSubscription(
                    rdmaChannel(provider, pongPort, secret.toString(), kind.commit()), PONG_STREAM_ID);
                child = RemoteEnd.start(log, role, cpu, kind.childMode, Integer.toString(pingPort),
                    Integer.toString(pongPort), secret.toString());
            }
            resources.add(child);
            awaitConnected();
        }

        private void awaitConnected()
        {
            final long deadlineNs = System.nanoTime() + CONNECT_TIMEOUT_NS;
            while (!isConnected())
            {
                child.checkAlive();
                if (System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException(kind.contenderName + ": the two processes did not connect within " +
                        TimeUnit.NANOSECONDS.toSeconds(CONNECT_TIMEOUT_NS) + " s");
                }
                dutyCycle();
                Thread.yield();
            }
        }

        private boolean isConnected()
        {
            return null != aeron ?
                aeronPublication.isConnected() && aeronSubscription.isConnected() :
                publication.isConnected() && subscription.isConnected();
        }

        int dutyCycle()
        {
            return null != verbus ? VerbusContender.dutyCycle(verbus, publication, exclusive) : 0;
        }

        long offer(final UnsafeBuffer message, final int length)
        {
            if (null != aeron)
            {
                return aeronPublication.offer(message, 0, length);
            }
            // No duty cycle here: the streaming publisher runs one every BYTES_PER_DUTY_CYCLE, as the in-process
            // stream does, so the sender agent sends batches. A cycle after every offer (as the ping-pong's pinger
            // does, to send each ping at once) held the two-process sender-agent stream to 1.2-2.6M msg/s at 32 B,
            // a cost of the harness, not of the stream.
            return publication.offer(message, 0, length);
        }

        void pollCounts(final RemoteEnd.CountConsumer consumer)
        {
            countConsumer = consumer;
            if (null != aeron)
            {
                aeronSubscription.poll(countHandler, 16);
            }
            else
            {
                subscription.poll(countHandler, 16);
            }
        }

        io.verbus.bench.Pinger pinger(final int maxLength)
        {
            if (null != aeron)
            {
                return new AeronContender.AeronPinger(null, new AeronContender.Link(aeronPublication, null),
                    new AeronContender.Link(null, aeronSubscription), maxLength, Integer.MAX_VALUE);
            }
            // shm and verbs only: the sender agent keeps an idle direct-mode writer alive, no flush needed
            return new VerbusContender.VerbusPinger(verbus, publication, subscription, exclusive, maxLength,
                PONG_POLLS_PER_DUTY_CYCLE, false);
        }

        @Override
        public void close()
        {
            // The child first: it holds the far ends of this process's connections.
            if (null != child)
            {
                child.close();
            }
            CloseHelper.quietCloseAll(publication, subscription, aeronPublication, aeronSubscription);
            for (int i = resources.size() - 1; i >= 0; i--)
            {
                if (resources.get(i) != child)
                {
                    CloseHelper.quietClose(resources.get(i));
                }
            }
        }

        private static int freePort()
        {
            try (ServerSocket socket = new ServerSocket())
            {
                socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
                return socket.getLocalPort();
            }
            catch (final IOException ex)
            {
                throw new IllegalStateException("no free TCP port for the rdma control connection", ex);
            }
        }
    }
}
