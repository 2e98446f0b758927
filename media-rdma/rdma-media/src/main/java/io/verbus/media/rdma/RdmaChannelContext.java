package io.verbus.media.rdma;

import io.verbus.fabric.FabricContext;
import io.verbus.media.MediaContext;
import io.verbus.media.rdma.protocol.HandshakeAuthenticator;
import org.agrona.concurrent.status.CountersManager;

import java.util.concurrent.TimeUnit;

/**
 * What every part of one {@code rdma:} channel end (the sender or receiver agent and its control thread) takes from
 * the driver and the configuration: the driver's services, the parsed channel, the fabric configuration and the
 * shared secret, plus what is derived from them once. Built by {@link RdmaMediaFactory} per publication or
 * subscription; read-only after construction.
 */
public final class RdmaChannelContext
{
    private final MediaContext media;
    private final RdmaChannelParams params;
    private final FabricContext fabricContext;
    private final byte[] secret;
    private final long stepTimeoutMs;

    /**
     * @param media         the driver's services (clocks, error handler, counters).
     * @param params        the channel.
     * @param fabricContext fabric configuration (fault injection in tests).
     * @param secret        the shared secret for the handshake; copied.
     */
    public RdmaChannelContext(
        final MediaContext media,
        final RdmaChannelParams params,
        final FabricContext fabricContext,
        final byte[] secret)
    {
        this.media = media;
        this.params = params;
        this.fabricContext = fabricContext;
        this.secret = secret.clone();
        this.stepTimeoutMs = Math.max(1, TimeUnit.NANOSECONDS.toMillis(params.timeoutNs()));
    }

    public RdmaChannelParams params()
    {
        return params;
    }

    public FabricContext fabricContext()
    {
        return fabricContext;
    }

    /** @return the driver's services: clocks, error handler, counters. */
    public MediaContext media()
    {
        return media;
    }

    public CountersManager countersManager()
    {
        return media.countersManager();
    }

    /** @return the bound on each handshake step: the channel's {@code timeout}, in whole milliseconds, at least 1. */
    long stepTimeoutMs()
    {
        return stepTimeoutMs;
    }

    /** @return an authenticator over the channel's secret, for one control thread ({@code Mac} is not thread-safe). */
    HandshakeAuthenticator newAuthenticator()
    {
        return new HandshakeAuthenticator(secret);
    }
}
