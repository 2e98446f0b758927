package io.verbus.tuning;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * Runs read-only host tools ({@code ethtool --show-eee}, {@code ibv_devinfo}, {@code dcb pfc show}) for the facts that
 * sysfs does not hold. Injectable so tests give canned output and a fake tree never consults the real host.
 */
@FunctionalInterface
public interface HostTools
{
    /** A host with no tools: every fact that needs one is reported as "not verified" with the command to run. */
    HostTools NONE = (command) -> Optional.empty();

    /**
     * @param command program and arguments; must only read.
     * @return the combined output when the program exists and exits 0 in time, else empty.
     */
    Optional<String> run(List<String> command);

    /**
     * @return tools on the {@code PATH} of this machine, each bounded by a timeout.
     */
    static HostTools system()
    {
        return new SystemHostTools();
    }

    /**
     * Tools found on the {@code PATH}, run with a bounded wait so a hung driver cannot hang the report.
     */
    final class SystemHostTools implements HostTools
    {
        private static final long TIMEOUT_MS = 5_000;

        public Optional<String> run(final List<String> command)
        {
            if (command.isEmpty() || findOnPath(command.getFirst()).isEmpty())
            {
                return Optional.empty();
            }

            try
            {
                final Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
                process.getOutputStream().close();
                final ByteArrayOutputStream output = new ByteArrayOutputStream();
                final Thread drainer = Thread.ofVirtual().start(() -> drain(process.getInputStream(), output));
                if (!process.waitFor(TIMEOUT_MS, TimeUnit.MILLISECONDS))
                {
                    process.destroyForcibly();
                    return Optional.empty();
                }
                drainer.join(TIMEOUT_MS);
                return process.exitValue() == 0 ?
                    Optional.of(output.toString(StandardCharsets.UTF_8)) : Optional.empty();
            }
            catch (final IOException ex)
            {
                return Optional.empty();
            }
            catch (final InterruptedException ex)
            {
                Thread.currentThread().interrupt();
                return Optional.empty();
            }
        }

        private static void drain(final InputStream input, final ByteArrayOutputStream output)
        {
            try (input)
            {
                input.transferTo(output);
            }
            catch (final IOException ignore)
            {
                // the process ended or was killed; what was read so far is kept
            }
        }

        private static Optional<Path> findOnPath(final String program)
        {
            final String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
            for (final String dir : (path + ":/usr/sbin:/sbin").split(":"))
            {
                if (!dir.isEmpty())
                {
                    final Path candidate = Path.of(dir, program);
                    if (Files.isExecutable(candidate))
                    {
                        return Optional.of(candidate);
                    }
                }
            }
            return Optional.empty();
        }
    }
}
