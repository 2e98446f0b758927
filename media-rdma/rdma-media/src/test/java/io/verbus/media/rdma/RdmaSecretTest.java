package io.verbus.media.rdma;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class RdmaSecretTest
{
    @TempDir
    Path dir;

    @Test
    void shouldReadTheSecretFileNamedByTheChannel() throws Exception
    {
        final Path file = dir.resolve("secret");
        Files.writeString(file, "  from-a-file-0123456789abcdef \n", StandardCharsets.UTF_8);
        final RdmaChannelParams params = RdmaChannelParams.parse(
            Map.of("endpoint", "127.0.0.1:1", "secret-file", file.toString()));
        assertArrayEquals("from-a-file-0123456789abcdef".getBytes(StandardCharsets.UTF_8), RdmaSecret.resolve(params));
    }

    @Test
    void shouldTakeAFileThatIsNotTextAsABinaryKeyByteForByte() throws Exception
    {
        final byte[] key = new byte[32];
        for (int i = 0; i < key.length; i++)
        {
            key[i] = (byte)(0xFF - 7 * i); // 0xFF is never UTF-8
        }
        key[0] = ' '; // white space at either end, which a text secret loses, stays in a binary one
        key[key.length - 1] = '\n';
        final Path file = dir.resolve("binary");
        Files.write(file, key);
        final RdmaChannelParams params = RdmaChannelParams.parse(
            Map.of("endpoint", "127.0.0.1:1", "secret-file", file.toString()));
        assertArrayEquals(key, RdmaSecret.resolve(params));
    }

    @Test
    void shouldRefuseAShortSecretNamingItsSource() throws Exception
    {
        final Path file = dir.resolve("short");
        Files.writeString(file, "tooshort", StandardCharsets.UTF_8);
        final RdmaChannelParams params = RdmaChannelParams.parse(
            Map.of("endpoint", "127.0.0.1:1", "secret-file", file.toString()));
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> RdmaSecret.resolve(params));
        assertTrue(ex.getMessage().contains("secret-file") && ex.getMessage().contains("at least 16"),
            ex.getMessage());
    }

    @Test
    void shouldFailClearlyWhenTheSecretFileIsMissing()
    {
        final RdmaChannelParams params = RdmaChannelParams.parse(
            Map.of("endpoint", "127.0.0.1:1", "secret-file", dir.resolve("absent").toString()));
        final RuntimeException ex = assertThrows(RuntimeException.class, () -> RdmaSecret.resolve(params));
        assertTrue(ex.getMessage().contains("cannot read"), ex.getMessage());
    }

    @Test
    void shouldRefuseToStartWithoutASecretWhenOneIsRequired()
    {
        final RdmaChannelParams params = RdmaChannelParams.parse(Map.of("endpoint", "127.0.0.1:1"));
        withProperties(Map.of(RdmaSecret.SECRET_REQUIRED_PROP_NAME, "true"), () ->
        {
            final IllegalStateException ex =
                assertThrows(IllegalStateException.class, () -> RdmaSecret.resolve(params));
            assertTrue(ex.getMessage().contains("required") && ex.getMessage().contains("none is configured"),
                ex.getMessage());
        });
        withProperties(Map.of(RdmaSecret.SECRET_REQUIRED_PROP_NAME, "true",
            RdmaSecret.SECRET_PROP_NAME, "a-configured-secret-0123456789"), () ->
            assertArrayEquals("a-configured-secret-0123456789".getBytes(StandardCharsets.UTF_8),
                RdmaSecret.resolve(params)));
    }

    @Test
    void shouldRefuseToAddAnRdmaPublicationWithoutASecretWhenOneIsRequired()
    {
        withProperties(Map.of(RdmaSecret.SECRET_REQUIRED_PROP_NAME, "true"), () ->
        {
            try (io.verbus.Verbus verbus = io.verbus.Verbus.launch(new io.verbus.Verbus.Context()
                .dir(dir.resolve("verbus").toString()).idleStrategy("sleeping")))
            {
                final IllegalStateException ex = assertThrows(IllegalStateException.class,
                    () -> verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm", 1));
                assertTrue(ex.getMessage().contains(RdmaSecret.SECRET_REQUIRED_PROP_NAME), ex.getMessage());
                assertThrows(IllegalStateException.class,
                    () -> verbus.addSubscription("rdma:endpoint=127.0.0.1:1|provider=shm", 1));
            }
        });
    }

    @Test
    void shouldRefuseAnRdmaChannelWithSecretRequiredWhenNoSecretIsConfigured() throws Exception
    {
        final Path file = dir.resolve("secret");
        Files.writeString(file, "a-channel-secret-0123456789", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        withProperties(Map.of(), () ->
        {
            try (io.verbus.Verbus verbus = io.verbus.Verbus.launch(new io.verbus.Verbus.Context()
                .dir(dir.resolve("verbus").toString()).idleStrategy("sleeping")))
            {
                final IllegalStateException ex = assertThrows(IllegalStateException.class,
                    () -> verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm|secret=required", 1));
                assertTrue(ex.getMessage().contains("secret=required") && ex.getMessage().contains("secret-file") &&
                    ex.getMessage().contains(RdmaSecret.SECRET_FILE_PROP_NAME), ex.getMessage());
                final IllegalStateException subscriptionEx = assertThrows(IllegalStateException.class,
                    () -> verbus.addSubscription("rdma:endpoint=127.0.0.1:1|provider=shm|secret=required", 1));
                assertTrue(subscriptionEx.getMessage().contains("secret=required"), subscriptionEx.getMessage());

                // With a secret it starts, and a bad value of the key names the key.
                verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm|secret=required|secret-file=" + file,
                    2).close();
                final IllegalArgumentException badValue = assertThrows(IllegalArgumentException.class,
                    () -> verbus.addPublication("rdma:endpoint=127.0.0.1:0|provider=shm|secret=yes", 3));
                assertTrue(badValue.getMessage().contains("'secret'"), badValue.getMessage());
            }
        });
    }

    @Test
    void shouldTrimThePropertyAsTheFileIsTrimmed() throws Exception
    {
        final Path file = dir.resolve("secret");
        Files.writeString(file, "same-secret-0123456789abcdef\n", StandardCharsets.UTF_8);
        final byte[] fromFile = RdmaSecret.resolve(RdmaChannelParams.parse(
            Map.of("endpoint", "127.0.0.1:1", "secret-file", file.toString())));
        withProperties(Map.of(RdmaSecret.SECRET_PROP_NAME, "same-secret-0123456789abcdef\n"), () ->
            assertArrayEquals(
                fromFile, RdmaSecret.resolve(RdmaChannelParams.parse(Map.of("endpoint", "127.0.0.1:1")))));
    }

    @Test
    void shouldRefuseASecretFileWritableByGroupOrOthers() throws Exception
    {
        for (final String mode : new String[]{ "rw-rw----", "rw----rw-", "rw-rw-rw-" })
        {
            final Path file = dir.resolve("writable-" + mode);
            Files.writeString(file, "a-good-length-secret-0123456789", StandardCharsets.UTF_8);
            Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString(mode));
            final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
                () -> RdmaSecret.resolve(RdmaChannelParams.parse(
                    Map.of("endpoint", "127.0.0.1:1", "secret-file", file.toString()))));
            assertTrue(ex.getMessage().contains("writable by its group or others") &&
                ex.getMessage().contains(file.toString()), ex.getMessage());
        }
    }

    @Test
    void shouldRefuseASecretFileOwnedByAnotherUser() throws Exception
    {
        org.junit.jupiter.api.Assumptions.assumeTrue(io.verbus.test.ProcessUser.isRoot(), "chown needs root");
        final Path file = dir.resolve("foreign");
        Files.writeString(file, "a-good-length-secret-0123456789", StandardCharsets.UTF_8);
        Files.setPosixFilePermissions(file, java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        Files.setAttribute(file, "unix:uid", 65534);
        final IllegalArgumentException ex = assertThrows(IllegalArgumentException.class,
            () -> RdmaSecret.resolve(RdmaChannelParams.parse(
                Map.of("endpoint", "127.0.0.1:1", "secret-file", file.toString()))));
        assertTrue(ex.getMessage().contains("owned by uid 65534"), ex.getMessage());
    }

    private static void withProperties(final Map<String, String> properties, final Runnable body)
    {
        final java.util.Map<String, String> previous = new java.util.HashMap<>();
        for (final String name : new String[]{ RdmaSecret.SECRET_REQUIRED_PROP_NAME, RdmaSecret.SECRET_PROP_NAME,
            RdmaSecret.SECRET_FILE_PROP_NAME })
        {
            previous.put(name, System.getProperty(name));
            System.clearProperty(name);
        }
        properties.forEach(System::setProperty);
        try
        {
            body.run();
        }
        finally
        {
            previous.forEach((name, value) ->
            {
                if (null == value)
                {
                    System.clearProperty(name);
                }
                else
                {
                    System.setProperty(name, value);
                }
            });
        }
    }
}
