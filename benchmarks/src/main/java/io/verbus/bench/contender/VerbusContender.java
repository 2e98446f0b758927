package io.verbus.bench.contender;

import io.aeron.FragmentAssembler;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.verbus.ExclusivePublication;
import io.verbus.Publication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.Pinger;
import io.verbus.bench.Ponger;
import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Verbus itself, through its public API: the native {@code ipc} log, {@code aeron:ipc} through Verbus's embedded
 * Aeron driver, and the {@code rdma:} media over the shm, tcp and verbs fabric providers.
 * <p>
 * Every Verbus runs in {@link ThreadingMode#INVOKER} mode so that the only spinning threads are the pinger and the
 * ponger (publisher and subscriber). For {@code rdma:} each end has its own Verbus, as two processes would, and
 * each thread runs its own Verbus's duty cycle while it waits. In direct mode an exclusive publication sends its
 * WRITEs from the publishing thread; in sender-agent mode a shared publication hands its log to the sender agent,
 * whose duty cycle the publishing thread runs right after the offer (there is no third core to give it).
 */
public final class VerbusContender implements Contender
{
    /** What is measured. */
    public enum Variant
    {
        IPC("verbus-ipc", null, true, null),
        AERON_IPC("verbus-aeron-ipc", null, true, null),
        RDMA_SHM_DIRECT("verbus-rdma-shm-direct", "shm", true, "counter"),
        /** The {@code commit=imm} half of the pair whose counter half is {@link #RDMA_SHM_DIRECT}. */
        RDMA_SHM_IMM("verbus-rdma-shm-imm", "shm", true, "imm"),
        RDMA_SHM_AGENT("verbus-rdma-shm-agent", "shm", false, "counter"),
        RDMA_TCP("verbus-rdma-tcp", "tcp", true, "counter"),
        RDMA_VERBS("verbus-rdma-verbs", "verbs", true, "counter"),
        /** The {@code commit=imm} half of the pair whose counter half is {@link #RDMA_VERBS}. */
        RDMA_VERBS_IMM("verbus-rdma-verbs-imm", "verbs", true, "imm");

        private final String contenderName;
        private final String fabricProvider;
        private final boolean exclusive;
        private final String commit;

        Variant(final String contenderName, final String fabricProvider, final boolean exclusive, final String commit)
        {
            this.contenderName = contenderName;
            this.fabricProvider = fabricProvider;
            this.exclusive = exclusive;
            this.commit = commit;
        }

        boolean isRdma()
        {
            return null != fabricProvider;
        }
    }

    static final int PING_STREAM_ID = 2001;
    static final int PONG_STREAM_ID = 2002;
    static final String TERM_LENGTH = "4m";
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(15);
    private static final long ECHO_OFFER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final int FRAGMENT_LIMIT = 256;
    /**
     * Idle polls between two duty cycles. The ipc logs need the conductor only to move publication limits, and an
     * {@code rdma:} image over shm or verbs reads the publisher's position block itself inside {@code poll}, so the
     * receiver agent is off the data path (credits, heartbeats, liveness): now and then is enough. Over {@code tcp}
     * the polling thread is also the software NIC that applies incoming WRITEs, so it runs on every idle poll.
     */
    private static final int POLLS_PER_DUTY_CYCLE = 16;
    /**
     * Over tcp a direct-mode publication's QP is progressed (the subscriber's status WRITEs applied, responses read)
     * by whoever holds its engine, so the publishing thread flushes now and then while it waits. Over shm and verbs
     * it need not: the sender agent, run by the duty cycle, asks the writer for a full cycle every 100 us while it
     * writes and runs the cycles itself once the writer idles (see ExclusivePublication.flush). A flush every 16
     * idle polls is a whole duty cycle (about 90 ns idle) at each end while the echo may be arriving: the 32 B
     * p50 was lower without it in six of eight alternating pairs of runs on 2026-12-01 (the VM's two speeds move
     * single runs by more than the difference, so that is a direction, not a size).
     */
    private static final int FLUSH_EVERY_IDLE_POLLS = 16;
    /** A streaming publisher in sender-agent mode runs the agent after this many bytes, so it sends batches. */
    private static final int BYTES_PER_AGENT_CYCLE = 16 * 1024;

    private final Variant variant;
    private final int pollsPerDutyCycle;
    private final boolean flushWhileIdle;

    public VerbusContender(final Variant variant)
    {
        this.variant = variant;
        this.pollsPerDutyCycle = Variant.RDMA_TCP == variant ? 1 : POLLS_PER_DUTY_CYCLE;
        this.flushWhileIdle = Variant.RDMA_TCP == variant && variant.exclusive;
    }

    @Override
    public String name()
    {
        return variant.contenderName;
    }

    @Override
    public String provider()
    {
        return switch (variant)
        {
            case IPC -> "verbus native ipc log, invoker on pinger";
            case AERON_IPC -> "verbus aeron:ipc (embedded Aeron driver), invoker on pinger";
            case RDMA_SHM_DIRECT -> "verbus rdma provider=shm, direct mode, a Verbus per end (commit=counter)";
            case RDMA_SHM_IMM -> "verbus rdma provider=shm, direct mode, a Verbus per end, commit=imm";
            case RDMA_SHM_AGENT -> "verbus rdma provider=shm, sender agent run by the publishing thread";
            case RDMA_TCP -> "verbus rdma provider=tcp (the polling threads are the NIC), direct mode";
            case RDMA_VERBS -> "verbus rdma provider=verbs, direct mode (commit=counter), on " +
                FabricLink.label("verbs");
            case RDMA_VERBS_IMM -> "verbus rdma provider=verbs, direct mode, commit=imm, on " +
                FabricLink.label("verbs");
        };
    }

    @Override
    public String unavailableReason()
    {
        return variant.isRdma() ? FabricLink.unavailableReason(variant.fabricProvider) : null;
    }

    @Override
    public PingPongPair openPingPong(final int maxLength) throws IOException
    {
        final Ends ends = Ends.open(variant);
        try
        {
            final Publication ping = ends.publication(ends.publisherSide, PING_STREAM_ID);
            final Subscription pingSubscription = ends.subscription(ends.subscriberSide, PING_STREAM_ID);
            final Publication pong = ends.publication(ends.subscriberSide, PONG_STREAM_ID);
            final Subscription pongSubscription = ends.subscription(ends.publisherSide, PONG_STREAM_ID);
            ends.awaitConnected();
            final boolean pongerOwnsDutyCycle = ends.twoSides();
            return new SimplePingPongPair(
                new VerbusPinger(ends.publisherSide, ping, pongSubscription, variant.exclusive, maxLength,
                    pollsPerDutyCycle, flushWhileIdle),
                new VerbusPonger(pongerOwnsDutyCycle ? ends.subscriberSide : null, pingSubscription, pong,
                    variant.exclusive, pollsPerDutyCycle, flushWhileIdle),
                ends);
        }
        catch (final RuntimeException ex)
        {
            ends.close();
            throw ex;
        }
    }

    @Override
    public StreamPair openStream(final int maxLength) throws IOException
    {
        final Ends ends = Ends.open(variant);
        try
        {
            final Publication publication = ends.publication(ends.publisherSide, PING_STREAM_ID);
            final Subscription subscription = ends.subscription(ends.subscriberSide, PING_STREAM_ID);
            ends.awaitConnected();
            final Verbus publisherSide = ends.publisherSide;
            final Verbus subscriberSide = ends.twoSides() ? ends.subscriberSide : null;
            final boolean exclusive = variant.exclusive;
            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(maxLength));
            final StreamPublisher publisher = new StreamPublisher()
            {
                private int bytesSinceDutyCycle;

                @Override
                public boolean send(final int length)
                {
                    final long result = publication.offer(message, 0, length);
                    bytesSinceDutyCycle += length;
                    if (result < 0 || bytesSinceDutyCycle >= BYTES_PER_AGENT_CYCLE)
                    {
                        bytesSinceDutyCycle = 0;
                        flush();
                    }
                    return result > 0;
                }

                @Override
                public int flush()
                {
                    return dutyCycle(publisherSide, publication, exclusive);
                }

                @Override
                public int idle()
                {
                    return publisherSide.invoke(); // the duty cycle only: no flush of the publication
                }
            };
            final StreamSubscriber subscriber = new StreamSubscriber()
            {
                private int messages;
                private int emptyPolls;
                private final FragmentHandler counter = new FragmentAssembler(
                    (buffer, offset, length, header) -> messages++);

                @Override
                public int poll(final int length)
                {
                    messages = 0;
                    if (0 == subscription.poll(counter, FRAGMENT_LIMIT) && null != subscriberSide &&
                        ++emptyPolls >= pollsPerDutyCycle)
                    {
                        emptyPolls = 0;
                        subscriberSide.invoke();
                    }
                    return messages;
                }
            };
            return new SimpleStreamPair(publisher, subscriber, ends);
        }
        catch (final RuntimeException ex)
        {
            ends.close();
            throw ex;
        }
    }

    /**
     * One duty cycle of a publishing thread: its Verbus's agents and, in direct mode, its publication's sender.
     */
    static int dutyCycle(final Verbus verbus, final Publication publication, final boolean exclusive)
    {
        return verbus.invoke() + flushDirect(publication, exclusive);
    }

    /**
     * A direct-mode exclusive publication's full duty cycle on this thread (credits, completions, liveness): what a
     * back-pressured writer runs so that its limit moves without waiting for the sender agent's cadence.
     */
    static int flushDirect(final Publication publication, final boolean exclusive)
    {
        return exclusive && publication instanceof ExclusivePublication exclusivePublication ?
            exclusivePublication.flush() : 0;
    }

    /**
     * The Verbus instances of one contender: one shared by both ends, or one per end for {@code rdma:} (publisher
     * side and subscriber side, as two processes would have), with the ports their control connections use.
     */
    static final class Ends implements AutoCloseable
    {
        final Variant variant;
        final List<AutoCloseable> resources = new ArrayList<>();
        final List<Publication> publications = new ArrayList<>();
        final List<Subscription> subscriptions = new ArrayList<>();
        /** Control ports of the ping and pong publications, for the subscriptions that connect to them. */
        private final int[] ports = new int[2];
        Verbus publisherSide;
        Verbus subscriberSide;

        private Ends(final Variant variant)
        {
            this.variant = variant;
        }

        static Ends open(final Variant variant) throws IOException
        {
            final Ends ends = new Ends(variant);
            try
            {
                ends.publisherSide = ends.launch("verbus-bench-a-");
                ends.subscriberSide = variant.isRdma() ? ends.launch("verbus-bench-b-") : ends.publisherSide;
                return ends;
            }
            catch (final IOException | RuntimeException ex)
            {
                ends.close();
                throw ex;
            }
        }

        boolean twoSides()
        {
            return publisherSide != subscriberSide;
        }

        private Verbus launch(final String prefix) throws IOException
        {
            final TempDirectory dir = TempDirectory.create(prefix);
            resources.add(dir);
            final Verbus verbus = Verbus.launch(new Verbus.Context()
                .dir(dir.path().toString())
                .threadingMode(ThreadingMode.INVOKER)
                .idleStrategy("noop"));
            resources.add(verbus);
            return verbus;
        }

        Publication publication(final Verbus side, final int streamId)
        {
            final String channel = channel(streamId, true);
            final Publication publication = variant.exclusive ?
                side.addExclusivePublication(channel, streamId) : side.addPublication(channel, streamId);
            publications.add(publication);
            return publication;
        }

        Subscription subscription(final Verbus side, final int streamId)
        {
            final Subscription subscription = side.addSubscription(channel(streamId, false), streamId);
            subscriptions.add(subscription);
            return subscription;
        }

        private String channel(final int streamId, final boolean publication)
        {
            return switch (variant)
            {
                case IPC -> "ipc:term-length=" + TERM_LENGTH;
                case AERON_IPC -> "aeron:ipc?term-length=" + TERM_LENGTH;
                default ->
                {
                    final int index = streamId - PING_STREAM_ID;
                    if (publication)
                    {
                        ports[index] = freePort();
                    }
                    yield "rdma:endpoint=127.0.0.1:" + ports[index] + "|provider=" + variant.fabricProvider +
                        "|term-length=" + TERM_LENGTH + "|commit=" + variant.commit;
                }
            };
        }

        void awaitConnected()
        {
            final long deadlineNs = System.nanoTime() + CONNECT_TIMEOUT_NS;
            while (!allConnected())
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw new IllegalStateException(variant.contenderName + ": publications and subscriptions did " +
                        "not connect within " + TimeUnit.NANOSECONDS.toSeconds(CONNECT_TIMEOUT_NS) + " s");
                }
                for (final Publication publication : publications)
                {
                    final Verbus owner = variant.isRdma() && publication.streamId() == PONG_STREAM_ID ?
                        subscriberSide : publisherSide;
                    dutyCycle(owner, publication, variant.exclusive);
                }
                if (twoSides())
                {
                    subscriberSide.invoke();
                    publisherSide.invoke();
                }
                Thread.yield();
            }
        }

        private boolean allConnected()
        {
            for (final Publication publication : publications)
            {
                if (!publication.isConnected())
                {
                    return false;
                }
            }
            for (final Subscription subscription : subscriptions)
            {
                if (!subscription.isConnected())
                {
                    return false;
                }
            }
            return true;
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

        @Override
        public void close()
        {
            CloseHelper.quietCloseAll(publications);
            CloseHelper.quietCloseAll(subscriptions);
            for (int i = resources.size() - 1; i >= 0; i--)
            {
                CloseHelper.quietClose(resources.get(i));
            }
        }
    }

    static final class VerbusPinger implements Pinger
    {
        private final Verbus verbus;
        private final Publication publication;
        private final Subscription subscription;
        private final boolean exclusive;
        private final UnsafeBuffer ping;
        private final FragmentHandler handler;
        private final int pollsPerDutyCycle;
        private final boolean flushWhileIdle;
        private long echoedSequence = -1;
        private int emptyPolls;

        VerbusPinger(
            final Verbus verbus,
            final Publication publication,
            final Subscription subscription,
            final boolean exclusive,
            final int maxLength,
            final int pollsPerDutyCycle,
            final boolean flushWhileIdle)
        {
            this.pollsPerDutyCycle = pollsPerDutyCycle;
            this.flushWhileIdle = flushWhileIdle;
            this.verbus = verbus;
            this.publication = publication;
            this.subscription = subscription;
            this.exclusive = exclusive;
            this.ping = new UnsafeBuffer(ByteBuffer.allocateDirect(maxLength));
            this.handler = new FragmentAssembler((buffer, offset, length, header) ->
                echoedSequence = MessageHeader.sequence(buffer, offset));
        }

        private void idleWork()
        {
            if (++emptyPolls % pollsPerDutyCycle == 0)
            {
                verbus.invoke();
            }
            if (flushWhileIdle && emptyPolls % FLUSH_EVERY_IDLE_POLLS == 0)
            {
                flushDirect(publication, exclusive);
            }
        }

        @Override
        public boolean send(final long sequence, final int length)
        {
            MessageHeader.write(ping, 0, sequence, length);
            final long result = publication.offer(ping, 0, length);
            if (result < 0)
            {
                dutyCycle(verbus, publication, exclusive);
                return false;
            }
            if (!exclusive)
            {
                verbus.invoke(); // the sender agent's turn: it sends what the offer appended
            }
            return true;
        }

        @Override
        public boolean pollEcho(final long sequence)
        {
            if (subscription.poll(handler, 1) > 0 && echoedSequence != -1)
            {
                final long echoed = echoedSequence;
                echoedSequence = -1;
                if (MessageHeader.isEchoOf(sequence, echoed))
                {
                    return true;
                }
            }
            idleWork();
            return false;
        }
    }

    private static final class VerbusPonger implements Ponger
    {
        private final Verbus verbus;
        private final Subscription subscription;
        private final Publication publication;
        private final boolean exclusive;
        private final FragmentHandler handler;
        private final int pollsPerDutyCycle;
        private final boolean flushWhileIdle;
        private int emptyPolls;

        /**
         * @param verbus this end's own Verbus whose duty cycle it runs, or null when the pinger runs a shared one.
         */
        VerbusPonger(
            final Verbus verbus,
            final Subscription subscription,
            final Publication publication,
            final boolean exclusive,
            final int pollsPerDutyCycle,
            final boolean flushWhileIdle)
        {
            this.pollsPerDutyCycle = pollsPerDutyCycle;
            this.flushWhileIdle = flushWhileIdle;
            this.verbus = verbus;
            this.subscription = subscription;
            this.publication = publication;
            this.exclusive = exclusive;
            this.handler = new FragmentAssembler(this::onPing);
        }

        @Override
        public int echo()
        {
            final int fragments = subscription.poll(handler, FRAGMENT_LIMIT);
            if (0 == fragments && null != verbus)
            {
                if (++emptyPolls % pollsPerDutyCycle == 0)
                {
                    verbus.invoke();
                }
                if (flushWhileIdle && emptyPolls % FLUSH_EVERY_IDLE_POLLS == 0)
                {
                    flushDirect(publication, exclusive);
                }
            }
            return fragments;
        }

        private void onPing(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            long deadlineNs = 0;
            long result;
            while ((result = publication.offer(buffer, offset, length)) < 0)
            {
                if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
                {
                    throw new IllegalStateException("pong publication refused the echo: code " + result);
                }
                final long nowNs = System.nanoTime();
                if (0 == deadlineNs)
                {
                    deadlineNs = nowNs + ECHO_OFFER_TIMEOUT_NS;
                }
                else if (nowNs > deadlineNs)
                {
                    throw new IllegalStateException("pong publication back-pressured for 5 s: code " + result);
                }
                if (null != verbus)
                {
                    dutyCycle(verbus, publication, exclusive);
                }
                Thread.onSpinWait();
            }
            if (!exclusive && null != verbus)
            {
                verbus.invoke(); // the sender agent's turn
            }
        }
    }
}
