package io.verbus.fabric.verbs;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.conformance.FabricConformanceTest;
import org.junit.jupiter.api.Order;

/**
 * The fabric conformance suite on the verbs provider against a real RDMA device. The peer is a second
 * verbs fabric in this JVM with its own device context on the same device (on Soft-RoCE: two QPs on one
 * rxe device, connected to each other; rxe loops the packets back through its whole requester/responder
 * path). Peer death is the peer closing its device, which destroys its QP.
 * <p>
 * Needs a device, so it is an IT: the Soft-RoCE guest runs it (softroce/run.sh), not surefire on the host.
 */
// The guest runs the classes in this order: the latency loop warms the JIT on the post/poll path first.
@Order(3)
class VerbsConformanceIT extends FabricConformanceTest
{
    @Override
    protected Fabric newFabric()
    {
        return Fabrics.open(VerbsFabricProvider.NAME);
    }
}
