package io.verbus.media.rdma;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

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
}
