package io.verbus.bench;

import io.verbus.bench.contender.FabricSendReceiveContender;
import io.verbus.bench.contender.FabricWriteContender;
import io.verbus.bench.contender.TcpSocketContender;

import java.util.ArrayList;
import java.util.List;

/**
 * The seed comparison reproduced per fabric provider: a plain TCP socket, two-sided SEND/RECV and one-sided RDMA
 * WRITE, each measured for latency, throughput and process CPU time per message, in the same run as the rest.
 * The seed's figures came from ConnectX-6 hardware; here the providers are whatever this machine has.
 */
public final class SeedComparison
{
    public static final String LATENCY_PART = "seed-latency";
    public static final String THROUGHPUT_PART = "seed-throughput";
    static final String[] PROVIDERS = { "shm", "tcp", "verbs" };

    private SeedComparison()
    {
    }

    /**
     * @return the TCP baseline, then SEND/RECV and RDMA WRITE for every provider.
     */
    public static List<Contender> contenders()
    {
        final List<Contender> contenders = new ArrayList<>();
        contenders.add(new TcpSocketContender());
        for (final String provider : PROVIDERS)
        {
            contenders.add(new FabricSendReceiveContender(provider));
            contenders.add(new FabricWriteContender(provider));
        }
        return contenders;
    }

    /**
     * @param run how to measure.
     * @return one latency and one throughput result per contender and size.
     */
    public static List<BenchResult> run(final BenchRun run)
    {
        final List<BenchResult> results = new ArrayList<>();
        final List<Contender> contenders = contenders();
        for (final Contender contender : contenders)
        {
            results.addAll(run.latency(LATENCY_PART, contender));
        }
        for (final Contender contender : contenders)
        {
            results.addAll(run.throughput(THROUGHPUT_PART, contender));
        }
        return results;
    }
}
