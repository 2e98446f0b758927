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
 * message, the subscriber's (client) nonce, the publisher's (server) nonce, every byte of the HELLO that opened the
 * handshake (it carries no proof of its own) and every byte of the message before the proof. Both nonces are fresh
 * per handshake, so a recorded proof is useless in another handshake; the HELLO and the message bytes are covered,
 * so no field of either can be altered in flight (until protocol version 3 the HELLO's flags and group tag could).
 * <p>
 * One instance per thread ({@link Mac} is not thread-safe).
 */
public final class HandshakeAuthenticator
{
    public static final String ALGORITHM = "HmacSHA256";
    public static final int MIN_SECRET_LENGTH = 16;

    public static final byte[] CHALLENGE_LABEL = "verbus-rdma/3/challenge".getBytes(StandardCharsets.US_ASCII);
    public static final byte[] CONNECT_LABEL = "verbus-rdma/3/connect".getBytes(StandardCharsets.US_ASCII);
    public static final byte[] ACCEPT_LABEL = "verbus-rdma/3/accept".getBytes(StandardCharsets.US_ASCII);

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

    /**
     * Compute a proof over the HELLO and {@code buffer[offset, offset + proofOffset)} and write it at proofOffset.
     *
     * @param hello the HELLO of this handshake, as the subscriber sent it ({@link HelloFlyweight#LENGTH} bytes).
     */
    public void sign(
        final byte[] label,
        final byte[] clientNonce,
        final byte[] serverNonce,
        final byte[] hello,
        final MutableDirectBuffer buffer,
        final int offset,
        final int proofOffset)
    {
        compute(label, clientNonce, serverNonce, hello, buffer, offset, proofOffset, expected);
        buffer.putBytes(offset + proofOffset, expected);
    }

    /**
     * Check the proof at proofOffset in constant time.
     *
     * @param hello the HELLO of this handshake, as this side sent or received it.
     */
    public boolean verify(
        final byte[] label,
        final byte[] clientNonce,
        final byte[] serverNonce,
        final byte[] hello,
        final DirectBuffer buffer,
        final int offset,
        final int proofOffset)
    {
        compute(label, clientNonce, serverNonce, hello, buffer, offset, proofOffset, expected);
        buffer.getBytes(offset + proofOffset, received);
        return MessageDigest.isEqual(expected, received);
    }

    private void compute(
        final byte[] label,
        final byte[] clientNonce,
        final byte[] serverNonce,
        final byte[] hello,
        final DirectBuffer buffer,
        final int offset,
        final int length,
        final byte[] out)
    {
        mac.reset();
        mac.update(label);
        mac.update(clientNonce);
        mac.update(serverNonce);
        mac.update(hello);
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
