package io.verbus.media.rdma;

import io.verbus.Publication;
import io.verbus.ThreadingMode;
import io.verbus.Verbus;

import java.io.FileInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Child JVM for {@link RdmaControlPortAttackTest}: an rdma publication whose process has used up its file
 * descriptors but for a few, so that connections to its control port make {@code accept} fail with EMFILE.
 * Prints "PORT n", then "READY" once the descriptors are used up; gives them back on "RELEASE" on stdin and exits
 * on end of input.
 */
public final class ControlEndpointMain
{
    private static final int SPARE_FDS = 12;

    private ControlEndpointMain()
    {
    }

    public static void main(final String[] args) throws Exception
    {
        try (Verbus verbus = Verbus.launch(new Verbus.Context().dir(args[0]).threadingMode(ThreadingMode.SHARED)
            .idleStrategy("sleeping")))
        {
            final Publication publication = verbus.addPublication(args[1], Integer.parseInt(args[2]));
            System.out.println("PORT " + RdmaVerbusTest.controlPort(verbus.countersReader()));
            System.out.flush();

            final List<FileInputStream> hogs = new ArrayList<>();
            try
            {
                for (int i = 0; i < 1_000_000; i++)
                {
                    hogs.add(new FileInputStream("/dev/null"));
                }
            }
            catch (final IOException expected)
            {
                // no descriptor left
            }
            for (int i = 0; i < SPARE_FDS && !hogs.isEmpty(); i++)
            {
                hogs.removeLast().close();
            }
            System.out.println("READY " + hogs.size());
            System.out.flush();

            final java.io.BufferedReader in =
                new java.io.BufferedReader(new java.io.InputStreamReader(System.in));
            String line;
            while (null != (line = in.readLine()))
            {
                if ("RELEASE".equals(line))
                {
                    for (final FileInputStream hog : hogs)
                    {
                        hog.close();
                    }
                    hogs.clear();
                    System.out.println("RELEASED");
                    System.out.flush();
                }
            }
            publication.close();
        }
    }
}
