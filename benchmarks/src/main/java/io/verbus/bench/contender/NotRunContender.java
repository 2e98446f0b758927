package io.verbus.bench.contender;

import io.verbus.bench.Contender;
import io.verbus.bench.PingPongPair;
import io.verbus.bench.StreamPair;

/**
 * A contender that cannot run here, kept in the list so the table shows it as "not run: reason" rather than
 * leaving it out.
 */
public final class NotRunContender implements Contender
{
    private final String name;
    private final String provider;
    private final String reason;

    public NotRunContender(final String name, final String provider, final String reason)
    {
        this.name = name;
        this.provider = provider;
        this.reason = reason;
    }

    @Override
    public String name()
    {
        return name;
    }

    @Override
    public String provider()
    {
        return provider;
    }

    @Override
    public String unavailableReason()
    {
        return reason;
    }

    @Override
    public PingPongPair openPingPong(final int maxLength)
    {
        throw new UnsupportedOperationException(name + " cannot run: " + reason);
    }

    @Override
    public StreamPair openStream(final int maxLength)
    {
        throw new UnsupportedOperationException(name + " cannot run: " + reason);
    }
}
