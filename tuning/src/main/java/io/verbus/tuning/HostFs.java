package io.verbus.tuning;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * Read-only view of a host's {@code /sys} and {@code /proc} under an injectable root, so every check runs the same
 * against the live machine ({@code /}) and against a fake tree in a test.
 * <p>
 * Every read is unprivileged and forgiving: a file that is absent or unreadable reads as empty, because the report
 * must describe a host, never crash on one. Callers decide what an absent file means.
 */
public final class HostFs
{
    private static final Path LIVE_ROOT = Path.of("/");

    private final Path root;

    /**
     * @param root directory that stands for {@code /}: {@code /} itself on a real host, a fake tree in tests.
     */
    public HostFs(final Path root)
    {
        if (!Files.isDirectory(root))
        {
            throw new IllegalArgumentException("host root is not a directory: " + root);
        }
        this.root = root.toAbsolutePath().normalize();
    }

    /**
     * @return the live host.
     */
    public static HostFs live()
    {
        return new HostFs(LIVE_ROOT);
    }

    public Path root()
    {
        return root;
    }

    /**
     * @param absolutePath a host path such as {@code /sys/class/infiniband}.
     * @return where that path lives under this root.
     */
    public Path resolve(final String absolutePath)
    {
        if (!absolutePath.startsWith("/"))
        {
            throw new IllegalArgumentException("host path must be absolute: " + absolutePath);
        }
        return root.resolve(absolutePath.substring(1));
    }

    public boolean exists(final String absolutePath)
    {
        return Files.exists(resolve(absolutePath));
    }

    public boolean isDirectory(final String absolutePath)
    {
        return Files.isDirectory(resolve(absolutePath));
    }

    /**
     * @param absolutePath file to read.
     * @return the whole file with surrounding whitespace removed, or empty when absent or unreadable.
     */
    public Optional<String> read(final String absolutePath)
    {
        try
        {
            return Optional.of(Files.readString(resolve(absolutePath), StandardCharsets.UTF_8).strip());
        }
        catch (final IOException | RuntimeException ex)
        {
            // sysfs attributes may be absent, root-only, or fail with EINVAL (unused GID slots): all mean "unknown".
            return Optional.empty();
        }
    }

    /**
     * @param absolutePath file to read.
     * @return its lines, or an empty list when absent or unreadable.
     */
    public List<String> readLines(final String absolutePath)
    {
        try
        {
            return Files.readAllLines(resolve(absolutePath), StandardCharsets.UTF_8);
        }
        catch (final IOException | RuntimeException ex)
        {
            return List.of();
        }
    }

    /**
     * @param absolutePath directory to list.
     * @return names of its entries sorted naturally (cpu2 before cpu10), or empty when absent.
     */
    public List<String> list(final String absolutePath)
    {
        final Path dir = resolve(absolutePath);
        if (!Files.isDirectory(dir))
        {
            return List.of();
        }

        try (Stream<Path> entries = Files.list(dir))
        {
            final List<String> names = new ArrayList<>();
            entries.forEach((entry) -> names.add(entry.getFileName().toString()));
            names.sort(HostFs::compareNatural);
            return names;
        }
        catch (final IOException | RuntimeException ex)
        {
            return List.of();
        }
    }

    /**
     * @param absolutePath a symbolic link such as {@code /sys/class/net/eth0/device/driver}.
     * @return the last name of the path the link resolves to, or empty when it does not resolve.
     */
    public Optional<String> linkTargetName(final String absolutePath)
    {
        try
        {
            final Path target = resolve(absolutePath).toRealPath();
            final Path name = target.getFileName();
            return null == name ? Optional.empty() : Optional.of(name.toString());
        }
        catch (final IOException | RuntimeException ex)
        {
            return Optional.empty();
        }
    }

    /**
     * Compares names so that embedded numbers sort by value: {@code state2 < state10}, {@code cpu9 < cpu10}.
     */
    static int compareNatural(final String a, final String b)
    {
        int i = 0;
        int j = 0;
        while (i < a.length() && j < b.length())
        {
            final char ca = a.charAt(i);
            final char cb = b.charAt(j);
            if (Character.isDigit(ca) && Character.isDigit(cb))
            {
                final int startA = i;
                final int startB = j;
                while (i < a.length() && Character.isDigit(a.charAt(i)))
                {
                    i++;
                }
                while (j < b.length() && Character.isDigit(b.charAt(j)))
                {
                    j++;
                }
                final String numberA = a.substring(startA, i).replaceFirst("^0+(?=.)", "");
                final String numberB = b.substring(startB, j).replaceFirst("^0+(?=.)", "");
                final int byLength = Integer.compare(numberA.length(), numberB.length());
                if (byLength != 0)
                {
                    return byLength;
                }
                final int byDigits = numberA.compareTo(numberB);
                if (byDigits != 0)
                {
                    return byDigits;
                }
            }
            else
            {
                if (ca != cb)
                {
                    return Character.compare(ca, cb);
                }
                i++;
                j++;
            }
        }
        return Integer.compare(a.length() - i, b.length() - j);
    }
}
