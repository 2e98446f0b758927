package io.verbus.bench;

import java.util.ArrayList;
import java.util.List;

/**
 * The seed comparison reproduced per fabric provider: TCP socket vs two-sided SEND/RECV vs one-sided RDMA WRITE,
 * each measured for latency, throughput and process CPU time per message.
 */
public final class SeedComparison
{
    public static final String LATENCY_PART = "seed-latency";
    public static final String THROUGHPUT_PART = "seed-throughput";
    static final String[] PROVIDERS = { "shm", "tcp", "verbs" };
    static final String[] METHODS = { "tcp-socket", "send-recv", "rdma-write" };

    private SeedComparison()
    {
    }

    /**
     * @param options the command line.
     * @param settings how long and hard to measure.
     * @param log     where progress goes.
     * @return one latency and one throughput result per provider, method and size.
     */
    public static List<BenchResult> run(
        final BenchOptions options, final RunSettings settings, final java.io.PrintStream log)
    {
        final List<BenchResult> results = new ArrayList<>();
        for (final String provider : PROVIDERS)
        {
            for (final String method : METHODS)
            {
                for (final int size : options.latencySizes())
                {
                    results.add(BenchResult.notRun(LATENCY_PART, method, "fabric " + provider, size,
                        "fabric providers not merged into the bench branch"));
                }
                for (final int size : options.throughputSizes())
                {
                    results.add(BenchResult.notRun(THROUGHPUT_PART, method, "fabric " + provider, size,
                        "fabric providers not merged into the bench branch"));
                }
            }
        }
        return results;
    }
}
