package io.verbus.common;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The system's default huge pages as {@code /proc/meminfo} reports them: the size {@code MAP_HUGETLB} and an
 * unqualified hugetlbfs mount use, and how many of them are free.
 */
public final class HugePages
{
    private static final Path MEMINFO = Path.of("/proc/meminfo");
    /** What x86-64 (and aarch64 with 4 KiB base pages) use by default, assumed where the kernel does not say. */
    private static final long COMMON_PAGE_BYTES = 2L << 20;
    /** Read once: the default size is fixed at boot ({@code hugepagesz=}), unlike the count of free pages. */
    private static final long DEFAULT_PAGE_BYTES = readDefaultPageBytes();

    private HugePages()
    {
    }

    /** @return the default huge page size ({@code Hugepagesize}), or 2 MiB if unknown. */
    public static long defaultPageBytes()
    {
        return DEFAULT_PAGE_BYTES;
    }

    /** @return free default huge pages ({@code HugePages_Free}), 0 if unknown. */
    public static long freePages()
    {
        return Math.max(0, meminfoValue("HugePages_Free:"));
    }

    private static long readDefaultPageBytes()
    {
        final long kilobytes = meminfoValue("Hugepagesize:");
        return kilobytes > 0 ? kilobytes * 1024 : COMMON_PAGE_BYTES;
    }

    private static long meminfoValue(final String key)
    {
        try
        {
            for (final String line : Files.readAllLines(MEMINFO))
            {
                if (line.startsWith(key))
                {
                    return Long.parseLong(line.substring(key.length()).replace("kB", "").trim());
                }
            }
        }
        catch (final IOException | RuntimeException ignore)
        {
            // no procfs: no huge pages known
        }
        return -1;
    }
}
