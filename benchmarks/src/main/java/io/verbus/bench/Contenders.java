package io.verbus.bench;

import io.verbus.bench.contender.AeronContender;
import io.verbus.bench.contender.CrossProcessContender;
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

    /**
     * @param childCpu CPU the child process of a cross-process contender pins its thread to (the ponger's), or -1.
     * @return every contender in table order.
     */
    public static List<Contender> all(final int childCpu)
    {
        return List.of(
            new FloorContender(),
            new TcpSocketContender(),
            new TcpBusyPollContender(),
            new TcpBusyPollContender(true),
            new AeronContender(AeronContender.Media.IPC),
            new AeronContender(AeronContender.Media.UDP),
            new VerbusContender(VerbusContender.Variant.IPC),
            new VerbusContender(VerbusContender.Variant.AERON_IPC),
            new VerbusContender(VerbusContender.Variant.RDMA_SHM_DIRECT),
            new VerbusContender(VerbusContender.Variant.RDMA_SHM_IMM),
            new VerbusContender(VerbusContender.Variant.RDMA_SHM_AGENT),
            new VerbusContender(VerbusContender.Variant.RDMA_TCP),
            new VerbusContender(VerbusContender.Variant.RDMA_VERBS),
            new VerbusContender(VerbusContender.Variant.RDMA_VERBS_IMM),
            new CrossProcessContender(CrossProcessContender.Kind.AERON_IPC, childCpu),
            new CrossProcessContender(CrossProcessContender.Kind.VERBUS_RDMA_SHM_DIRECT, childCpu),
            new CrossProcessContender(CrossProcessContender.Kind.VERBUS_RDMA_SHM_AGENT, childCpu),
            new CrossProcessContender(CrossProcessContender.Kind.VERBUS_RDMA_SHM_IMM_DIRECT, childCpu),
            new CrossProcessContender(CrossProcessContender.Kind.VERBUS_RDMA_VERBS_DIRECT, childCpu),
            new CrossProcessContender(CrossProcessContender.Kind.VERBUS_RDMA_VERBS_IMM_DIRECT, childCpu));
    }
}
