package io.verbus.media.rdma.protocol;

import org.agrona.DirectBuffer;
import org.agrona.MutableDirectBuffer;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Proofs of knowledge of the shared secret: HMAC-SHA256 keyed by the secret over a label naming the
 * message, the subscriber's (client) nonce, the publisher's (server) nonce and every byte of the message
 * before the proof. Both nonces are fresh per handshake, so a recorded proof is useless in another
 * handshake; the message bytes are covered, so no field can be altered in flight.
 * <p>
 * One instance per thread ({@link Mac} is not thread-safe).
 */
public final class HandshakeAuthenticator
{
    public static final String ALGORITHM = "HmacSHA256";
    public static final int MIN_SECRET_LENGTH = 16;

    public static final byte[] CHALLENGE_LABEL = "verbus-rdma/2/challenge".getBytes(StandardCharsets.US_ASCII);
    public static final byte[] CONNECT_LABEL = "verbus-rdma/2/connect".getBytes(StandardCharsets.US_ASCII);
    public static final byte[] ACCEPT_LABEL = "verbus-rdma/2/accept".getBytes(StandardCharsets.US_ASCII);

    private final Mac mac;
    private final SecureRandom random = new SecureRandom();
    private final byte[] scratch = new byte[HandshakeHeader.MAX_MESSAGE_LENGTH];
    private final byte[] expected = new byte[HandshakeHeader.PROOF_LENGTH];
    private final byte[] received = new byte[HandshakeHeader.PROOF_LENGTH];

    public HandshakeAuthenticator(final byte[] secret)
    {
        if (null == secret || secret.length < MIN_SECRET_LENGTH)
        {
            throw new IllegalArgumentException(
                "rdma shared secret must be at least " + MIN_SECRET_LENGTH + " bytes");
        }
        try
        {
            mac = Mac.getInstance(ALGORITHM);
            mac.init(new SecretKeySpec(secret, ALGORITHM));
        }
        catch (final GeneralSecurityException ex)
        {
            throw new IllegalStateException("HMAC-SHA256 unavailable", ex);
        }
    }

    public void nextNonce(final byte[] nonce)
    {
        random.nextBytes(nonce);
    }

    /** Compute a proof over {@code buffer[offset, offset + proofOffset)} and write it at proofOffset. */
    public void sign(
        final byte[] label,
        final byte[] clientNonce,
        final byte[] serverNonce,
        final MutableDirectBuffer buffer,
        final int offset,
        final int proofOffset)
    {
        compute(label, clientNonce, serverNonce, buffer, offset, proofOffset, expected);
        buffer.putBytes(offset + proofOffset, expected);
    }

    /** Check the proof at proofOffset in constant time. */
    public boolean verify(
        final byte[] label,
        final byte[] clientNonce,
        final byte[] serverNonce,
        final DirectBuffer buffer,
        final int offset,
        final int proofOffset)
    {
        compute(label, clientNonce, serverNonce, buffer, offset, proofOffset, expected);
        buffer.getBytes(offset + proofOffset, received);
        return MessageDigest.isEqual(expected, received);
    }

    private void compute(
        final byte[] label,
        final byte[] clientNonce,
        final byte[] serverNonce,
        final DirectBuffer buffer,
        final int offset,
        final int length,
        final byte[] out)
    {
        mac.reset();
        mac.update(label);
        mac.update(clientNonce);
        mac.update(serverNonce);
        buffer.getBytes(offset, scratch, 0, length);
        mac.update(scratch, 0, length);
        try
        {
            mac.doFinal(out, 0);
        }
        catch (final javax.crypto.ShortBufferException ex)
        {
            throw new IllegalStateException(ex);
        }
    }
}
