package io.verbus.media.rdma;

import io.verbus.media.rdma.protocol.HandshakeAuthenticator;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Where the shared secret of the handshake comes from, first match wins: the channel's {@code secret-file},
 * the system property {@value #SECRET_FILE_PROP_NAME}, the system property {@value #SECRET_PROP_NAME}, the
 * environment variable {@value #SECRET_ENV_NAME}; otherwise a built-in development secret with one WARN line
 * (any process with the same build can then connect: fine on a laptop, never in production), or, with
 * {@value #SECRET_REQUIRED_PROP_NAME}{@code =true} (or {@value #SECRET_REQUIRED_ENV_NAME}{@code =true}, or the
 * channel key {@code secret=required}), a refusal to start.
 * <p>
 * Prefer the file: a system property shows in {@code ps} and {@code /proc/<pid>/cmdline}, an environment variable
 * in {@code /proc/<pid>/environ}. A secret file must belong to this process's user (or root) and must not be
 * writable by its group or others (whoever can write it can choose the secret); one readable by them is accepted
 * with one WARN line. Every text source is trimmed of surrounding white space, so the same secret with or without a
 * trailing newline is the same secret wherever it comes from. A file that is not UTF-8 text is a binary key: its
 * bytes, as they are, are the secret ({@code head -c 32 /dev/urandom > secret}).
 */
public final class RdmaSecret
{
    public static final String SECRET_FILE_PROP_NAME = "verbus.rdma.secret.file";
    public static final String SECRET_PROP_NAME = "verbus.rdma.secret";
    public static final String SECRET_ENV_NAME = "VERBUS_RDMA_SECRET";
    /** {@code true}: refuse to start an rdma publication or subscription unless a secret is configured. */
    public static final String SECRET_REQUIRED_PROP_NAME = "verbus.rdma.secret.required";
    /** Environment twin of {@link #SECRET_REQUIRED_PROP_NAME}, for deployments that set the environment only. */
    public static final String SECRET_REQUIRED_ENV_NAME = "VERBUS_RDMA_SECRET_REQUIRED";
    private static final int ROOT_UID = 0;

    private static final byte[] DEVELOPMENT_SECRET =
        "verbus-development-secret-do-not-use-in-production".getBytes(StandardCharsets.US_ASCII);
    private static final AtomicBoolean WARNED = new AtomicBoolean();
    private static final Set<String> READABLE_WARNED = ConcurrentHashMap.newKeySet();

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
        if (null != property && !property.isBlank())
        {
            return checked(property.strip().getBytes(StandardCharsets.UTF_8), "system property " + SECRET_PROP_NAME);
        }
        final String env = System.getenv(SECRET_ENV_NAME);
        if (null != env && !env.isBlank())
        {
            return checked(env.strip().getBytes(StandardCharsets.UTF_8), "environment variable " + SECRET_ENV_NAME);
        }
        if (params.secretRequired() || isSecretRequired())
        {
            throw new IllegalStateException("rdma secret required (" + (params.secretRequired() ?
                "channel key secret=required" : SECRET_REQUIRED_PROP_NAME + "=true or " + SECRET_REQUIRED_ENV_NAME +
                "=true") + ") but none is configured: set the channel key secret-file or " +
                SECRET_FILE_PROP_NAME + " to a file of at least " + HandshakeAuthenticator.MIN_SECRET_LENGTH +
                " bytes, mode 0600, owned by this user (preferred: " + SECRET_PROP_NAME + " and " + SECRET_ENV_NAME +
                " are visible to other processes of the host)");
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

    /** @return true when {@link #SECRET_REQUIRED_PROP_NAME} or {@link #SECRET_REQUIRED_ENV_NAME} says so. */
    public static boolean isSecretRequired()
    {
        final String property = System.getProperty(SECRET_REQUIRED_PROP_NAME);
        final String value = null != property ? property : System.getenv(SECRET_REQUIRED_ENV_NAME);
        return null != value && Boolean.parseBoolean(value.strip());
    }

    /**
     * Refuses a secret file that someone else could have chosen: owned by another user (root excepted, as ssh
     * does), or writable by its group or others. Warns once when others can read it.
     */
    static void checkFileSafety(final Path path, final String source) throws IOException
    {
        final int ownerUid = (Integer)Files.getAttribute(path, "unix:uid");
        final int processUid = (Integer)Files.getAttribute(Path.of("/proc/self"), "unix:uid");
        if (ownerUid != processUid && ownerUid != ROOT_UID)
        {
            throw new IllegalArgumentException("rdma secret file " + path + " named by " + source +
                " is owned by uid " + ownerUid + ", not by this process's user (uid " + processUid +
                ") or root: refusing it (chown it, mode 0600)");
        }
        final Set<PosixFilePermission> permissions = Files.getPosixFilePermissions(path);
        if (permissions.contains(PosixFilePermission.GROUP_WRITE) ||
            permissions.contains(PosixFilePermission.OTHERS_WRITE))
        {
            throw new IllegalArgumentException("rdma secret file " + path + " named by " + source +
                " is writable by its group or others (" + PosixFilePermissions.toString(permissions) +
                "): refusing it (chmod 600 " + path + ")");
        }
        if ((permissions.contains(PosixFilePermission.GROUP_READ) ||
            permissions.contains(PosixFilePermission.OTHERS_READ)) && READABLE_WARNED.add(path.toString()))
        {
            System.getLogger(RdmaSecret.class.getName()).log(System.Logger.Level.WARNING,
                "rdma secret file " + path + " is readable by its group or others (" +
                PosixFilePermissions.toString(permissions) + "): anyone who can read it can connect; chmod 600 " +
                path);
        }
    }

    private static byte[] fromFile(final Path path, final String source)
    {
        try
        {
            checkFileSafety(path, source);
            final byte[] raw = Files.readAllBytes(path);
            try
            {
                final String text = StandardCharsets.UTF_8.newDecoder()
                    .onMalformedInput(CodingErrorAction.REPORT)
                    .onUnmappableCharacter(CodingErrorAction.REPORT)
                    .decode(ByteBuffer.wrap(raw)).toString().strip();
                return checked(text.getBytes(StandardCharsets.UTF_8), source + " (" + path + ")");
            }
            catch (final CharacterCodingException notText)
            {
                // A binary key (head -c 32 /dev/urandom): its bytes, untrimmed, are the secret.
                return checked(raw, source + " (" + path + ", binary)");
            }
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
