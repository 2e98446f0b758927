package io.verbus.bench.jmh;

import io.verbus.fabric.AccessFlags;
import io.verbus.fabric.CompletionQueue;
import io.verbus.fabric.Device;
import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.MemoryRegion;
import io.verbus.fabric.PostResult;
import io.verbus.fabric.ProtectionDomain;
import io.verbus.fabric.QueuePair;
import io.verbus.fabric.QueuePairConfig;
import io.verbus.fabric.SendFlags;
import io.verbus.fabric.WorkCompletion;
import io.verbus.fabric.WorkCompletionStatus;
import io.verbus.fabric.WorkRequestBatch;
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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * One signaled RDMA WRITE posted and polled to completion, per operation: the fabric's post + execute +
 * poll round trip for 8, 64 (both inline) and 1024 bytes, on the soft providers. The responder is a second
 * device in this JVM: for shm the WRITE is the copy into its mapped region file done by the posting
 * thread; for tcp the posting thread writes it to loopback TCP, the responder's NIC thread applies it (nothing
 * polls the responder's CQ here, so its NIC thread is the fallback that does) and the acknowledgement comes back to
 * the poller, which reads it itself. The poller spins 200 polls, then yields: on a 2-core host a poller that never
 * yields starves the responder's NIC thread. Run with {@code -prof gc}: gc.alloc.rate.norm (all threads) should be
 * 0 B/op.
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 2, time = 1)
@Measurement(iterations = 3, time = 1)
@Fork(value = 1, jvmArgsAppend = {
    "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--add-opens=java.base/sun.nio.ch=ALL-UNNAMED",
    "--add-opens=java.base/java.nio=ALL-UNNAMED",
    "--enable-native-access=ALL-UNNAMED",
    "--sun-misc-unsafe-memory-access=allow" })
public class FabricWriteBenchmark
{
    private static final int INLINE_LIMIT = 64;
    private static final long MAX_POLLS = 100_000_000L;
    private static final int SPIN_POLLS = 200;

    @Param({ "shm", "tcp" })
    String provider;

    @Param({ "8", "64", "1024" })
    int length;

    private Path shmDirectory;
    private Fabric initiatorFabric;
    private Fabric responderFabric;
    private CompletionQueue cq;
    private QueuePair requester;
    private QueuePair responder;
    private MemoryRegion source;
    private MemoryRegion target;
    private final WorkRequestBatch batch = new WorkRequestBatch(1);
    private final WorkCompletion[] completions = WorkCompletion.newArray(4);
    private int flags;

    @Setup(Level.Trial)
    public void setUp() throws IOException
    {
        shmDirectory = Files.createTempDirectory(Path.of("/dev/shm"), "verbus-jmh-fabric-");
        initiatorFabric = Fabrics.open(provider, context());
        responderFabric = Fabrics.open(provider, context());
        final Device initiator = initiatorFabric.openDevice();
        final Device responderDevice = responderFabric.openDevice();
        final ProtectionDomain initiatorPd = initiator.allocateProtectionDomain();
        final ProtectionDomain responderPd = responderDevice.allocateProtectionDomain();
        cq = initiator.createCompletionQueue(1024);
        final CompletionQueue responderCq = responderDevice.createCompletionQueue(1024);
        requester = initiatorPd.createQueuePair(new QueuePairConfig().completionQueue(cq).maxInlineData(INLINE_LIMIT));
        responder = responderPd.createQueuePair(new QueuePairConfig().completionQueue(responderCq));
        requester.connect(responder.localConnectionInfo());
        responder.connect(requester.localConnectionInfo());
        source = initiatorPd.registerMemory(initiator.allocateMemory(64 * 1024), AccessFlags.LOCAL_WRITE);
        target = responderPd.registerMemory(responderDevice.allocateMemory(64 * 1024),
            AccessFlags.LOCAL_WRITE | AccessFlags.REMOTE_WRITE);
        flags = SendFlags.SIGNALED | (length <= INLINE_LIMIT ? SendFlags.INLINE : 0);
    }

    private FabricContext context()
    {
        return new FabricContext().shmDirectory(shmDirectory).tcpAddress("127.0.0.1");
    }

    @Benchmark
    public long writeAndPoll()
    {
        batch.clear().add().write(1, source.address(), length, source.lkey(), target.address(), target.rkey(), flags);
        if (requester.postSend(batch) != PostResult.OK)
        {
            throw new IllegalStateException("post refused");
        }
        for (long polls = 0; polls < MAX_POLLS; polls++)
        {
            if (cq.poll(completions, 1) == 1)
            {
                if (completions[0].status() != WorkCompletionStatus.SUCCESS)
                {
                    throw new IllegalStateException("WRITE failed: " + completions[0]);
                }
                return completions[0].wrId();
            }
            if (polls >= SPIN_POLLS)
            {
                // Two cores: a poller that never yields starves the tcp NIC threads it is waiting for.
                Thread.yield();
            }
        }
        throw new IllegalStateException("no completion after " + MAX_POLLS + " polls");
    }

    @TearDown(Level.Trial)
    public void tearDown() throws IOException
    {
        initiatorFabric.close();
        responderFabric.close();
        try (Stream<Path> paths = Files.walk(shmDirectory))
        {
            for (final Path path : paths.sorted(Comparator.reverseOrder()).toList())
            {
                Files.deleteIfExists(path);
            }
        }
    }
}
