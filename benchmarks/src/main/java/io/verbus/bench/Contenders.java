package io.verbus.bench;

import io.verbus.bench.contender.AeronContender;
import io.verbus.bench.contender.FloorContender;
import io.verbus.bench.contender.NotRunContender;
import io.verbus.bench.contender.TcpBusyPollContender;
import io.verbus.bench.contender.TcpSocketContender;

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
            new NotRunContender("verbus-ipc", "verbus native ipc: log",
                "bus-core not merged into the bench branch"),
            new NotRunContender("verbus-aeron-ipc", "verbus aeron:ipc (embedded Aeron driver)",
                "bus-core not merged into the bench branch"),
            new NotRunContender("verbus-rdma-shm-direct", "verbus rdma: provider=shm, direct mode",
                "rdma media not merged into the bench branch"),
            new NotRunContender("verbus-rdma-shm-agent", "verbus rdma: provider=shm, sender agent",
                "rdma media not merged into the bench branch"),
            new NotRunContender("verbus-rdma-tcp", "verbus rdma: provider=tcp",
                "rdma media not merged into the bench branch"),
            new NotRunContender("verbus-rdma-verbs", "verbus rdma: provider=verbs",
                "rdma media not merged into the bench branch"));
    }
}
