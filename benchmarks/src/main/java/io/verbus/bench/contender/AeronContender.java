package io.verbus.bench.contender;

import io.aeron.Aeron;
import io.aeron.AeronVersion;
import io.aeron.FragmentAssembler;
import io.aeron.Publication;
import io.aeron.Subscription;
import io.aeron.driver.MediaDriver;
import io.aeron.driver.ThreadingMode;
import io.aeron.logbuffer.FragmentHandler;
import io.aeron.logbuffer.Header;
import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.Pinger;
import io.verbus.bench.Ponger;
import io.verbus.bench.StreamPair;
import io.verbus.bench.StreamPublisher;
import io.verbus.bench.StreamSubscriber;
import org.agrona.CloseHelper;
import org.agrona.DirectBuffer;
import org.agrona.concurrent.AgentInvoker;
import org.agrona.concurrent.UnsafeBuffer;

import java.io.IOException;
import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Aeron itself, as the reference: IPC or UDP on localhost through a real embedded {@link MediaDriver}.
 * <p>
 * Two cores allow two spinning threads, and those are the pinger and the ponger (or publisher and subscriber). So
 * the driver runs in {@link ThreadingMode#INVOKER} mode, the client conductor too, and the pinger (publisher)
 * thread drives their duty cycles whenever it waits; for UDP that is where the sender and receiver run, for IPC it
 * only advances publication limits and housekeeping. The provider label says so.
 */
public final class AeronContender implements Contender
{
    /** The two media of Aeron that need no NIC. */
    public enum Media
    {
        IPC, UDP
    }

    static final int PING_STREAM_ID = 1001;
    static final int PONG_STREAM_ID = 1002;
    static final String TERM_LENGTH = "4m";
    private static final long CLIENT_TIMEOUT_MS = TimeUnit.SECONDS.toMillis(60);
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(10);
    private static final long ECHO_OFFER_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(5);
    private static final int FRAGMENT_LIMIT = 256;
    /** For IPC the driver is off the data path: invoke it on every Nth idle poll only, to keep limits moving. */
    private static final int IPC_POLLS_PER_INVOKE = 16;
    /** A streaming publisher runs the driver's duty cycle after this many bytes (or when back-pressured). */
    private static final int BYTES_PER_INVOKE = 16 * 1024;

    private final Media media;

    public AeronContender(final Media media)
    {
        this.media = media;
    }

    @Override
    public String name()
    {
        return Media.IPC == media ? "aeron-ipc" : "aeron-udp";
    }

    @Override
    public String provider()
    {
        return "aeron " + AeronVersion.VERSION +
            " embedded MediaDriver, invoker on pinger, " + (Media.IPC == media ? "ipc" : "udp 127.0.0.1");
    }

    @Override
    public PingPongPair openPingPong(final int maxLength) throws IOException
    {
        final Session session = Session.launch();
        try
        {
            final Link ping = session.link(media, PING_STREAM_ID);
            final Link pong = session.link(media, PONG_STREAM_ID);
            session.awaitConnected(ping, pong);
            final int pollsPerInvoke = Media.IPC == media ? IPC_POLLS_PER_INVOKE : 1;
            return new SimplePingPongPair(
                new AeronPinger(session.invoker, ping, pong, maxLength, pollsPerInvoke),
                new AeronPonger(ping.subscription, pong.publication),
                session);
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
        final Session session = Session.launch();
        try
        {
            final Link link = session.link(media, PING_STREAM_ID);
            session.awaitConnected(link);
            final DutyCycle invoker = session.invoker;
            final Publication publication = link.publication;
            final UnsafeBuffer message = new UnsafeBuffer(ByteBuffer.allocateDirect(maxLength));
            final StreamPublisher publisher = new StreamPublisher()
            {
                private int bytesSinceInvoke;

                @Override
                public boolean send(final int length)
                {
                    final long result = publication.offer(message, 0, length);
                    // Let frames accumulate so the sender batches them into full datagrams, as a driver thread
                    // of its own would find them; run the duty cycle at once when back-pressured.
                    bytesSinceInvoke += length;
                    if (result < 0 || bytesSinceInvoke >= BYTES_PER_INVOKE)
                    {
                        bytesSinceInvoke = 0;
                        invoker.invoke();
                    }
                    return result > 0;
                }

                @Override
                public int flush()
                {
                    return invoker.invoke();
                }
            };
            final Subscription subscription = link.subscription;
            final StreamSubscriber subscriber = new StreamSubscriber()
            {
                private int messages;
                private final FragmentHandler handler = new FragmentAssembler((buffer, offset, length, header) ->
                    messages++);

                @Override
                public int poll(final int length)
                {
                    messages = 0;
                    subscription.poll(handler, FRAGMENT_LIMIT);
                    return messages;
                }
            };
            return new SimpleStreamPair(publisher, subscriber, session);
        }
        catch (final RuntimeException ex)
        {
            session.close();
            throw ex;
        }
    }

    /**
     * The driver's agents and the client's conductor, both in invoker mode: one call runs a duty cycle of each, on
     * the thread that is waiting anyway.
     */
    static final class DutyCycle
    {
        private final AgentInvoker driver;
        private final AgentInvoker client;

        DutyCycle(final AgentInvoker driver, final AgentInvoker client)
        {
            this.driver = driver;
            this.client = client;
        }

        int invoke()
        {
            return driver.invoke() + client.invoke();
        }
    }

    /** One publication and the subscription that receives it. */
    record Link(Publication publication, Subscription subscription)
    {
    }

    /** An embedded driver in invoker mode, a client on it, and their directory. */
    static final class Session implements AutoCloseable
    {
        final TempDirectory directory;
        final MediaDriver driver;
        final Aeron aeron;
        final DutyCycle invoker;

        private Session(final TempDirectory directory, final MediaDriver driver, final Aeron aeron)
        {
            this.directory = directory;
            this.driver = driver;
            this.aeron = aeron;
            this.invoker = new DutyCycle(driver.sharedAgentInvoker(), aeron.conductorAgentInvoker());
        }

        static Session launch() throws IOException
        {
            final TempDirectory directory = TempDirectory.create("verbus-bench-aeron-");
            MediaDriver driver = null;
            try
            {
                final String aeronDir = directory.path().resolve("aeron").toString();
                final long clientTimeoutNs = TimeUnit.MILLISECONDS.toNanos(CLIENT_TIMEOUT_MS);
                driver = MediaDriver.launch(new MediaDriver.Context()
                    .aeronDirectoryName(aeronDir)
                    .threadingMode(ThreadingMode.INVOKER)
                    .dirDeleteOnStart(true)
                    .dirDeleteOnShutdown(true)
                    .warnIfDirectoryExists(false)
                    .driverTimeoutMs(CLIENT_TIMEOUT_MS)
                    .clientLivenessTimeoutNs(clientTimeoutNs)
                    .publicationUnblockTimeoutNs(2 * clientTimeoutNs));
                final Aeron aeron = Aeron.connect(new Aeron.Context()
                    .aeronDirectoryName(aeronDir)
                    .driverAgentInvoker(driver.sharedAgentInvoker())
                    .useConductorAgentInvoker(true)
                    .driverTimeoutMs(CLIENT_TIMEOUT_MS));
                return new Session(directory, driver, aeron);
            }
            catch (final RuntimeException ex)
            {
                CloseHelper.quietCloseAll(driver, directory);
                throw ex;
            }
        }

        Link link(final Media media, final int streamId)
        {
            if (Media.IPC == media)
            {
                final String channel = "aeron:ipc?term-length=" + TERM_LENGTH;
                final Subscription subscription = aeron.addSubscription(channel, streamId);
                return new Link(aeron.addPublication(channel, streamId), subscription);
            }
            final Subscription subscription = aeron.addSubscription(
                "aeron:udp?endpoint=127.0.0.1:0|term-length=" + TERM_LENGTH, streamId);
            final long deadlineNs = System.nanoTime() + CONNECT_TIMEOUT_NS;
            String resolved;
            while (null == (resolved = subscription.tryResolveChannelEndpointPort()))
            {
                invokeOrTimeout(deadlineNs, "the subscription's UDP port");
            }
            return new Link(aeron.addPublication(resolved, streamId), subscription);
        }

        void awaitConnected(final Link... links)
        {
            final long deadlineNs = System.nanoTime() + CONNECT_TIMEOUT_NS;
            for (final Link link : links)
            {
                while (!link.publication.isConnected() || !link.subscription.isConnected())
                {
                    invokeOrTimeout(deadlineNs, "stream " + link.publication.streamId() + " to connect");
                }
            }
        }

        private void invokeOrTimeout(final long deadlineNs, final String what)
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("timed out waiting for " + what);
            }
            invoker.invoke();
            Thread.yield();
        }

        @Override
        public void close()
        {
            CloseHelper.quietCloseAll(aeron, driver, directory);
        }
    }

    /** Pings and waits for the echo; runs the invoked driver while idle when there is one (invoker may be null). */
    static final class AeronPinger implements Pinger
    {
        private final DutyCycle invoker;
        private final Publication publication;
        private final Subscription subscription;
        private final UnsafeBuffer ping;
        private final int pollsPerInvoke;
        private final FragmentHandler handler;
        private long echoedSequence = -1;
        private int emptyPolls;

        AeronPinger(
            final DutyCycle invoker, final Link ping, final Link pong, final int maxLength, final int pollsPerInvoke)
        {
            this.invoker = invoker;
            this.publication = ping.publication;
            this.subscription = pong.subscription;
            this.ping = new UnsafeBuffer(ByteBuffer.allocateDirect(maxLength));
            this.pollsPerInvoke = pollsPerInvoke;
            this.handler = new FragmentAssembler((buffer, offset, length, header) ->
                echoedSequence = MessageHeader.sequence(buffer, offset));
        }

        @Override
        public boolean send(final long sequence, final int length)
        {
            MessageHeader.write(ping, 0, sequence, length);
            final long result = publication.offer(ping, 0, length);
            if (result < 0)
            {
                if (null != invoker)
                {
                    invoker.invoke();
                }
                return false;
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
            if (null != invoker && ++emptyPolls >= pollsPerInvoke)
            {
                emptyPolls = 0;
                invoker.invoke();
            }
            return false;
        }
    }

    private static final class AeronPonger implements Ponger
    {
        private final Subscription subscription;
        private final Publication publication;
        private final FragmentHandler handler;

        AeronPonger(final Subscription subscription, final Publication publication)
        {
            this.subscription = subscription;
            this.publication = publication;
            this.handler = new FragmentAssembler(this::onPing);
        }

        @Override
        public int echo()
        {
            return subscription.poll(handler, FRAGMENT_LIMIT);
        }

        private void onPing(final DirectBuffer buffer, final int offset, final int length, final Header header)
        {
            long deadlineNs = 0;
            long result;
            while ((result = publication.offer(buffer, offset, length)) < 0)
            {
                if (Publication.CLOSED == result || Publication.MAX_POSITION_EXCEEDED == result)
                {
                    throw new IllegalStateException(
                        "pong publication refused the echo: " + Publication.errorString(result));
                }
                final long nowNs = System.nanoTime();
                if (0 == deadlineNs)
                {
                    deadlineNs = nowNs + ECHO_OFFER_TIMEOUT_NS;
                }
                else if (nowNs > deadlineNs)
                {
                    throw new IllegalStateException("pong publication back-pressured for 5 s: " +
                        Publication.errorString(result));
                }
                Thread.onSpinWait();
            }
        }
    }
}
