package io.verbus.media.rdma;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.atomic.AtomicBoolean;

import io.verbus.media.rdma.protocol.HandshakeAuthenticator;

/**
 * Where the shared secret of the handshake comes from, first match wins: the channel's {@code secret-file},
 * the system property {@value #SECRET_FILE_PROP_NAME}, the system property {@value #SECRET_PROP_NAME}, the
 * environment variable {@value #SECRET_ENV_NAME}; otherwise a built-in development secret with one WARN line
 * (any process with the same build can then connect: fine on a laptop, never in production).
 */
public final class RdmaSecret
{
    public static final String SECRET_FILE_PROP_NAME = "verbus.rdma.secret.file";
    public static final String SECRET_PROP_NAME = "verbus.rdma.secret";
    public static final String SECRET_ENV_NAME = "VERBUS_RDMA_SECRET";

    private static final byte[] DEVELOPMENT_SECRET =
        "verbus-development-secret-do-not-use-in-production".getBytes(StandardCharsets.US_ASCII);
    private static final AtomicBoolean WARNED = new AtomicBoolean();

    private RdmaSecret()
    {
    }

    /**
     * @param params the channel's parameters (for {@code secret-file}).
     * @return the secret bytes, at least {@link HandshakeAuthenticator#MIN_SECRET_LENGTH} long.
     * @throws IllegalArgumentException when a configured secret is unreadable or too short, naming its source.
     */
    public static byte[] resolve(final RdmaChannelParams params)
    {
        if (null != params.secretFile())
        {
            return fromFile(Path.of(params.secretFile()), "channel key 'secret-file'");
        }
        final String file = System.getProperty(SECRET_FILE_PROP_NAME);
        if (null != file && !file.isBlank())
        {
            return fromFile(Path.of(file), "system property " + SECRET_FILE_PROP_NAME);
        }
        final String property = System.getProperty(SECRET_PROP_NAME);
        if (null != property && !property.isEmpty())
        {
            return checked(property.getBytes(StandardCharsets.UTF_8), "system property " + SECRET_PROP_NAME);
        }
        final String env = System.getenv(SECRET_ENV_NAME);
        if (null != env && !env.isEmpty())
        {
            return checked(env.getBytes(StandardCharsets.UTF_8), "environment variable " + SECRET_ENV_NAME);
        }
        if (WARNED.compareAndSet(false, true))
        {
            System.getLogger(RdmaSecret.class.getName()).log(System.Logger.Level.WARNING,
                "rdma media: no shared secret configured (" + SECRET_FILE_PROP_NAME + ", " + SECRET_PROP_NAME + ", " +
                SECRET_ENV_NAME + " or channel key secret-file); using the built-in development secret, which " +
                "authenticates nobody");
        }
        return DEVELOPMENT_SECRET.clone();
    }

    private static byte[] fromFile(final Path path, final String source)
    {
        try
        {
            final String text = Files.readString(path, StandardCharsets.UTF_8).strip();
            return checked(text.getBytes(StandardCharsets.UTF_8), source + " (" + path + ")");
        }
        catch (final IOException ex)
        {
            throw new UncheckedIOException("rdma secret: cannot read " + path + " named by " + source, ex);
        }
    }

    private static byte[] checked(final byte[] secret, final String source)
    {
        if (secret.length < HandshakeAuthenticator.MIN_SECRET_LENGTH)
        {
            throw new IllegalArgumentException("rdma secret from " + source + " is " + secret.length +
                " bytes; at least " + HandshakeAuthenticator.MIN_SECRET_LENGTH + " are required");
        }
        return secret;
    }
}
