package io.verbus.media.rdma.protocol;

import org.junit.jupiter.api.Test;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.verbus.media.rdma.protocol.HandshakeFixtures.SECRET;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.SHAPE;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.STREAM_ID;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.TERM_LENGTH;
import static io.verbus.media.rdma.protocol.HandshakeFixtures.WRONG_SECRET;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class HandshakeTest
{
    private record Outcome(Object publisher, Object subscriber)
    {
    }

    private static Outcome runBoth(
        final PublisherHandshake publisher,
        final HandshakeFixtures.CountingPublisherResources publisherResources,
        final SubscriberHandshake subscriber,
        final HandshakeFixtures.CountingSubscriberResources subscriberResources) throws Exception
    {
        return runBoth(publisher, publisherResources, subscriber, subscriberResources, (bytes) -> {});
    }

    /** @param tamper what a man in the middle does to each message the subscriber sends. */
    private static Outcome runBoth(
        final PublisherHandshake publisher,
        final HandshakeFixtures.CountingPublisherResources publisherResources,
        final SubscriberHandshake subscriber,
        final HandshakeFixtures.CountingSubscriberResources subscriberResources,
        final java.util.function.Consumer<byte[]> tamper) throws Exception
    {
        final QueueTransport[] pair = QueueTransport.pair();
        pair[1].tamper(tamper);
        final CompletableFuture<Object> pub = CompletableFuture.supplyAsync(() ->
        {
            try
            {
                return publisher.run(pair[0], publisherResources);
            }
            catch (final HandshakeException ex)
            {
                return ex;
            }
        });
        Object sub;
        try
        {
            sub = subscriber.run(pair[1], subscriberResources);
        }
        catch (final HandshakeException ex)
        {
            sub = ex;
        }
        return new Outcome(pub.get(10, TimeUnit.SECONDS), sub);
    }

    @Test
    void shouldCompleteHandshakeAndCarryEveryField() throws Exception
    {
        final var publisherResources = new HandshakeFixtures.CountingPublisherResources();
        final var subscriberResources = new HandshakeFixtures.CountingSubscriberResources();
        final Outcome outcome = runBoth(
            new PublisherHandshake(new HandshakeAuthenticator(SECRET), SHAPE, 2000), publisherResources,
            new SubscriberHandshake(new HandshakeAuthenticator(SECRET), STREAM_ID, 1, true, 9, 2000,
                ConnectFlyweight.CATCH_UP_NONE),
            subscriberResources);

        final var admission = assertInstanceOf(PublisherHandshake.Admission.class, outcome.publisher());
        final var result = assertInstanceOf(SubscriberHandshake.Result.class, outcome.subscriber());
        assertEquals("slot", admission.attachment());
        assertEquals(77, result.publication().sessionId());
        assertEquals(5, result.publication().initialTermId());
        assertEquals(TERM_LENGTH, result.publication().termLength());
        assertEquals(1408, result.publication().mtuLength());
        assertEquals(1, result.publication().providerId());
        assertEquals(0x7000_0000L, result.accepted().statusAddress());
        assertEquals(99, result.accepted().statusRkey());
        assertEquals(4096, result.accepted().joinPosition());
        assertEquals(22, result.accepted().publisherQp().qpn);

        final var offer = publisherResources.lastOffer;
        assertEquals(0x1000_0000L, offer.ringAddress());
        assertEquals(3L * TERM_LENGTH, offer.ringLength());
        assertEquals(42, offer.ringRkey());
        assertEquals(0x2000_0000L, offer.counterAddress());
        assertEquals(43, offer.counterRkey());
        assertEquals(11, offer.qp().qpn);
        assertArrayEquals(HandshakeFixtures.qpInfo(11).gid, offer.qp().gid);
        assertTrue(offer.hasGroupTag());
        assertEquals(9, offer.groupTag());
        assertEquals(1, subscriberResources.connected.get());
        assertEquals(0, publisherResources.released.get());
    }

    /** Subscriber resources that offer the given commit mode and receive credits. */
    private static final class CommitOfferingResources extends HandshakeFixtures.CountingSubscriberResources
    {
        private final int commit;
        private final int credits;
        volatile SubscriberHandshake.PublicationInfo publication;

        CommitOfferingResources(final int commit, final int credits)
        {
            this.commit = commit;
            this.credits = credits;
        }

        public SubscriberHandshake.LocalOffer prepare(final SubscriberHandshake.PublicationInfo publication)
        {
            this.publication = publication;
            final SubscriberHandshake.LocalOffer offer = super.prepare(publication);
            return new SubscriberHandshake.LocalOffer(offer.ringAddress(), offer.ringLength(), offer.ringRkey(),
                offer.counterAddress(), offer.counterRkey(), offer.qp(), offer.attachment(), commit, credits);
        }
    }

    private static PublisherHandshake.Shape shape(final int commitWord)
    {
        return new PublisherHandshake.Shape(SHAPE.sessionId(), SHAPE.streamId(), SHAPE.initialTermId(),
            SHAPE.termLength(), SHAPE.mtuLength(), SHAPE.providerId(), commitWord);
    }

    @Test
    void shouldCarryTheCommitModeAndTheReceiveCredits() throws Exception
    {
        final var publisherResources = new HandshakeFixtures.CountingPublisherResources();
        final var subscriberResources = new CommitOfferingResources(ChallengeFlyweight.COMMIT_IMM, 512);
        final int word = ChallengeFlyweight.COMMIT_AUTO | ChallengeFlyweight.COMMIT_AUTO_PREFERS_IMM_FLAG;
        final Outcome outcome = runBoth(
            new PublisherHandshake(new HandshakeAuthenticator(SECRET), shape(word), 2000), publisherResources,
            new SubscriberHandshake(new HandshakeAuthenticator(SECRET), STREAM_ID, 0, false, 0, 2000,
                ConnectFlyweight.CATCH_UP_NONE),
            subscriberResources);

        assertInstanceOf(PublisherHandshake.Admission.class, outcome.publisher());
        assertInstanceOf(SubscriberHandshake.Result.class, outcome.subscriber());
        assertEquals(word, subscriberResources.publication.commitWord());
        assertEquals(ChallengeFlyweight.COMMIT_IMM, publisherResources.lastOffer.commit());
        assertEquals(512, publisherResources.lastOffer.receiveCredits());
    }

    @Test
    void shouldRefuseASubscriberThatAgreedToAnotherCommitModeThanThePublicationRequires() throws Exception
    {
        final var publisherResources = new HandshakeFixtures.CountingPublisherResources();
        final var subscriberResources = new CommitOfferingResources(ChallengeFlyweight.COMMIT_COUNTER, 0);
        final Outcome outcome = runBoth(
            new PublisherHandshake(new HandshakeAuthenticator(SECRET), shape(ChallengeFlyweight.COMMIT_IMM), 2000),
            publisherResources,
            new SubscriberHandshake(new HandshakeAuthenticator(SECRET), STREAM_ID, 0, false, 0, 2000,
                ConnectFlyweight.CATCH_UP_NONE),
            subscriberResources);

        final var publisherFailure = assertInstanceOf(HandshakeException.class, outcome.publisher());
        assertEquals(HandshakeException.Reason.COMMIT_MISMATCH, publisherFailure.reason());
        assertEquals("the subscriber agreed to commit=counter but this publication requires commit=imm",
            publisherFailure.detail());
        final var subscriberFailure = assertInstanceOf(HandshakeException.class, outcome.subscriber());
        assertTrue(subscriberFailure.getMessage().contains("COMMIT_MISMATCH"), subscriberFailure.getMessage());
        assertEquals(0, publisherResources.admitted.get(), "nothing registered for it");
        assertEquals(0, subscriberResources.live(), "the subscriber released what it prepared");
    }

    @Test
    void shouldRejectWrongSecretOnBothSidesWithNothingRegistered() throws Exception
    {
        final var publisherResources = new HandshakeFixtures.CountingPublisherResources();
        final var subscriberResources = new HandshakeFixtures.CountingSubscriberResources();
        final Outcome outcome = runBoth(
            new PublisherHandshake(new HandshakeAuthenticator(SECRET), SHAPE, 2000), publisherResources,
            new SubscriberHandshake(new HandshakeAuthenticator(WRONG_SECRET), STREAM_ID, 0, false, 0, 2000,
                ConnectFlyweight.CATCH_UP_NONE),
            subscriberResources);

        final var subscriberFailure = assertInstanceOf(HandshakeException.class, outcome.subscriber());
        assertEquals(HandshakeException.Reason.AUTHENTICATION_FAILED, subscriberFailure.reason());
        final var publisherFailure = assertInstanceOf(HandshakeException.class, outcome.publisher());
        assertEquals(HandshakeException.Reason.PEER_REJECTED, publisherFailure.reason());
        assertTrue(publisherFailure.getMessage().contains("AUTHENTICATION_FAILED"), publisherFailure.getMessage());
        assertEquals(0, publisherResources.admitted.get());
        assertEquals(0, subscriberResources.prepared.get());
    }

    @Test
    void shouldFailAuthenticationWhenTheHelloWasAlteredInFlight() throws Exception
    {
        for (int variant = 0; variant < 2; variant++)
        {
            final var publisherResources = new HandshakeFixtures.CountingPublisherResources();
            final var subscriberResources = new HandshakeFixtures.CountingSubscriberResources();
            final boolean dropTheTag = 0 == variant;
            // The HELLO carries no proof of its own: its flags and group tag (flow control's fc=tagged) are bound by
            // the proofs that follow, so a man in the middle who adds or removes the tag is caught.
            final Outcome outcome = runBoth(
                new PublisherHandshake(new HandshakeAuthenticator(SECRET), SHAPE, 2000), publisherResources,
                new SubscriberHandshake(new HandshakeAuthenticator(SECRET), STREAM_ID, 0, dropTheTag, 77, 2000,
                    ConnectFlyweight.CATCH_UP_NONE),
                subscriberResources,
                (bytes) ->
                {
                    final org.agrona.concurrent.UnsafeBuffer message = new org.agrona.concurrent.UnsafeBuffer(bytes);
                    if (HandshakeHeader.HELLO_TYPE == HandshakeHeader.type(message, 0))
                    {
                        message.putInt(HelloFlyweight.FLAGS_OFFSET, dropTheTag ? 0 : HelloFlyweight.GROUP_TAG_FLAG,
                            java.nio.ByteOrder.LITTLE_ENDIAN);
                        message.putLong(HelloFlyweight.GROUP_TAG_OFFSET, dropTheTag ? 0 : 99,
                            java.nio.ByteOrder.LITTLE_ENDIAN);
                    }
                });

            final var subscriberFailure = assertInstanceOf(HandshakeException.class, outcome.subscriber());
            assertEquals(HandshakeException.Reason.AUTHENTICATION_FAILED, subscriberFailure.reason(),
                subscriberFailure.getMessage());
            assertInstanceOf(HandshakeException.class, outcome.publisher());
            assertEquals(0, publisherResources.admitted.get(), "nothing admitted");
            assertEquals(0, subscriberResources.prepared.get(), "nothing prepared");
        }
    }

    @Test
    void shouldRejectStreamMismatchBeforeAnyRegistration() throws Exception
    {
        final var publisherResources = new HandshakeFixtures.CountingPublisherResources();
        final var subscriberResources = new HandshakeFixtures.CountingSubscriberResources();
        final Outcome outcome = runBoth(
            new PublisherHandshake(new HandshakeAuthenticator(SECRET), SHAPE, 2000), publisherResources,
            new SubscriberHandshake(new HandshakeAuthenticator(SECRET), STREAM_ID + 1, 0, false, 0, 2000,
                ConnectFlyweight.CATCH_UP_NONE),
            subscriberResources);

        assertEquals(HandshakeException.Reason.STREAM_MISMATCH,
            assertInstanceOf(HandshakeException.class, outcome.publisher()).reason());
        assertEquals(HandshakeException.Reason.PEER_REJECTED,
            assertInstanceOf(HandshakeException.class, outcome.subscriber()).reason());
        assertEquals(0, publisherResources.admitted.get());
        assertEquals(0, subscriberResources.prepared.get());
    }

    @Test
    void shouldRejectProviderMismatch() throws Exception
    {
        final var subscriberResources = new HandshakeFixtures.CountingSubscriberResources();
        final Outcome outcome = runBoth(
            new PublisherHandshake(new HandshakeAuthenticator(SECRET), SHAPE, 2000),
            new HandshakeFixtures.CountingPublisherResources(),
            new SubscriberHandshake(new HandshakeAuthenticator(SECRET), STREAM_ID, 3, false, 0, 2000,
                ConnectFlyweight.CATCH_UP_NONE),
            subscriberResources);
        final HandshakeException mismatch = assertInstanceOf(HandshakeException.class, outcome.subscriber());
        assertEquals(HandshakeException.Reason.PROVIDER_MISMATCH, mismatch.reason());
        assertTrue(mismatch.getMessage().contains("uses provider " + ProviderIds.name(SHAPE.providerId()) +
            " but this subscription requires provider=verbs"), mismatch.getMessage());
        assertEquals(0, subscriberResources.prepared.get());
    }

    @Test
    void shouldTimeOutASilentPeer()
    {
        final QueueTransport[] pair = QueueTransport.pair();
        final var resources = new HandshakeFixtures.CountingPublisherResources();
        final HandshakeException ex = assertThrows(HandshakeException.class,
            () -> new PublisherHandshake(new HandshakeAuthenticator(SECRET), SHAPE, 50).run(pair[0], resources));
        assertEquals(HandshakeException.Reason.TIMEOUT, ex.reason());
        assertEquals(0, resources.admitted.get());
    }

    @Test
    void shouldRejectTooShortSecret()
    {
        assertThrows(IllegalArgumentException.class, () -> new HandshakeAuthenticator(new byte[8]));
    }

    @Test
    void shouldDetectTornSlotWrites()
    {
        final var buffer = new org.agrona.concurrent.UnsafeBuffer(new byte[64]);
        final long[] out = new long[2];
        org.junit.jupiter.api.Assertions.assertFalse(SlotLayout.read(buffer, 0, out), "a zeroed block is no value");
        SlotLayout.encode(buffer, 0, 4096, 123);
        assertTrue(SlotLayout.read(buffer, 0, out));
        assertEquals(4096, out[0]);
        assertEquals(123, out[1]);

        // Every mix of old and new bytes that is neither the old nor the new block must fail the check.
        final var next = new org.agrona.concurrent.UnsafeBuffer(new byte[64]);
        SlotLayout.encode(next, 0, 4096 + 65536 + 32, 124);
        final java.util.Random random = new java.util.Random(5);
        int torn = 0;
        for (int i = 0; i < 20_000; i++)
        {
            final var mixed = new org.agrona.concurrent.UnsafeBuffer(new byte[64]);
            boolean fromOld = false;
            boolean fromNew = false;
            for (int b = 0; b < SlotLayout.WRITE_LENGTH; b++)
            {
                final boolean takeNew = random.nextBoolean();
                mixed.putByte(b, takeNew ? next.getByte(b) : buffer.getByte(b));
                fromNew |= takeNew && next.getByte(b) != buffer.getByte(b);
                fromOld |= !takeNew && next.getByte(b) != buffer.getByte(b);
            }
            if (fromOld && fromNew)
            {
                torn++;
                org.junit.jupiter.api.Assertions.assertFalse(SlotLayout.read(mixed, 0, out), "torn block accepted");
            }
        }
        assertTrue(torn > 10_000);
    }
}
