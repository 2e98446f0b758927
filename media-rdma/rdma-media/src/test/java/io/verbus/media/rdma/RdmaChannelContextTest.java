package io.verbus.media.rdma;

import io.verbus.fabric.FabricContext;
import io.verbus.media.MediaContext;
import io.verbus.media.rdma.protocol.HandshakeAuthenticator;
import org.agrona.concurrent.UnsafeBuffer;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.Arrays;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

class RdmaChannelContextTest
{
    private static final byte[] NONCE = new byte[16];

    @Test
    void shouldBoundEachHandshakeStepByTheChannelTimeoutInMilliseconds()
    {
        final RdmaChannelContext context = new RdmaChannelContext(new MediaContext(),
            RdmaChannelParams.parse("rdma:endpoint=127.0.0.1:40123|timeout=250ms"), new FabricContext(), secret());

        assertEquals(250, context.stepTimeoutMs());
    }

    @Test
    void shouldKeepItsOwnCopyOfTheSecret()
    {
        final byte[] secret = secret();
        final RdmaChannelContext context = new RdmaChannelContext(new MediaContext(),
            RdmaChannelParams.parse("rdma:endpoint=127.0.0.1:40123"), new FabricContext(), secret);
        final byte[] expected = proof(new HandshakeAuthenticator(secret));

        Arrays.fill(secret, (byte)0);

        assertArrayEquals(expected, proof(context.newAuthenticator()));
    }

    private static byte[] secret()
    {
        return "a-secret-of-enough-length".getBytes(StandardCharsets.US_ASCII);
    }

    private static byte[] proof(final HandshakeAuthenticator authenticator)
    {
        final UnsafeBuffer buffer = new UnsafeBuffer(new byte[64]);
        authenticator.sign(HandshakeAuthenticator.CONNECT_LABEL, NONCE, NONCE, NONCE, buffer, 0, 32);
        final byte[] proof = new byte[32];
        buffer.getBytes(32, proof);
        return proof;
    }
}
