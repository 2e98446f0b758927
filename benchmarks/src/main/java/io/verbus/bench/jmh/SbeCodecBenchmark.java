package io.verbus.bench.jmh;

import io.verbus.sbe.marketdata.IncrementalRefreshDecoder;
import io.verbus.sbe.marketdata.IncrementalRefreshEncoder;
import io.verbus.sbe.marketdata.MDSide;
import io.verbus.sbe.marketdata.MDUpdateAction;
import io.verbus.sbe.marketdata.MessageHeaderDecoder;
import io.verbus.sbe.marketdata.MessageHeaderEncoder;
import org.agrona.concurrent.UnsafeBuffer;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Warmup;
import org.openjdk.jmh.infra.Blackhole;

import java.nio.ByteBuffer;
import java.util.concurrent.TimeUnit;

/**
 * Cost of the market-data codec on the feed's and the strategy's hot path: encode, and decode every field of, an
 * incremental refresh with 3 entries (a price move: NEW, DELETE, NEW), 8 + 20 + 4 + 3 * 32 = 128 bytes, in a direct
 * buffer as a log term would hold it.
 * <pre>
 * java -cp benchmarks/target/classes:$(cat benchmarks/target/classpath.txt) @etc/jvm.args \
 *     org.openjdk.jmh.Main SbeCodecBenchmark -f 1 -wi 3 -w 1s -i 5 -r 1s
 * </pre>
 */
@State(Scope.Thread)
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(value = 1, jvmArgsAppend = { "--add-exports=java.base/jdk.internal.misc=ALL-UNNAMED",
    "--sun-misc-unsafe-memory-access=allow" })
public class SbeCodecBenchmark
{
    private static final int ENTRIES = 3;
    private static final long PRICE = 100_250_000_000L;
    private static final long TICK = 10_000_000L;

    private final UnsafeBuffer encodeBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(256));
    private final UnsafeBuffer decodeBuffer = new UnsafeBuffer(ByteBuffer.allocateDirect(256));
    private final MessageHeaderEncoder headerEncoder = new MessageHeaderEncoder();
    private final IncrementalRefreshEncoder encoder = new IncrementalRefreshEncoder();
    private final MessageHeaderDecoder headerDecoder = new MessageHeaderDecoder();
    private final IncrementalRefreshDecoder decoder = new IncrementalRefreshDecoder();
    private long sequence;

    /** Encode one refresh into the buffer the decode benchmark reads. */
    @Setup
    public void setUp()
    {
        encode(decodeBuffer);
    }

    /**
     * @return encoded length, so the work cannot be dropped.
     */
    @Benchmark
    public int encodeIncrementalRefresh()
    {
        return encode(encodeBuffer);
    }

    /**
     * @param blackhole consumes every decoded field.
     */
    @Benchmark
    public void decodeIncrementalRefresh(final Blackhole blackhole)
    {
        decoder.wrapAndApplyHeader(decodeBuffer, 0, headerDecoder);
        blackhole.consume(decoder.sendingTimeNanos());
        blackhole.consume(decoder.feedSequence());
        blackhole.consume(decoder.matchEventIndicator().endOfEvent());
        for (final IncrementalRefreshDecoder.EntriesDecoder entry : decoder.entries())
        {
            blackhole.consume(entry.price().mantissa());
            blackhole.consume(entry.size());
            blackhole.consume(entry.rptSeq());
            blackhole.consume(entry.instrumentId());
            blackhole.consume(entry.priceLevel());
            blackhole.consume(entry.sideRaw());
            blackhole.consume(entry.updateActionRaw());
        }
    }

    private int encode(final UnsafeBuffer buffer)
    {
        final long seq = ++sequence;
        encoder.wrapAndApplyHeader(buffer, 0, headerEncoder)
            .sendingTimeNanos(seq * 1_000)
            .feedSequence(seq);
        encoder.matchEventIndicator().clear().endOfEvent(true);
        final IncrementalRefreshEncoder.EntriesEncoder entries = encoder.entriesCount(ENTRIES);
        entries.next().size(17).rptSeq(seq * 3).instrumentId(5).priceLevel((short)1).side(MDSide.BID)
            .updateAction(MDUpdateAction.NEW).price().mantissa(PRICE + TICK);
        entries.next().size(0).rptSeq(seq * 3 + 1).instrumentId(5).priceLevel((short)1).side(MDSide.OFFER)
            .updateAction(MDUpdateAction.DELETE).price().mantissa(PRICE + TICK);
        entries.next().size(42).rptSeq(seq * 3 + 2).instrumentId(5).priceLevel((short)10).side(MDSide.OFFER)
            .updateAction(MDUpdateAction.NEW).price().mantissa(PRICE + 11 * TICK);
        return MessageHeaderEncoder.ENCODED_LENGTH + encoder.encodedLength();
    }
}
