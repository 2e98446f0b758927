package io.verbus.bench.jmh;

import io.aeron.logbuffer.BufferClaim;
import io.aeron.logbuffer.FragmentHandler;
import io.verbus.Publication;
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
import java.nio.ByteBuffer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The hot path of the native {@code ipc} log in one thread: append a message (offer, or tryClaim + commit) and poll
 * it back. Run with {@code -prof gc}: gc.alloc.rate.norm must be 0 B/op.
 * <p>
 * Verbus runs in invoker mode so no other thread competes; the benchmark thread runs the conductor's duty cycle
 * only when the publication reports back-pressure (its limit moves when the conductor sees the subscriber's
 * position), which is rare with a 4 MiB term.
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
public class IpcPublicationBenchmark
{
    private static final int STREAM_ID = 3001;
    private static final int MAX_ATTEMPTS = 1_000_000;

    @Param({ "32", "256" })
    int length;

    @Param({ "exclusive", "concurrent" })
    String publicationKind;

    private Path dir;
    private Verbus verbus;
    private Publication publication;
    private Subscription subscription;
    private UnsafeBuffer message;
    private final BufferClaim claim = new BufferClaim();
    private long received;
    private final FragmentHandler handler = (buffer, offset, length, header) -> received += buffer.getLong(offset);

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        final Path shm = Path.of("/dev/shm");
        dir = Files.createTempDirectory(Files.isDirectory(shm) ? shm : Path.of(System.getProperty("java.io.tmpdir")),
            "verbus-jmh-");
        verbus = Verbus.launch(new Verbus.Context()
            .dir(dir.toString())
            .threadingMode(ThreadingMode.INVOKER)
            .idleStrategy("noop"));
        final String channel = "ipc:term-length=4m";
        subscription = verbus.addSubscription(channel, STREAM_ID);
        publication = "exclusive".equals(publicationKind) ?
            verbus.addExclusivePublication(channel, STREAM_ID) : verbus.addPublication(channel, STREAM_ID);
        for (int i = 0; i < MAX_ATTEMPTS && !(publication.isConnected() && subscription.isConnected()); i++)
        {
            verbus.invoke();
        }
        if (!publication.isConnected())
        {
            throw new IllegalStateException("ipc publication did not connect");
        }
        message = new UnsafeBuffer(ByteBuffer.allocateDirect(length));
        message.putLong(0, 1L);
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        verbus.close();
        try (Stream<Path> files = Files.walk(dir))
        {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        }
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
        subscription.poll(handler, 1);
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
        subscription.poll(handler, 1);
        return received;
    }

    private void backPressured(final int attempts)
    {
        if (attempts > MAX_ATTEMPTS)
        {
            throw new IllegalStateException("publication back-pressured for " + MAX_ATTEMPTS + " attempts");
        }
        verbus.invoke();
    }
}
