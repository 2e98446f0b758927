package io.verbus.media.rdma.protocol;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.atomic.AtomicInteger;

/** Well-formed values and counting resources for handshake tests. */
final class HandshakeFixtures
{
    static final byte[] SECRET = "a-shared-secret-of-enough-length".getBytes(StandardCharsets.US_ASCII);
    static final byte[] WRONG_SECRET = "another-secret-of-enough-length!".getBytes(StandardCharsets.US_ASCII);
    static final int STREAM_ID = 1001;
    static final int TERM_LENGTH = 64 * 1024;
    static final PublisherHandshake.Shape SHAPE =
        new PublisherHandshake.Shape(77, STREAM_ID, 5, TERM_LENGTH, 1408, 1);

    private HandshakeFixtures()
    {
    }

    static QpInfoCodec.QpInfo qpInfo(final int qpn)
    {
        final QpInfoCodec.QpInfo info = new QpInfoCodec.QpInfo();
        info.qpn = qpn;
        info.psn = 0x1234;
        info.lid = 3;
        info.pathMtu = 4096;
        info.maxInline = 128;
        info.gid[15] = 1;
        return info;
    }

    /** Publisher resources that count what they register and check what they are given. */
    static final class CountingPublisherResources implements PublisherHandshake.Resources
    {
        final AtomicInteger admitted = new AtomicInteger();
        final AtomicInteger released = new AtomicInteger();
        volatile PublisherHandshake.SubscriberOffer lastOffer;

        public PublisherHandshake.Admission admit(final PublisherHandshake.SubscriberOffer offer)
        {
            lastOffer = offer;
            admitted.incrementAndGet();
            return new PublisherHandshake.Admission(0x7000_0000L, 99, 4096, qpInfo(22), "slot");
        }

        public void release(final PublisherHandshake.Admission admission)
        {
            released.incrementAndGet();
        }

        int live()
        {
            return admitted.get() - released.get();
        }
    }

    /** Subscriber resources that count what they register. */
    static class CountingSubscriberResources implements SubscriberHandshake.Resources
    {
        final AtomicInteger prepared = new AtomicInteger();
        final AtomicInteger connected = new AtomicInteger();
        final AtomicInteger released = new AtomicInteger();

        public SubscriberHandshake.LocalOffer prepare(final SubscriberHandshake.PublicationInfo publication)
        {
            prepared.incrementAndGet();
            return new SubscriberHandshake.LocalOffer(0x1000_0000L, 3L * publication.termLength(), 42,
                0x2000_0000L, 43, qpInfo(11), "ring");
        }

        public void connect(
            final SubscriberHandshake.LocalOffer offer,
            final SubscriberHandshake.PublicationInfo publication,
            final SubscriberHandshake.Accepted accepted)
        {
            connected.incrementAndGet();
        }

        public void release(final SubscriberHandshake.LocalOffer offer)
        {
            released.incrementAndGet();
        }

        int live()
        {
            return prepared.get() - released.get();
        }
    }
}
