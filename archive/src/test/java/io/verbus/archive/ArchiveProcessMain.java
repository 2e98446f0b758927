package io.verbus.archive;

import io.aeron.archive.ArchivingMediaDriver;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.TimeUnit;

/**
 * An Aeron Archive in a process of its own, for tests that kill it: {@code ArchiveProcessMain <archive-dir>
 * <aeron-dir>} launches it on those dirs (keeping what the archive dir holds), prints {@code READY}, and runs until
 * killed or stdin closes. A launch refused because the previous archive's mark file is still live is retried.
 */
public final class ArchiveProcessMain
{
    private ArchiveProcessMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        final ArchiveConnection.Context context = new ArchiveConnection.Context()
            .archiveDir(args[0])
            .aeronDir(args[1])
            .idleStrategy("backoff");
        context.conclude();
        final long deadlineNs = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        ArchiveConnection connection = null;
        while (null == connection)
        {
            try
            {
                connection = ArchiveConnection.connect(context.copy());
            }
            catch (final RuntimeException ex)
            {
                if (System.nanoTime() > deadlineNs)
                {
                    throw ex;
                }
                System.out.println("RETRY " + ex.getMessage());
                Thread.sleep(500);
            }
        }
        try (ArchiveConnection ignored = connection)
        {
            System.out.println("READY " + ArchivingMediaDriver.class.getSimpleName());
            System.out.flush();
            final BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            while (null != in.readLine())
            {
                // runs until stdin closes or the process is killed
            }
        }
    }
}
