package io.verbus.media.rdma.protocol;

/**
 * The subscriber's side of the control-connection handshake: HELLO out, CHALLENGE in, CONNECT out,
 * ACCEPT in, READY out. The subscriber registers its ring and position block only after the publisher's
 * CHALLENGE proved it knows the secret and passed validation, and releases them if anything fails later.
 */
public final class SubscriberHandshake
{
    /** The publication's log, as the CHALLENGE announced it. */
    public record PublicationInfo(int sessionId, int streamId, int initialTermId, int termLength, int mtuLength,
        int providerId, int commitWord)
    {
    }

    /** What the subscriber registered: its ring, its position block and its QP. */
    public record LocalOffer(long ringAddress, long ringLength, int ringRkey, long counterAddress, int counterRkey,
        QpInfoCodec.QpInfo qp, Object attachment, int commit, int receiveCredits)
    {
        /** A counter-mode offer (no RECVs posted). */
        public LocalOffer(final long ringAddress, final long ringLength, final int ringRkey, final long counterAddress,
            final int counterRkey, final QpInfoCodec.QpInfo qp, final Object attachment)
        {
            this(ringAddress, ringLength, ringRkey, counterAddress, counterRkey, qp, attachment,
                ChallengeFlyweight.COMMIT_COUNTER, 0);
        }
    }

    /**
     * What the publisher granted: the status slot, the join position, its QP, and the catch-up: where it starts
     * (the join position when none was granted), the oldest position the log held, and the READ-only log region.
     */
    public record Accepted(long statusAddress, int statusRkey, long joinPosition, QpInfoCodec.QpInfo publisherQp,
        long catchUpPosition, long oldestPosition, long logAddress, long logLength, int logRkey)
    {
    }

    /** The result of a whole handshake. */
    public record Result(PublicationInfo publication, LocalOffer offer, Accepted accepted)
    {
    }

    /** The media's side: called only after the publisher authenticated. */
    public interface Resources
    {
        LocalOffer prepare(PublicationInfo publication) throws HandshakeException;

        void connect(LocalOffer offer, PublicationInfo publication, Accepted accepted) throws HandshakeException;

        void release(LocalOffer offer);
    }

    private final int streamId;
    private final int requiredProviderId;
    private final boolean hasGroupTag;
    private final long groupTag;
    private final long catchUpRequest;
    private final HandshakeSteps steps;

    /**
     * @param catchUpRequest {@link ConnectFlyweight#CATCH_UP_NONE}, {@link ConnectFlyweight#CATCH_UP_TERM_START},
     *                       or the position to catch up from by RDMA READ of the publisher's log.
     */
    public SubscriberHandshake(
        final HandshakeAuthenticator authenticator,
        final int streamId,
        final int requiredProviderId,
        final boolean hasGroupTag,
        final long groupTag,
        final long stepTimeoutMs,
        final long catchUpRequest)
    {
        this.catchUpRequest = catchUpRequest;
        this.streamId = streamId;
        this.requiredProviderId = requiredProviderId;
        this.hasGroupTag = hasGroupTag;
        this.groupTag = groupTag;
        this.steps = new HandshakeSteps(authenticator, stepTimeoutMs, "publisher");
    }

    public Result run(final MessageTransport transport, final Resources resources) throws HandshakeException
    {
        LocalOffer offer = null;
        try
        {
            steps.nextNonce(steps.clientNonce);
            steps.hello.wrap(steps.out, 0).writeHeader()
                .minVersion(HandshakeHeader.MIN_SUPPORTED_VERSION)
                .maxVersion(HandshakeHeader.MAX_SUPPORTED_VERSION)
                .streamId(streamId)
                .flags(hasGroupTag ? HelloFlyweight.GROUP_TAG_FLAG : 0)
                .groupTag(hasGroupTag ? groupTag : 0)
                .clientNonce(steps.clientNonce);
            steps.keepHello(steps.out);
            transport.send(steps.out, 0, HelloFlyweight.LENGTH);

            steps.receive(transport, HandshakeHeader.CHALLENGE_TYPE);
            final ChallengeFlyweight challenge = steps.challenge.wrap(steps.in, 0);
            challenge.getServerNonce(steps.serverNonce);
            steps.verify(HandshakeHeader.CHALLENGE_TYPE); // the proof covers the server nonce just read
            HandshakeValidator.validateChallenge(challenge, streamId, requiredProviderId);
            final PublicationInfo publication = new PublicationInfo(challenge.sessionId(), challenge.streamId(),
                challenge.initialTermId(), challenge.termLength(), challenge.mtuLength(), challenge.providerId(),
                challenge.commit());

            offer = resources.prepare(publication);
            final ConnectFlyweight connect = steps.connect.wrap(steps.out, 0).writeHeader()
                .commit(offer.commit())
                .receiveCredits(offer.receiveCredits())
                .qpInfo(offer.qp())
                .catchUpPosition(catchUpRequest);
            connect.ring().set(offer.ringAddress(), offer.ringLength(), offer.ringRkey());
            connect.counter().set(offer.counterAddress(), SlotLayout.BLOCK_LENGTH, offer.counterRkey());
            steps.signAndSend(transport, HandshakeHeader.CONNECT_TYPE);

            steps.receiveSigned(transport, HandshakeHeader.ACCEPT_TYPE);
            final AcceptFlyweight accept = steps.accept.wrap(steps.in, 0);
            final QpInfoCodec.QpInfo publisherQp = new QpInfoCodec.QpInfo();
            HandshakeValidator.validateAccept(accept, publication.termLength(), publisherQp);
            final RemoteRegionFlyweight status = accept.status();
            final RemoteRegionFlyweight log = accept.log();
            final Accepted accepted = new Accepted(status.address(), status.rkey(), accept.joinPosition(), publisherQp,
                accept.catchUpPosition(), accept.oldestPosition(), log.address(), log.length(), log.rkey());

            resources.connect(offer, publication, accepted);
            HandshakeHeader.write(steps.out, 0, HandshakeHeader.READY_TYPE, HandshakeHeader.LENGTH);
            transport.send(steps.out, 0, HandshakeHeader.LENGTH);
            return new Result(publication, offer, accepted);
        }
        catch (final HandshakeException | RuntimeException ex)
        {
            if (null != offer)
            {
                resources.release(offer);
            }
            throw steps.fail(transport, ex, "subscriber set-up failed: ");
        }
    }
}
