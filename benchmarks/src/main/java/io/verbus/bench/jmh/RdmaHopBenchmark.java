package io.verbus.bench.jmh;

import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.ExclusivePublication;
import io.verbus.Subscription;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Warmup;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The CPU cost of one hop on the {@code rdma:} media in direct mode, in one thread: an exclusive publication offers
 * (or claims and commits) a message, which posts its WRITE chain from this thread, and the subscription of a second
 * Verbus (as a second process would have) polls it back by reading the position block the WRITE chain left in its
 * memory. Compare with {@link IpcPublicationBenchmark}: the difference is what the media costs per message beyond
 * the log itself, with no cache line crossing between cores. Run with {@code -prof gc}: 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "--sun-misc-unsafe-memory-access=allow" })
public class RdmaHopBenchmark
{
    private static final int STREAM_ID = 3002;
    private static final int MAX_ATTEMPTS = 1_000_000;
    private static final long CONNECT_TIMEOUT_NS = TimeUnit.SECONDS.toNanos(30);

    @Param({ "32", "1024" })
    int length;

    @Param({ "shm" })
    String provider;

    /** Channel parameters appended to the channel, to compare settings: {@code -p 'extra=,|signal-every=64'}. */
    @Param({ "" })
    String extra;

    /** Provider tcp: the poll loop also runs both ends' duty cycles. */
    private boolean tcp;
    private Path publisherDir;
    private Path subscriberDir;
    private Verbus publisherSide;
    private Verbus subscriberSide;
    private ExclusivePublication publication;
    private Subscription subscription;
    private UnsafeBuffer message;
    private final BufferClaim claim = new BufferClaim();
    private long received;
    private int fragments;
    private final FragmentHandler handler = (buffer, offset, length, header) ->
    {
        received += buffer.getLong(offset);
        fragments++;
    };

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        tcp = "tcp".equals(provider);
        publisherDir = tempDir("verbus-jmh-hop-p-");
        subscriberDir = tempDir("verbus-jmh-hop-s-");
        publisherSide = launch(publisherDir);
        subscriberSide = launch(subscriberDir);
        final String channel =
            "rdma:endpoint=127.0.0.1:" + freePort() + "|provider=" + provider + "|term-length=4m" + extra;
        publication = publisherSide.addExclusivePublication(channel, STREAM_ID);
        subscription = subscriberSide.addSubscription(channel, STREAM_ID);
        final long deadlineNs = System.nanoTime() + CONNECT_TIMEOUT_NS;
        while (!(publication.isConnected() && subscription.isConnected()))
        {
            if (System.nanoTime() > deadlineNs)
            {
                throw new IllegalStateException("rdma publication did not connect");
            }
            publisherSide.invoke();
            subscriberSide.invoke();
            publication.flush();
            Thread.yield();
        }
        message = new UnsafeBuffer(ByteBuffer.allocateDirect(length));
        message.putLong(0, 1L);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        subscriberSide.close();
        publisherSide.close();
        delete(subscriberDir);
        delete(publisherDir);
    }

    /**
     * @return what the poll read, so the JIT cannot drop it.
     */
    @Benchmark
    public long offerThenPoll()
    {
        int attempts = 0;
        while (publication.offer(message, 0, length) < 0)
        {
            backPressured(++attempts);
        }
        pollOne();
        return received;
    }

    /**
     * @return what the poll read, so the JIT cannot drop it.
     */
    @Benchmark
    public long tryClaimCommitThenPoll()
    {
        int attempts = 0;
        while (publication.tryClaim(length, claim) < 0)
        {
            backPressured(++attempts);
        }
        claim.buffer().putLong(claim.offset(), 1L);
        claim.commit();
        pollOne();
        return received;
    }

    /**
     * What the driver's duty cycle costs a loop that calls it while nothing happens (the README's loop calls
     * {@code invoke()} on every pass): both ends' {@code invoke()} with the channel connected and idle.
     *
     * @return the work counts, so the JIT cannot drop the calls.
     */
    @Benchmark
    public int invokeIdle()
    {
        return publisherSide.invoke() + subscriberSide.invoke();
    }

    private void pollOne()
    {
        final int before = fragments;
        int attempts = 0;
        while (fragments == before)
        {
            if (tcp)
            {
                // On tcp a WRITE lands only when a thread progresses the QP that carries it: here, both ends' duty
                // cycles (on shm it lands in place as the publisher posts, and the poll alone sees it).
                subscriberSide.invoke();
                publisherSide.invoke();
            }
            if (0 == subscription.poll(handler, 1) && ++attempts > MAX_ATTEMPTS)
            {
                throw new IllegalStateException("the message did not arrive within " + MAX_ATTEMPTS + " polls");
            }
        }
    }

    private void backPressured(final int attempts)
    {
        if (attempts > MAX_ATTEMPTS)
        {
            throw new IllegalStateException("publication back-pressured for " + MAX_ATTEMPTS + " attempts");
        }
        subscriberSide.invoke();
        publisherSide.invoke();
        publication.flush();
    }

    private static Verbus launch(final Path dir)
    {
        return Verbus.launch(new Verbus.Context()
            .dir(dir.toString())
            .threadingMode(ThreadingMode.INVOKER)
            .idleStrategy("noop"));
    }

    private static Path tempDir(final String prefix) throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        return Files.createTempDirectory(
            Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")), prefix);
    }

    private static void delete(final Path dir) throws IOException
    {
        try (Stream<Path> files = Files.walk(dir))
        {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        }
    }

    private static int freePort() throws IOException
    {
        try (ServerSocket socket = new ServerSocket())
        {
            socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
            return socket.getLocalPort();
        }
    }
}
