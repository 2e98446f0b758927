package io.verbus.fabric.verbs;

import io.verbus.fabric.Fabric;
import io.verbus.fabric.Fabrics;
import io.verbus.fabric.conformance.ReceiveQueueAndChannelConformanceTest;
import org.junit.jupiter.api.Order;

/**
 * SRQ and completion channel conformance on the verbs provider against a real RDMA device: both devices are
 * contexts of the same NIC (on Soft-RoCE two QPs of one rxe device, looped back through rxe's whole path);
 * {@code ibv_create_srq}, {@code ibv_post_srq_recv} through the ops table, {@code ibv_req_notify_cq} through the ops
 * table, {@code ibv_get_cq_event} after {@code poll(2)} on the channel's descriptor, {@code ibv_ack_cq_events}.
 * <p>
 * Needs a device, so it is an IT: the Soft-RoCE guest runs it (softroce/guest-run.sh), not surefire on the host.
 */
@Order(4)
class VerbsReceiveQueueAndChannelConformanceIT extends ReceiveQueueAndChannelConformanceTest
{
    @Override
    protected Fabric newFabric()
    {
        return Fabrics.open(VerbsFabricProvider.NAME);
    }

    @Override
    protected int raceRounds()
    {
        return 500; // every round is a SEND round trip through an emulated NIC (tens of microseconds under TCG)
    }
}
