package io.verbus.media.rdma;

import org.agrona.concurrent.status.AtomicCounter;
import org.agrona.concurrent.status.CountersManager;

import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;

/**
 * The {@code rdma handshakes rejected} count of one publication or subscription. Each rejection is counted once,
 * with its log line; the counter shows this count plus what {@code alsoCounted} adds (a publication's share of its
 * endpoint's rejections) and never goes backwards when handshake threads race to update it.
 */
final class RejectedHandshakes implements AutoCloseable
{
    private final CountersManager countersManager;
    private final AtomicCounter counter;
    private final AtomicLong rejected = new AtomicLong();
    private final LongSupplier alsoCounted;

    RejectedHandshakes(final CountersManager countersManager, final String name, final LongSupplier alsoCounted)
    {
        this.countersManager = countersManager;
        this.alsoCounted = alsoCounted;
        counter = RdmaCounters.allocate(countersManager, RdmaCounters.HANDSHAKES_REJECTED_TYPE_ID,
            "rdma handshakes rejected: " + name);
        update();
    }

    long count()
    {
        return rejected.get() + alsoCounted.getAsLong();
    }

    /** One more rejection, shown at once. */
    void increment()
    {
        rejected.incrementAndGet();
        update();
    }

    /** Shows {@link #count()}, e.g. after {@code alsoCounted} moved. */
    void update()
    {
        if (null != counter)
        {
            counter.proposeMaxRelease(count());
        }
    }

    public void close()
    {
        RdmaCounters.free(countersManager, counter);
    }
}
