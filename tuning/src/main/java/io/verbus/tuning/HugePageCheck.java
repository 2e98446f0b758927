package io.verbus.tuning;

import java.util.ArrayList;
import java.util.List;

/**
 * {@code mem.hugepages-2M}, {@code mem.hugepages-1G}, {@code mem.hugetlbfs}: whether the rings can be backed by
 * hugepages (fewer TLB misses, and for RDMA fewer translation entries on the NIC). Without them bus-core falls back
 * to /dev/shm with a warning, so a shortfall is a WARN, not a FAIL.
 */
public final class HugePageCheck implements HostCheck
{
    static final String ITEM_2M = "mem.hugepages-2M";
    static final String ITEM_1G = "mem.hugepages-1G";
    static final String ITEM_MOUNT = "mem.hugetlbfs";
    static final String DIR_2M = "/sys/kernel/mm/hugepages/hugepages-2048kB";
    static final String DIR_1G = "/sys/kernel/mm/hugepages/hugepages-1048576kB";
    static final long PAGE_2M = 2L * 1024 * 1024;
    static final long PAGE_1G = 1024L * 1024 * 1024;

    public List<CheckResult> check(final CheckContext context)
    {
        final HostFs fs = context.fs();
        final RingSizing rings = context.rings();
        final Pool pool2M = Pool.read(fs, DIR_2M, PAGE_2M);
        final Pool pool1G = Pool.read(fs, DIR_1G, PAGE_1G);
        final boolean covered2M = pool2M.covers(rings.bytes());
        final boolean covered1G = pool1G.covers(rings.bytes());

        final List<CheckResult> results = new ArrayList<>();
        if (!pool2M.present)
        {
            results.add(CheckResult.absent(ITEM_2M, "no " + DIR_2M + ": the kernel has no 2 MiB hugepages",
                "none; rings use /dev/shm"));
        }
        else if (covered2M)
        {
            results.add(CheckResult.ok(ITEM_2M, pool2M.describe() + " covers the rings' " + rings.describe()));
        }
        else
        {
            final long wanted = pool2M.total + pool2M.pagesShort(rings.bytes());
            results.add(CheckResult.runnable(Status.WARN, ITEM_2M,
                pool2M.describe() + " short of the rings' " + rings.describe() +
                (covered1G ? " (1 GiB pages cover them)" : ": rings fall back to /dev/shm"),
                List.of("echo " + wanted + " > " + DIR_2M + "/nr_hugepages")));
        }

        if (!pool1G.present)
        {
            results.add(CheckResult.absent(ITEM_1G,
                "no " + DIR_1G + ": the CPU or kernel offers no 1 GiB pages (cpu flag pdpe1gb)",
                "none; 2 MiB pages serve"));
        }
        else if (covered1G)
        {
            results.add(CheckResult.ok(ITEM_1G, pool1G.describe() + " covers the rings' " + rings.describe()));
        }
        else if (covered2M)
        {
            results.add(CheckResult.ok(ITEM_1G, pool1G.describe() + "; not needed, 2 MiB pages cover the rings"));
        }
        else if (pool2M.present && rings.bytes() < PAGE_1G)
        {
            results.add(CheckResult.ok(ITEM_1G, pool1G.describe() + "; not needed for rings under 1 GiB, " +
                "2 MiB pages serve (see " + ITEM_2M + ")"));
        }
        else
        {
            final long wanted = pool1G.total + pool1G.pagesShort(rings.bytes());
            // 1 GiB pages rarely allocate after boot (memory is fragmented by then): reserve them at boot.
            results.add(CheckResult.manual(Status.WARN, ITEM_1G,
                pool1G.describe() + " short of the rings' " + rings.describe(),
                Grub.addKernelParameters("hugepagesz=1G hugepages=" + wanted)));
        }

        results.add(mounts(context));
        return results;
    }

    private static CheckResult mounts(final CheckContext context)
    {
        final List<String> mountPoints = new ArrayList<>();
        for (final String line : context.fs().readLines("/proc/mounts"))
        {
            final String[] fields = line.split("\\s+");
            if (fields.length >= 3 && "hugetlbfs".equals(fields[2]))
            {
                mountPoints.add(fields[1] + (fields.length >= 4 && fields[3].contains("pagesize=") ?
                    " (" + fields[3].replaceAll(".*pagesize=([^,]+).*", "pagesize=$1") + ")" : ""));
            }
        }
        if (!mountPoints.isEmpty())
        {
            return CheckResult.ok(ITEM_MOUNT, "hugetlbfs mounted at " + String.join(", ", mountPoints));
        }
        return CheckResult.runnable(Status.WARN, ITEM_MOUNT,
            "no hugetlbfs mount in /proc/mounts: reserved hugepages cannot back the rings' files",
            List.of("mkdir -p /dev/hugepages && mount -t hugetlbfs -o pagesize=2M nodev /dev/hugepages"));
    }

    private static final class Pool
    {
        private final boolean present;
        private final long pageBytes;
        private final long total;
        private final long free;
        private final long reserved;

        private Pool(
            final boolean present, final long pageBytes, final long total, final long free, final long reserved)
        {
            this.present = present;
            this.pageBytes = pageBytes;
            this.total = total;
            this.free = free;
            this.reserved = reserved;
        }

        static Pool read(final HostFs fs, final String dir, final long pageBytes)
        {
            if (!fs.isDirectory(dir))
            {
                return new Pool(false, pageBytes, 0, 0, 0);
            }
            return new Pool(true, pageBytes,
                number(fs, dir + "/nr_hugepages"),
                number(fs, dir + "/free_hugepages"),
                number(fs, dir + "/resv_hugepages"));
        }

        private static long number(final HostFs fs, final String path)
        {
            try
            {
                return Math.max(0, Long.parseLong(fs.read(path).orElse("0")));
            }
            catch (final NumberFormatException ex)
            {
                return 0;
            }
        }

        /**
         * Pages promised to mappings but not yet faulted in are counted free by the kernel; they are not ours.
         */
        long available()
        {
            return Math.max(0, free - reserved);
        }

        boolean covers(final long bytes)
        {
            return present && available() * pageBytes >= bytes;
        }

        long pagesShort(final long bytes)
        {
            final long needed = (bytes + pageBytes - 1) / pageBytes;
            return Math.max(0, needed - available());
        }

        String describe()
        {
            return total + " reserved, " + available() + " free (" + Bytes.format(available() * pageBytes) + ")";
        }
    }
}
