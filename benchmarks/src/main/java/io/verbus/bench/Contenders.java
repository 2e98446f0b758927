package io.verbus.bench;

import io.verbus.bench.contender.AeronContender;
import io.verbus.bench.contender.FloorContender;
import io.verbus.bench.contender.TcpBusyPollContender;
import io.verbus.bench.contender.TcpSocketContender;
import io.verbus.bench.contender.VerbusContender;

import java.util.List;

/**
 * Every contender of the latency and throughput parts, in table order: the floor first, then the references, then
 * Verbus.
 */
public final class Contenders
{
    private Contenders()
    {
    }

    public static List<Contender> all()
    {
        return List.of(
            new FloorContender(),
            new TcpSocketContender(),
            new TcpBusyPollContender(),
            new AeronContender(AeronContender.Media.IPC),
            new AeronContender(AeronContender.Media.UDP),
            new VerbusContender(VerbusContender.Variant.IPC),
            new VerbusContender(VerbusContender.Variant.AERON_IPC),
            new VerbusContender(VerbusContender.Variant.RDMA_SHM_DIRECT),
            new VerbusContender(VerbusContender.Variant.RDMA_SHM_AGENT),
            new VerbusContender(VerbusContender.Variant.RDMA_TCP),
            new VerbusContender(VerbusContender.Variant.RDMA_VERBS));
    }
}
