package io.verbus.common;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The rules themselves; bus-core's and the shm provider's tests check that their dirs follow them.
 */
class OwnerOnlyFilesTest
{
    @TempDir
    Path tempDir;

    @Test
    void shouldCreateADirectoryAndItsParentsWithTheDirectoryForTheOwnerOnly() throws Exception
    {
        final Path dir = OwnerOnlyFiles.ensureDirectory(tempDir.resolve("a").resolve("dir"), "test dir");
        assertEquals("rwx------", mode(dir));
        final Path file = Files.createFile(dir.resolve("file"), OwnerOnlyFiles.fileAttribute());
        assertEquals("rw-------", mode(file));
    }

    @Test
    void shouldCloseAnExistingDirectoryOfOursToGroupAndOthers() throws Exception
    {
        final Path dir = Files.createDirectory(tempDir.resolve("open"));
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        OwnerOnlyFiles.ensureDirectory(dir, "test dir");
        assertEquals("rwx------", mode(dir));
    }

    @Test
    void shouldRefuseAFileWhereADirectoryIsExpected() throws Exception
    {
        final Path file = Files.createFile(tempDir.resolve("not-a-dir"));
        final IllegalStateException ex =
            assertThrows(IllegalStateException.class, () -> OwnerOnlyFiles.ensureDirectory(file, "test dir"));
        assertTrue(ex.getMessage().contains("is not a directory"), ex.getMessage());
    }

    private static String mode(final Path path) throws Exception
    {
        return PosixFilePermissions.toString(Files.getPosixFilePermissions(path));
    }
}
