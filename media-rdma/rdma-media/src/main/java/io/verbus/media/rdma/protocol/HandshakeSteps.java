package io.verbus.media.rdma.protocol;

import org.agrona.MutableDirectBuffer;

import static io.verbus.media.rdma.protocol.HandshakeException.Reason.CLOSED;
import static io.verbus.media.rdma.protocol.HandshakeException.Reason.PEER_REJECTED;

/**
 * The two steps both sides of the handshake take the same way: receive the next expected message (a REJECT from
 * the peer ends the handshake with its reason), and tell the peer why we end it.
 */
final class HandshakeSteps
{
    private HandshakeSteps()
    {
    }

    /**
     * Receives one message into {@code in} and validates its header against {@code expectedType}.
     *
     * @param peerName how the failure names the other side, e.g. {@code "publisher"}.
     * @throws HandshakeException PEER_REJECTED with the peer's reason and text, or the validator's reason.
     */
    static void receive(
        final MessageTransport transport,
        final MutableDirectBuffer in,
        final RejectFlyweight reject,
        final long stepTimeoutMs,
        final short expectedType,
        final String peerName) throws HandshakeException
    {
        final int length = transport.receive(in, stepTimeoutMs);
        final short type = HandshakeValidator.validateHeader(in, 0, length, expectedType);
        if (HandshakeHeader.REJECT_TYPE == type)
        {
            reject.wrap(in, 0);
            throw new HandshakeException(PEER_REJECTED, peerName + " rejected (" +
                HandshakeException.Reason.fromCode(reject.reasonCode()) + "): " + reject.text(length));
        }
    }

    /**
     * Sends a REJECT carrying {@code ex}'s reason, unless the peer rejected first or the link is closed. A failure to
     * send is dropped: the peer is gone, and the caller logs the original failure.
     */
    static void sendReject(
        final MessageTransport transport,
        final MutableDirectBuffer out,
        final RejectFlyweight reject,
        final HandshakeException ex)
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
}
