package io.verbus.media.rdma;

import io.verbus.Subscription;
import io.verbus.TestSupport;
import io.verbus.Verbus;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.net.ServerSocket;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A subscription whose publisher cannot be reached says so: one line naming the endpoint and the cause (a host that
 * does not resolve, a port nobody listens on), not one per retry and not silence.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class RdmaUnreachableEndpointTest
{
    @TempDir
    Path dir;

    @Test
    void shouldLogOneLineNamingTheEndpointAndTheCause() throws Exception
    {
        final List<LogRecord> records = new CopyOnWriteArrayList<>();
        final Logger logger = Logger.getLogger("io.verbus.media.rdma");
        final Handler handler = new Handler()
        {
            public void publish(final LogRecord record)
            {
                records.add(record);
            }

            public void flush()
            {
            }

            public void close()
            {
            }
        };
        logger.addHandler(handler);
        final int closedPort;
        try (ServerSocket socket = new ServerSocket(0))
        {
            closedPort = socket.getLocalPort();
        }
        try (Verbus verbus = Verbus.launch(TestSupport.context(dir)))
        {
            final Subscription typo = verbus.addSubscription("rdma:endpoint=no-such-host.invalid:40123", 3001);
            final Subscription notUp = verbus.addSubscription("rdma:endpoint=127.0.0.1:" + closedPort, 3002);

            TestSupport.await("both causes logged",
                () -> 1 == count(records, Level.WARNING, "no-such-host.invalid:40123: host 'no-such-host.invalid' " +
                "does not resolve") && 1 == count(records, Level.INFO, "127.0.0.1:" + closedPort +
                ": nothing listens on port " + closedPort));
            // The subscriptions retry with a backoff of 50 ms doubling to 1 s: several retries in 2.5 s, no new line.
            TestSupport.sleep(2_500);
            assertEquals(1, count(records, Level.WARNING, "does not resolve"), records.toString());
            assertEquals(1, count(records, Level.INFO, "nothing listens on port"), records.toString());
            assertTrue(typo.hasNoImages() && notUp.hasNoImages());
        }
        finally
        {
            logger.removeHandler(handler);
        }
    }

    private static long count(final List<LogRecord> records, final Level level, final String text)
    {
        return records.stream().filter((r) -> r.getLevel() == level && r.getMessage().contains(text)).count();
    }
}
