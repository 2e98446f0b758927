package io.verbus.media.rdma;

import io.verbus.ChannelUri;
import io.verbus.fabric.FabricContext;
import io.verbus.fabric.FaultInjection;
import io.verbus.media.ImageSink;
import io.verbus.media.MediaContext;
import io.verbus.media.MediaFactory;
import io.verbus.media.MediaReceiver;
import io.verbus.media.MediaSender;
import io.verbus.media.PublicationLog;

import java.util.Set;

/**
 * The {@code rdma} scheme: publications and subscriptions on {@code rdma:endpoint=host:port|...} channels,
 * replicated by one-sided WRITEs over a fabric provider (verbs, shm or tcp).
 */
public final class RdmaMediaFactory implements MediaFactory
{
    public static final String SCHEME = "rdma";
    /**
     * Test-only: byte placement of every WRITE on the soft providers ({@code in_order}, {@code reverse},
     * {@code shuffled}), so a cross-process test can run the protocol under reordering.
     */
    public static final String WRITE_PLACEMENT_PROP_NAME = "verbus.rdma.test.write.placement";

    public String scheme()
    {
        return SCHEME;
    }

    public Set<String> supportedKeys()
    {
        return RdmaChannelParams.MEDIA_KEYS;
    }

    public MediaSender newSender(final MediaContext context, final ChannelUri uri, final PublicationLog log)
    {
        final RdmaChannelParams params = RdmaChannelParams.from(uri);
        if (params.isIdleEvent())
        {
            throw new IllegalArgumentException("rdma channel: 'idle=event' is a subscription key (it lets a " +
                "subscription's polling thread block until new data); a publication does not take it");
        }
        return new RdmaSender(
            new RdmaChannelContext(context, params, fabricContext(params, true), RdmaSecret.resolve(params)), log);
    }

    public MediaReceiver newReceiver(
        final MediaContext context, final ChannelUri uri, final int streamId, final ImageSink images)
    {
        final RdmaChannelParams params = RdmaChannelParams.from(uri);
        return new RdmaReceiver(
            new RdmaChannelContext(context, params, fabricContext(params, false), RdmaSecret.resolve(params)), streamId,
            images);
    }

    static FabricContext fabricContext(final RdmaChannelParams params, final boolean publication)
    {
        final FabricContext context = new FabricContext();
        TcpNicAddress.applyDefault(context, params, publication);
        final String placement = System.getProperty(WRITE_PLACEMENT_PROP_NAME);
        if (null != placement && !placement.isBlank())
        {
            context.faultInjection(new FaultInjection().writePlacement(
                FaultInjection.WritePlacement.valueOf(placement.trim().toUpperCase(java.util.Locale.ROOT))));
        }
        return context;
    }
}
