package io.verbus.media.rdma.protocol;

import org.agrona.ExpandableArrayBuffer;
import org.agrona.concurrent.UnsafeBuffer;

import static io.verbus.media.rdma.protocol.HandshakeException.Reason.AUTHENTICATION_FAILED;
import static io.verbus.media.rdma.protocol.HandshakeException.Reason.CLOSED;
import static io.verbus.media.rdma.protocol.HandshakeException.Reason.PEER_REJECTED;
import static io.verbus.media.rdma.protocol.HandshakeException.Reason.RESOURCES;

/**
 * What both sides of the handshake hold and do the same way: the buffers, one flyweight per message and the two
 * nonces of the handshake in progress, and its steps: receive the next expected message (a REJECT from the peer
 * ends the handshake with its reason), sign a message and send it, verify the peer's proof, and tell the peer why
 * we end it. {@link PublisherHandshake} and {@link SubscriberHandshake} say only what each side sends and checks.
 * <p>
 * One instance per handshake object, reused for every connection it runs; not thread-safe.
 */
final class HandshakeSteps
{
    final UnsafeBuffer in = new UnsafeBuffer(new byte[HandshakeHeader.MAX_MESSAGE_LENGTH]);
    final ExpandableArrayBuffer out = new ExpandableArrayBuffer(HandshakeHeader.MAX_MESSAGE_LENGTH);
    final HelloFlyweight hello = new HelloFlyweight();
    final ChallengeFlyweight challenge = new ChallengeFlyweight();
    final ConnectFlyweight connect = new ConnectFlyweight();
    final AcceptFlyweight accept = new AcceptFlyweight();
    final byte[] clientNonce = new byte[HandshakeHeader.NONCE_LENGTH];
    final byte[] serverNonce = new byte[HandshakeHeader.NONCE_LENGTH];
    /** The HELLO of the handshake in progress, as the subscriber sent it: every proof covers it. */
    private final byte[] helloBytes = new byte[HelloFlyweight.LENGTH];
    private final RejectFlyweight reject = new RejectFlyweight();
    private final HandshakeAuthenticator authenticator;
    private final long stepTimeoutMs;
    private final String peerName;

    /**
     * @param stepTimeoutMs how long each message may take to arrive whole.
     * @param peerName      how a rejection by the peer names it, e.g. {@code "publisher"}.
     */
    HandshakeSteps(final HandshakeAuthenticator authenticator, final long stepTimeoutMs, final String peerName)
    {
        this.authenticator = authenticator;
        this.stepTimeoutMs = stepTimeoutMs;
        this.peerName = peerName;
    }

    /** Keeps the HELLO at the start of {@code buffer} (sent or received) for the proofs of this handshake. */
    void keepHello(final org.agrona.DirectBuffer buffer)
    {
        buffer.getBytes(0, helloBytes);
    }

    /** Fills {@code nonce} ({@link #clientNonce} or {@link #serverNonce}) with fresh random bytes. */
    void nextNonce(final byte[] nonce)
    {
        authenticator.nextNonce(nonce);
    }

    /**
     * Receives one message into {@link #in} and validates its header against {@code expectedType}.
     *
     * @throws HandshakeException PEER_REJECTED with the peer's reason and text, or the validator's reason.
     */
    void receive(final MessageTransport transport, final short expectedType) throws HandshakeException
    {
        final int length = transport.receive(in, stepTimeoutMs);
        final short type = HandshakeValidator.validateHeader(in, 0, length, expectedType);
        if (HandshakeHeader.REJECT_TYPE == type)
        {
            reject.wrap(in, 0);
            final HandshakeException.Reason peerReason = HandshakeException.Reason.fromCode(reject.reasonCode());
            throw HandshakeException.rejectedByPeer(peerReason,
                peerName + " rejected (" + peerReason + "): " + reject.text(length));
        }
    }

    /** Signs the message of {@code type} written in {@link #out} and sends it. */
    void signAndSend(final MessageTransport transport, final short type) throws HandshakeException
    {
        authenticator.sign(label(type), clientNonce, serverNonce, helloBytes, out, 0, proofOffset(type));
        transport.send(out, 0, HandshakeHeader.expectedLength(type));
    }

    /**
     * Receives the message of {@code type} into {@link #in} and checks its proof.
     *
     * @throws HandshakeException AUTHENTICATION_FAILED when the peer does not know the shared secret, or as
     *                            {@link #receive}.
     */
    void receiveSigned(final MessageTransport transport, final short type) throws HandshakeException
    {
        receive(transport, type);
        verify(type);
    }

    /**
     * Checks the proof of the message of {@code type} received in {@link #in}.
     *
     * @throws HandshakeException AUTHENTICATION_FAILED when the peer does not know the shared secret.
     */
    void verify(final short type) throws HandshakeException
    {
        if (!authenticator.verify(label(type), clientNonce, serverNonce, helloBytes, in, 0, proofOffset(type)))
        {
            throw new HandshakeException(AUTHENTICATION_FAILED,
                HandshakeHeader.typeName(type) + ".proof does not match the shared secret");
        }
    }

    /**
     * Ends a failed handshake: a {@link HandshakeException} stays as it is, anything else (the media's resources
     * failing) becomes RESOURCES with {@code setUpFailure} and its text; the peer is told why with a REJECT.
     * The caller releases what it had set up for the peer first.
     *
     * @return the failure to throw.
     */
    HandshakeException fail(final MessageTransport transport, final Exception ex, final String setUpFailure)
    {
        final HandshakeException failure = ex instanceof HandshakeException handshakeFailure ?
            handshakeFailure : new HandshakeException(RESOURCES, setUpFailure + ex, ex);
        sendReject(transport, failure);
        return failure;
    }

    /**
     * Sends a REJECT carrying {@code ex}'s reason, unless the peer rejected first or the link is closed. A failure to
     * send is dropped: the peer is gone, and the caller logs the original failure.
     */
    private void sendReject(final MessageTransport transport, final HandshakeException ex)
    {
        if (ex.reason() == PEER_REJECTED || ex.reason() == CLOSED)
        {
            return;
        }
        try
        {
            final int length = reject.wrap(out, 0).encode(ex.reason(), ex.detail());
            transport.send(out, 0, length);
        }
        catch (final HandshakeException ignore)
        {
            // the peer is gone; the caller logs the original failure
        }
    }

    private static byte[] label(final short type)
    {
        return switch (type)
        {
            case HandshakeHeader.CHALLENGE_TYPE -> HandshakeAuthenticator.CHALLENGE_LABEL;
            case HandshakeHeader.CONNECT_TYPE -> HandshakeAuthenticator.CONNECT_LABEL;
            case HandshakeHeader.ACCEPT_TYPE -> HandshakeAuthenticator.ACCEPT_LABEL;
            default -> throw new IllegalArgumentException("unsigned message " + HandshakeHeader.typeName(type));
        };
    }

    private static int proofOffset(final short type)
    {
        return switch (type)
        {
            case HandshakeHeader.CHALLENGE_TYPE -> ChallengeFlyweight.PROOF_OFFSET;
            case HandshakeHeader.CONNECT_TYPE -> ConnectFlyweight.PROOF_OFFSET;
            case HandshakeHeader.ACCEPT_TYPE -> AcceptFlyweight.PROOF_OFFSET;
            default -> throw new IllegalArgumentException("unsigned message " + HandshakeHeader.typeName(type));
        };
    }
}
