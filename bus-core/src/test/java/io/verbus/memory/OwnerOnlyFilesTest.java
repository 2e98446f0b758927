package io.verbus.memory;

import io.verbus.TestSupport;
import io.verbus.Verbus;
import io.verbus.test.ProcessUser;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The Verbus dir is rwx------ and its files rw-------; a dir that belongs to another user is refused, one of ours
 * that is open to others is closed to them.
 */
class OwnerOnlyFilesTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldCreateTheDirAndItsFilesForTheOwnerOnly() throws Exception
    {
        final Path dir = tempDir.resolve("verbus");
        try (Verbus ignored = Verbus.launch(TestSupport.context(tempDir)))
        {
            assertEquals("rwx------", mode(dir));
            assertEquals("rw-------", mode(dir.resolve("counters.dat")));
            final MemoryMapper mapper = new MemoryMapper(dir, null, false);
            try (MappedRegion region = mapper.map("kept", 4096, true))
            {
                assertEquals("rw-------", mode(region.path()), "a mapped log holds every message");
            }
        }
    }

    @Test
    void shouldCloseAnExistingDirOfOursToGroupAndOthers() throws Exception
    {
        final Path dir = Files.createDirectories(tempDir.resolve("verbus"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        try (Verbus ignored = Verbus.launch(TestSupport.context(tempDir)))
        {
            assertEquals("rwx------", mode(dir));
        }
    }

    @Test
    void shouldRefuseADirThatBelongsToAnotherUser() throws Exception
    {
        assumeTrue(ProcessUser.isRoot(), "chown needs root");
        final Path dir = Files.createDirectories(tempDir.resolve("verbus"));
        Files.setAttribute(dir, "unix:uid", 65534);
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> Verbus.launch(TestSupport.context(tempDir)).close());
        assertTrue(ex.getMessage().contains("belongs to uid 65534") && ex.getMessage().contains(dir.toString()),
            ex.getMessage());
    }

    @Test
    void shouldRefuseASymbolicLinkToADirOfAnotherUser() throws Exception
    {
        assumeTrue(ProcessUser.isRoot(), "chown needs root");
        final Path foreign = Files.createDirectories(tempDir.resolve("foreign"));
        Files.setAttribute(foreign, "unix:uid", 65534);
        Files.createSymbolicLink(tempDir.resolve("verbus"), foreign);
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> Verbus.launch(TestSupport.context(tempDir)).close());
        assertTrue(ex.getMessage().contains("belongs to uid 65534"), ex.getMessage());
    }

    static String mode(final Path path) throws Exception
    {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }
}
