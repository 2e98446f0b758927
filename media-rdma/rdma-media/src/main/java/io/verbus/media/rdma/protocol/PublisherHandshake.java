package io.verbus.media.rdma.protocol;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.verbus.media.rdma.protocol.HandshakeException.Reason.AUTHENTICATION_FAILED;

/**
 * The publisher's side of the control-connection handshake: HELLO in, CHALLENGE out, CONNECT in, ACCEPT out,
 * READY in. Nothing is registered for a subscriber until its CONNECT carried a valid proof and every field
 * passed {@link HandshakeValidator}; if anything fails after that, what was registered is released.
 * <p>
 * One instance per control thread; {@link #run} is called once per connection.
 */
public final class PublisherHandshake
{
    /** What the publication tells a subscriber about its log. */
    public record Shape(int sessionId, int streamId, int initialTermId, int termLength, int mtuLength, int providerId)
    {
    }

    /** What an authenticated subscriber offers: its ring, its position block, its QP. */
    public record SubscriberOffer(
        long ringAddress, long ringLength, int ringRkey, long counterAddress, int counterRkey,
        QpInfoCodec.QpInfo qp, boolean hasGroupTag, long groupTag, String peer)
    {
    }

    /** What the publisher registered for that subscriber; the attachment is the media's own state. */
    public record Admission(long statusAddress, int statusRkey, long joinPosition, QpInfoCodec.QpInfo qp,
        Object attachment)
    {
    }

    /** The media's side: called only with authenticated, validated offers. */
    public interface Resources
    {
        /** Register the status slot, create and connect the QP, pick the join position. */
        Admission admit(SubscriberOffer offer) throws HandshakeException;

        /** Undo {@link #admit} when the handshake fails after it. */
        void release(Admission admission);
    }

    private final HandshakeAuthenticator authenticator;
    private final Shape shape;
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

    public PublisherHandshake(final HandshakeAuthenticator authenticator, final Shape shape, final long stepTimeoutMs)
    {
        this.authenticator = authenticator;
        this.shape = shape;
        this.stepTimeoutMs = stepTimeoutMs;
    }

    /**
     * Run the handshake on one connection.
     *
     * @return the admission, once the subscriber said READY.
     * @throws HandshakeException after sending the peer a REJECT (when the connection still works).
     */
    public Admission run(final MessageTransport transport, final Resources resources) throws HandshakeException
    {
        Admission admission = null;
        try
        {
            receive(transport, HandshakeHeader.HELLO_TYPE);
            hello.wrap(in, 0);
            HandshakeValidator.validateHello(hello, shape.streamId());
            hello.getClientNonce(clientNonce);
            final boolean hasGroupTag = 0 != (hello.flags() & HelloFlyweight.GROUP_TAG_FLAG);
            final long groupTag = hello.groupTag();

            authenticator.nextNonce(serverNonce);
            challenge.wrap(out, 0).writeHeader()
                .sessionId(shape.sessionId())
                .streamId(shape.streamId())
                .initialTermId(shape.initialTermId())
                .termLength(shape.termLength())
                .mtuLength(shape.mtuLength())
                .providerId(shape.providerId())
                .serverNonce(serverNonce);
            authenticator.sign(HandshakeAuthenticator.CHALLENGE_LABEL, clientNonce, serverNonce, out, 0,
                ChallengeFlyweight.PROOF_OFFSET);
            transport.send(out, 0, ChallengeFlyweight.LENGTH);

            receive(transport, HandshakeHeader.CONNECT_TYPE);
            if (!authenticator.verify(HandshakeAuthenticator.CONNECT_LABEL, clientNonce, serverNonce, in, 0,
                ConnectFlyweight.PROOF_OFFSET))
            {
                throw new HandshakeException(AUTHENTICATION_FAILED, "CONNECT.proof does not match the shared secret");
            }
            connect.wrap(in, 0);
            final QpInfoCodec.QpInfo subscriberQp = new QpInfoCodec.QpInfo();
            HandshakeValidator.validateConnect(connect, shape.termLength(), subscriberQp);

            admission = resources.admit(new SubscriberOffer(
                connect.ringAddress(), connect.ringLength(), connect.ringRkey(), connect.counterAddress(),
                connect.counterRkey(), subscriberQp, hasGroupTag, groupTag, transport.peer()));

            accept.wrap(out, 0).writeHeader()
                .statusAddress(admission.statusAddress())
                .statusLength(SlotLayout.BLOCK_LENGTH)
                .statusRkey(admission.statusRkey())
                .joinPosition(admission.joinPosition())
                .qpInfo(admission.qp());
            authenticator.sign(HandshakeAuthenticator.ACCEPT_LABEL, clientNonce, serverNonce, out, 0,
                AcceptFlyweight.PROOF_OFFSET);
            transport.send(out, 0, AcceptFlyweight.LENGTH);

            receive(transport, HandshakeHeader.READY_TYPE);
            return admission;
        }
        catch (final HandshakeException ex)
        {
            if (null != admission)
            {
                resources.release(admission);
            }
            sendReject(transport, ex);
            throw ex;
        }
        catch (final RuntimeException ex)
        {
            if (null != admission)
            {
                resources.release(admission);
            }
            final HandshakeException wrapped = new HandshakeException(
                HandshakeException.Reason.RESOURCES, "admission failed: " + ex, ex);
            sendReject(transport, wrapped);
            throw wrapped;
        }
    }

    private void receive(final MessageTransport transport, final short expectedType) throws HandshakeException
    {
        HandshakeSteps.receive(transport, in, reject, stepTimeoutMs, expectedType, "peer");
    }

    private void sendReject(final MessageTransport transport, final HandshakeException ex)
    {
        HandshakeSteps.sendReject(transport, out, reject, ex);
    }
}
