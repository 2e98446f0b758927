package io.verbus.archive;

import io.verbus.Verbus;
import io.verbus.media.rdma.RdmaCounters;
import org.agrona.concurrent.status.CountersReader;

/** The control port an {@code rdma:} publication on port 0 listens on, from its counter. */
final class StreamPublisherMainPort
{
    private StreamPublisherMainPort()
    {
    }

    static int of(final Verbus verbus)
    {
        final CountersReader counters = verbus.countersReader();
        final int[] port = { -1 };
        counters.forEach((counterId, typeId, keyBuffer, label) ->
        {
            if (RdmaCounters.CONTROL_PORT_TYPE_ID == typeId)
            {
                port[0] = (int)counters.getCounterValue(counterId);
            }
        });
        return port[0];
    }
}
