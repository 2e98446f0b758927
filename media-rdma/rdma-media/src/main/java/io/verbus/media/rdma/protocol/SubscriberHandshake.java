package io.verbus.media.rdma.protocol;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.verbus.media.rdma.protocol.HandshakeException.Reason.AUTHENTICATION_FAILED;

/**
 * The subscriber's side of the control-connection handshake: HELLO out, CHALLENGE in, CONNECT out,
 * ACCEPT in, READY out. The subscriber registers its ring and position block only after the publisher's
 * CHALLENGE proved it knows the secret and passed validation, and releases them if anything fails later.
 */
public final class SubscriberHandshake
{
    /** The publication's log, as the CHALLENGE announced it. */
    public record PublicationInfo(int sessionId, int streamId, int initialTermId, int termLength, int mtuLength,
        int providerId)
    {
    }

    /** What the subscriber registered: its ring, its position block and its QP. */
    public record LocalOffer(long ringAddress, long ringLength, int ringRkey, long counterAddress, int counterRkey,
        QpInfoCodec.QpInfo qp, Object attachment)
    {
    }

    /** What the publisher granted: the status slot and the join position, and its QP. */
    public record Accepted(long statusAddress, int statusRkey, long joinPosition, QpInfoCodec.QpInfo publisherQp)
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

    private final HandshakeAuthenticator authenticator;
    private final int streamId;
    private final int requiredProviderId;
    private final boolean hasGroupTag;
    private final long groupTag;
    private final long stepTimeoutMs;
    private final UnsafeBuffer in = new UnsafeBuffer(new byte[HandshakeHeader.MAX_MESSAGE_LENGTH]);
    private final ExpandableArrayBuffer out = new ExpandableArrayBuffer(HandshakeHeader.MAX_MESSAGE_LENGTH);
    private final HelloFlyweight hello = new HelloFlyweight();
    private final ChallengeFlyweight challenge = new ChallengeFlyweight();
    private final ConnectFlyweight connect = new ConnectFlyweight();
    private final AcceptFlyweight accept = new AcceptFlyweight();
    private final RejectFlyweight reject = new RejectFlyweight();
    private final byte[] clientNonce = new byte[HandshakeHeader.NONCE_LENGTH];
    private final byte[] serverNonce = new byte[HandshakeHeader.NONCE_LENGTH];

    public SubscriberHandshake(
        final HandshakeAuthenticator authenticator,
        final int streamId,
        final int requiredProviderId,
        final boolean hasGroupTag,
        final long groupTag,
        final long stepTimeoutMs)
    {
        this.authenticator = authenticator;
        this.streamId = streamId;
        this.requiredProviderId = requiredProviderId;
        this.hasGroupTag = hasGroupTag;
        this.groupTag = groupTag;
        this.stepTimeoutMs = stepTimeoutMs;
    }

    public Result run(final MessageTransport transport, final Resources resources) throws HandshakeException
    {
        LocalOffer offer = null;
        try
        {
            authenticator.nextNonce(clientNonce);
            hello.wrap(out, 0).writeHeader()
                .minVersion(HandshakeHeader.MIN_SUPPORTED_VERSION)
                .maxVersion(HandshakeHeader.MAX_SUPPORTED_VERSION)
                .streamId(streamId)
                .flags(hasGroupTag ? HelloFlyweight.GROUP_TAG_FLAG : 0)
                .groupTag(hasGroupTag ? groupTag : 0)
                .clientNonce(clientNonce);
            transport.send(out, 0, HelloFlyweight.LENGTH);

            receive(transport, HandshakeHeader.CHALLENGE_TYPE);
            challenge.wrap(in, 0);
            challenge.getServerNonce(serverNonce);
            if (!authenticator.verify(HandshakeAuthenticator.CHALLENGE_LABEL, clientNonce, serverNonce, in, 0,
                ChallengeFlyweight.PROOF_OFFSET))
            {
                throw new HandshakeException(AUTHENTICATION_FAILED, "CHALLENGE.proof does not match the shared secret");
            }
            HandshakeValidator.validateChallenge(challenge, streamId, requiredProviderId);
            final PublicationInfo publication = new PublicationInfo(challenge.sessionId(), challenge.streamId(),
                challenge.initialTermId(), challenge.termLength(), challenge.mtuLength(), challenge.providerId());

            offer = resources.prepare(publication);
            connect.wrap(out, 0).writeHeader()
                .ringAddress(offer.ringAddress())
                .ringLength(offer.ringLength())
                .ringRkey(offer.ringRkey())
                .counterAddress(offer.counterAddress())
                .counterLength(SlotLayout.BLOCK_LENGTH)
                .counterRkey(offer.counterRkey())
                .qpInfo(offer.qp());
            authenticator.sign(HandshakeAuthenticator.CONNECT_LABEL, clientNonce, serverNonce, out, 0,
                ConnectFlyweight.PROOF_OFFSET);
            transport.send(out, 0, ConnectFlyweight.LENGTH);

            receive(transport, HandshakeHeader.ACCEPT_TYPE);
            if (!authenticator.verify(HandshakeAuthenticator.ACCEPT_LABEL, clientNonce, serverNonce, in, 0,
                AcceptFlyweight.PROOF_OFFSET))
            {
                throw new HandshakeException(AUTHENTICATION_FAILED, "ACCEPT.proof does not match the shared secret");
            }
            accept.wrap(in, 0);
            final QpInfoCodec.QpInfo publisherQp = new QpInfoCodec.QpInfo();
            HandshakeValidator.validateAccept(accept, publication.termLength(), publisherQp);
            final Accepted accepted = new Accepted(
                accept.statusAddress(), accept.statusRkey(), accept.joinPosition(), publisherQp);

            resources.connect(offer, publication, accepted);
            HandshakeHeader.write(out, 0, HandshakeHeader.READY_TYPE, HandshakeHeader.LENGTH);
            transport.send(out, 0, HandshakeHeader.LENGTH);
            return new Result(publication, offer, accepted);
        }
        catch (final HandshakeException ex)
        {
            if (null != offer)
            {
                resources.release(offer);
            }
            sendReject(transport, ex);
            throw ex;
        }
        catch (final RuntimeException ex)
        {
            if (null != offer)
            {
                resources.release(offer);
            }
            final HandshakeException wrapped = new HandshakeException(
                HandshakeException.Reason.RESOURCES, "subscriber set-up failed: " + ex, ex);
            sendReject(transport, wrapped);
            throw wrapped;
        }
    }

    private void receive(final MessageTransport transport, final short expectedType) throws HandshakeException
    {
        HandshakeSteps.receive(transport, in, reject, stepTimeoutMs, expectedType, "publisher");
    }

    private void sendReject(final MessageTransport transport, final HandshakeException ex)
    {
        HandshakeSteps.sendReject(transport, out, reject, ex);
    }
}
