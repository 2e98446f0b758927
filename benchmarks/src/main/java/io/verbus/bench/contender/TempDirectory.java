package io.verbus.bench.contender;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * A uniquely named directory for one contender's shared-memory files, in /dev/shm when it exists (so log buffers
 * are memory, not disk), deleted on close. Unique names keep concurrent runs and tests apart.
 */
public final class TempDirectory implements AutoCloseable
{
    private static final Path SHM = Path.of("/dev/shm");

    private final Path path;

    private TempDirectory(final Path path)
    {
        this.path = path;
    }

    /**
     * @param prefix of the directory's name.
     * @return a new empty directory.
     * @throws IOException when it cannot be created.
     */
    public static TempDirectory create(final String prefix) throws IOException
    {
        final Path parent = Files.isDirectory(SHM) && Files.isWritable(SHM) ?
            SHM : Path.of(System.getProperty("java.io.tmpdir"));
        return new TempDirectory(Files.createTempDirectory(parent, prefix));
    }

    public Path path()
    {
        return path;
    }

    @Override
    public void close()
    {
        try (Stream<Path> files = Files.walk(path))
        {
            files.sorted(Comparator.reverseOrder()).forEach(file -> file.toFile().delete());
        }
        catch (final IOException ignore)
        {
            // already gone: nothing to clean
        }
    }
}
