package io.verbus.fabric.tcp;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.conformance.ConformancePeer;
import io.verbus.fabric.conformance.FabricConformanceTest;
import io.verbus.fabric.conformance.InProcessPeer;

/**
 * The conformance suite on tcp over localhost: the peer is a second tcp device (its own NIC thread and
 * listener) in this JVM; peer death closes its sockets and stops its NIC, as a dying process would.
 */
class TcpConformanceTest extends FabricConformanceTest
{
    @Override
    protected Fabric newFabric()
    {
        return Fabrics.open("tcp", new FabricContext().tcpAddress("127.0.0.1"));
    }

    @Override
    protected ConformancePeer newPeer()
    {
        final FabricContext context = new FabricContext().tcpAddress("127.0.0.1");
        return new InProcessPeer(Fabrics.open("tcp", context), context.faultInjection()::kill);
    }
}
