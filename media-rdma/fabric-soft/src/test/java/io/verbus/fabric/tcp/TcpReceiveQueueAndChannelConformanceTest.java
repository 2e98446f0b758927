package io.verbus.fabric.tcp;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.conformance.ReceiveQueueAndChannelConformanceTest;

/**
 * SRQ and completion channel conformance on tcp over localhost: two tcp devices (two NICs) in this JVM.
 */
class TcpReceiveQueueAndChannelConformanceTest extends ReceiveQueueAndChannelConformanceTest
{
    @Override
    protected Fabric newFabric()
    {
        return Fabrics.open("tcp", new FabricContext().tcpAddress("127.0.0.1"));
    }
}
