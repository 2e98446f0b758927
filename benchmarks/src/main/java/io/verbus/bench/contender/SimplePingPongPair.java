package io.verbus.bench.contender;

import io.verbus.bench.PingPongPair;
import io.verbus.bench.Pinger;
import io.verbus.bench.Ponger;
import org.agrona.CloseHelper;

/**
 * A pair made of two ends and what closes them (public for the harness's own tests' contenders).
 */
public final class SimplePingPongPair implements PingPongPair
{
    private final Pinger pinger;
    private final Ponger ponger;
    private final AutoCloseable resources;

    public SimplePingPongPair(final Pinger pinger, final Ponger ponger, final AutoCloseable resources)
    {
        this.pinger = pinger;
        this.ponger = ponger;
        this.resources = resources;
    }

    @Override
    public Pinger pinger()
    {
        return pinger;
    }

    @Override
    public Ponger ponger()
    {
        return ponger;
    }

    @Override
    public void close()
    {
        CloseHelper.quietClose(resources);
    }
}
